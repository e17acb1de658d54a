"""A store that finds its master through Redis Sentinel
(``tests/redis/with-redis --sentinel``: a master, one replica, three
sentinels), and follows a failover when the master is killed. The failover
test kills the master: it runs last."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid

import pytest

from ratekeeper import (
    ArgumentTypeError,
    FixedWindow,
    InvalidArgumentError,
    RedisLimiter,
    RedisStore,
    RedisUnavailableError,
)


def sentinels() -> list[str]:
    urls = os.environ.get("RATEKEEPER_REDIS_SENTINELS")
    if not urls:
        pytest.fail("run under tests/redis/with-redis --sentinel")
    return urls.split(",")


MASTER = os.environ.get("RATEKEEPER_REDIS_MASTER_NAME", "")


@pytest.fixture
def name() -> str:
    return f"sentinel-{uuid.uuid4().hex[:8]}"


def test_connects_by_master_name_and_decides(name: str) -> None:
    with RedisStore.connect_sentinel(sentinels(), MASTER, timeout=1.0) as store:
        assert store.master_name == MASTER
        assert store.cluster is False
        assert store.urls == tuple(sentinels())
        assert f", master_name='{MASTER}', timeout=1.0>" in repr(store)
        limiter = RedisLimiter(store, name, FixedWindow(3, 1e6))
        assert [limiter.check("k").allowed for _ in range(4)] == [True, True, True, False]


def test_connect_sentinel_async(name: str) -> None:
    async def main() -> list[bool]:
        store = await RedisStore.connect_sentinel_async(sentinels(), MASTER, timeout=1.0)
        limiter = RedisLimiter(store, name, FixedWindow(1, 1e6))
        allowed = [(await limiter.check_async("k")).allowed for _ in range(2)]
        store.close()
        return allowed

    assert asyncio.run(main()) == [True, False]


def test_bad_arguments_are_typed_errors() -> None:
    with pytest.raises(InvalidArgumentError, match="master_name"):
        RedisStore.connect_sentinel(sentinels(), "")
    with pytest.raises(ArgumentTypeError, match="master_name"):
        RedisStore.connect_sentinel(sentinels(), 7)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="sentinels"):
        RedisStore.connect_sentinel([], MASTER)
    with pytest.raises(InvalidArgumentError, match="master_name"):
        RedisStore(sentinels(), cluster=True, master_name=MASTER)


def test_a_master_no_sentinel_knows_is_unavailable() -> None:
    with pytest.raises(RedisUnavailableError, match="no master named"):
        RedisStore.connect_sentinel(sentinels(), "no-such-master")


def test_follows_a_failover_with_the_limit_kept(name: str) -> None:
    """Runs last: kills the master. Decisions come back from the replica
    within the sentinels' failover plus a second; meanwhile fail-closed
    refuses, and no call takes past the timeout."""
    timeout = 0.1
    store = RedisStore.connect_sentinel(sentinels(), MASTER, timeout=timeout, retry_interval=0.2)
    limited = RedisLimiter(store, name, FixedWindow(100, 1e6), when_unavailable="fail_closed")
    for _ in range(40):
        assert limited.check("k").allowed
    time.sleep(0.2)  # the replica has them (it is sent each write at once)
    os.kill(int(os.environ["RATEKEEPER_REDIS_MASTER_PID"]), signal.SIGKILL)
    killed = time.monotonic()
    refused, slowest = 0, 0.0
    while True:
        started = time.monotonic()
        decision = limited.check("k")
        slowest = max(slowest, time.monotonic() - started)
        if decision.allowed:
            break
        refused += 1
        assert time.monotonic() - killed < 10.0, "no decision from the new master within 10 s"
        time.sleep(0.005)
    recovered = time.monotonic() - killed
    # Down-after 1 s, then the sentinels' election: about 2.3 s here.
    assert recovered < 1.0 + 3.0 + 1.0, f"recovered after {recovered:.2f} s"
    assert refused > 0, "the policy never decided"
    assert slowest <= timeout + 0.1, f"a call took {slowest:.3f} s"
    # The count survived the failover: 40 + 1 taken, 59 left.
    assert decision.remaining == 59
    assert limited.check("k").remaining == 58
    store.close()
