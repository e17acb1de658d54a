"""Shared fixtures: a ManualClock and a limiter on it."""

from __future__ import annotations

import pytest

from ratekeeper import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()
