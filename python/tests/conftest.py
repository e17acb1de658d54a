"""Shared fixtures: a ManualClock and a limiter on it.

The tests of the limiters shared through Redis need a server:
``tests/redis/with-redis`` starts one and names it in
``RATEKEEPER_REDIS_URL`` (with ``--cluster``, a three-master cluster, also in
``RATEKEEPER_REDIS_CLUSTER``), and ``scripts/test.sh`` runs
``tests/with_redis`` and ``tests/with_redis_cluster`` under it. Without one, those folders are not
collected (there is nothing they could test), so a plain ``pytest`` runs
everything else.
"""

from __future__ import annotations

import os

import pytest

from ratekeeper import ManualClock

collect_ignore: list[str] = []
if not os.environ.get("RATEKEEPER_REDIS_URL") or os.environ.get("RATEKEEPER_REDIS_CLUSTER"):
    # No server, or the URL is a cluster node (which plain connections
    # cannot use for every key).
    collect_ignore.append("with_redis")
if not os.environ.get("RATEKEEPER_REDIS_CLUSTER"):
    collect_ignore.append("with_redis_cluster")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()
