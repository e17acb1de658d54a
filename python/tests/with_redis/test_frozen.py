"""A frozen server (SIGSTOP: connections open, nothing answered) costs
every call at most the store's timeout — "the longest one decision may
take, reconnection included" — blocking or async, on the first call and on
every one after, which must open a new connection to the frozen server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Callable

from ratekeeper import (
    FixedWindow,
    RedisLimiter,
    RedisStore,
    RedisTimeoutError,
    RedisUnavailableError,
)
from with_redis.servers import PrivateRedis

# Large enough that a loaded two-core machine's scheduling stays well
# within the 20% allowed.
TIMEOUT = 0.2
RETRY_INTERVAL = 0.02
BOUND = 1.2 * TIMEOUT
CALLS = 5


def test_with_the_server_frozen_every_call_returns_within_its_timeout(
    private_redis: PrivateRedis,
) -> None:
    store = RedisStore.connect(
        private_redis.url, timeout=TIMEOUT, connect_timeout=1.0, retry_interval=RETRY_INTERVAL
    )
    limiter = RedisLimiter(store, "frozen", FixedWindow(10**9, 1e6))
    loop = asyncio.new_event_loop()

    def run(make: Callable[[], Awaitable[object]]) -> Callable[[], object]:
        async def call() -> object:
            return await make()

        return lambda: loop.run_until_complete(call())

    calls: dict[str, Callable[[], object]] = {
        "check": lambda: limiter.check("blocking"),
        "peek": lambda: limiter.peek("peek"),
        "check_async": run(lambda: limiter.check_async("async")),
        "peek_async": run(lambda: limiter.peek_async("async-peek")),
    }
    try:
        for call in calls.values():
            call()  # each kind's connection open, the script loaded
        private_redis.freeze()
        waited = dict.fromkeys(calls, 0)
        for round in range(CALLS):
            for kind, call in calls.items():
                start = time.monotonic()
                try:
                    call()
                    raise AssertionError(f"{kind}, call {round}: answered by a frozen server")
                except RedisTimeoutError:
                    took = time.monotonic() - start
                    waited[kind] += took >= 0.9 * TIMEOUT
                except RedisUnavailableError:  # marked down: no wait at all
                    took = time.monotonic() - start
                assert took <= BOUND, f"{kind}, call {round}: {took:.3f} s (timeout {TIMEOUT} s)"
                # Past the retry interval, and anything that may lead to it.
                time.sleep(TIMEOUT + RETRY_INTERVAL + 0.1)
        # The bound held on calls that did wait for the server, the first
        # and later (reconnecting) ones.
        for kind, count in waited.items():
            assert count >= 3, f"{kind}: only {count} of {CALLS} calls waited for the server"
    finally:
        private_redis.thaw()
        loop.close()
