"""Fixtures of the Redis tests: the server ``tests/redis/with-redis``
started (``RATEKEEPER_REDIS_URL``), a store connected to it, a limiter
name no other test uses, a server of the test's own, a heartbeat thread."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ratekeeper import RedisStore
from with_redis.servers import Heartbeat, PrivateRedis


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = os.environ.get("RATEKEEPER_REDIS_URL")
    if not url:
        pytest.fail("run under tests/redis/with-redis: RATEKEEPER_REDIS_URL is not set")
    return url


@pytest.fixture(scope="session")
def store(redis_url: str) -> RedisStore:
    # A timeout far above a round trip: a loaded CI machine must not make
    # decisions fail.
    return RedisStore.connect(redis_url, timeout=2.0, connect_timeout=2.0)


@pytest.fixture
def name(request: pytest.FixtureRequest) -> str:
    """A limiter name of this test alone (the server is shared)."""
    return f"{request.node.name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path).start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def heartbeat() -> Iterator[Heartbeat]:
    beat = Heartbeat().start()
    try:
        yield beat
    finally:
        beat.stop()
