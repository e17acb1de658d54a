"""Peek (what the next check would answer) and remove/reset on every Redis
limiter: a peek takes nothing and writes nothing; a remove or reset gives
the whole limit back."""

from __future__ import annotations

import asyncio
import subprocess

import pytest

from ratekeeper import (
    FixedWindow,
    Gcra,
    InvalidArgumentError,
    Limiter,
    RedisConcurrencyLimiter,
    RedisDividedLimiter,
    RedisLeasedLimiter,
    RedisLimiter,
    RedisRateLimiter,
    RedisRateLimiterState,
    RedisStore,
    SlidingLog,
    SlidingWindowCounter,
    TokenBucket,
)

# Each admits 3 at once and gives nothing back within a test.
TEMPLATES: list[Limiter] = [
    Gcra(2, 1, 60.0),
    TokenBucket(0.001, 3),
    FixedWindow(3, 1e6),
    SlidingWindowCounter(3, 1e6),
    SlidingLog(3, 1e6),
]


def cli(url: str, *args: str) -> str:
    return subprocess.run(
        ["redis-cli", "-u", url, *args], check=True, capture_output=True, text=True, timeout=10
    ).stdout.strip()


def snapshot(url: str, name: str) -> list[tuple[str, str, int]]:
    """The keys of limiter ``name``, each with its value (``DUMP``) and TTL."""
    # Glob: the test's brackets match themselves as any one character.
    pattern = "*" + name.translate(str.maketrans("[]?*:", "????*")) + "*"
    keys = sorted(k for k in cli(url, "--scan", "--pattern", pattern).split("\n") if k)
    return [(k, cli(url, "--no-raw", "DUMP", k), int(cli(url, "PTTL", k))) for k in keys]


def assert_unchanged(
    before: list[tuple[str, str, int]], after: list[tuple[str, str, int]], what: str
) -> None:
    """Nothing written: the same keys and values, no expiry pushed later."""
    assert [(k, v) for k, v, _ in after] == [(k, v) for k, v, _ in before], what
    for (key, _, ttl), (_, _, ttl_after) in zip(before, after):
        assert ttl_after <= ttl, f"{what}: {key}'s expiry was pushed"


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: type(t).__name__)
def test_exact_peek_is_the_next_check_and_remove_restores_the_limit(
    store: RedisStore, redis_url: str, name: str, template: Limiter
) -> None:
    limiter = RedisLimiter(store, name, template)
    for _ in range(5):
        assert limiter.peek("k").allowed
    assert snapshot(redis_url, name) == [], "a peek on a missing key created it"
    for k in range(5):
        before = snapshot(redis_url, name)
        peeked = limiter.peek("k")
        for _ in range(5):
            limiter.peek("k")
        assert_unchanged(before, snapshot(redis_url, name), "peek")
        checked = limiter.check("k")
        assert (peeked.allowed, peeked.remaining) == (checked.allowed, checked.remaining)
        assert checked.allowed == (k < 3)
    assert limiter.remove("k") is True
    assert snapshot(redis_url, name) == [], "every key of the state is deleted"
    # This process's remembered refusal went too: the whole limit at once.
    assert [limiter.check("k").allowed for _ in range(4)] == [True, True, True, False]
    assert limiter.remove("never-seen") is False
    with pytest.raises(InvalidArgumentError):
        limiter.remove("x" * 257)


def test_exact_async_forms(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, FixedWindow(2, 1e6))

    async def run() -> None:
        assert (await limiter.check_async(b"k")).allowed
        assert (await limiter.peek_async(b"k")).remaining == 0
        assert await limiter.remove_async("k") is True
        assert await limiter.remove_async("k") is False

    asyncio.run(run())
    assert limiter.check("k").remaining == 1


@pytest.mark.parametrize("template", TEMPLATES[:2], ids=lambda t: type(t).__name__)
def test_leased_peek_counts_the_lease_and_remove_drops_it(
    store: RedisStore, redis_url: str, name: str, template: Limiter
) -> None:
    limiter = RedisLeasedLimiter(store, name, template, batch=2, lease=60.0)
    assert limiter.peek("k").allowed
    assert snapshot(redis_url, name) == [], "a peek created a key"
    for k in range(5):
        before = snapshot(redis_url, name)
        peeked = limiter.peek("k")
        assert_unchanged(before, snapshot(redis_url, name), "peek")
        checked = limiter.check("k")
        assert (peeked.allowed, peeked.remaining) == (checked.allowed, checked.remaining)
        assert checked.allowed == (k < 3)
    assert limiter.remove("k") is True
    assert limiter.check("k").allowed  # leases 2, spends 1
    assert limiter.remove("k") is True
    # The whole limit again, and no unit of the dropped lease.
    assert sum(limiter.check("k").allowed for _ in range(6)) == 3

    async def run() -> None:
        assert (await limiter.peek_async("k")).allowed is False
        assert await limiter.remove_async("k") is True

    asyncio.run(run())


def test_divided_peek_and_remove_work_on_the_local_share(store: RedisStore, name: str) -> None:
    with RedisDividedLimiter(
        store, name, FixedWindow(3, 1e6), heartbeat_ttl=5.0, max_keys=10
    ) as limiter:
        for k in range(5):
            peeked = limiter.peek("k")
            for _ in range(5):
                limiter.peek("k")
            checked = limiter.check("k")
            assert (peeked.allowed, peeked.remaining) == (checked.allowed, checked.remaining)
            assert checked.allowed == (k < 3)
        assert limiter.remove("k") is True
        assert limiter.remove("k") is False
        assert limiter.check("k").allowed


def test_guava_inspect_writes_nothing_and_reset_starts_afresh(
    store: RedisStore, redis_url: str, name: str
) -> None:
    # A permit every 10 s: the waits below are far from any machine's delays.
    limiter = RedisRateLimiter.create(store, name, 0.1)
    fresh = limiter.inspect()
    assert isinstance(fresh, RedisRateLimiterState)
    assert (fresh.rate, fresh.max_permits) == (0.1, 0.1)
    assert fresh.stored_permits < 0.05
    assert limiter.acquire() == 0.0
    before = snapshot(redis_url, name)
    for _ in range(5):
        assert 5.0 < limiter.inspect().time_until_available <= 10.0
    assert_unchanged(before, snapshot(redis_url, name), "inspect")
    assert limiter.reset() is True
    assert limiter.reset() is False
    assert limiter.inspect().time_until_available == 0.0
    assert snapshot(redis_url, name) == [], "inspect created the state"

    async def run() -> None:
        assert (await limiter.inspect_async()).stored_permits == 0.0
        assert await limiter.reset_async() is False

    asyncio.run(run())
    assert limiter.acquire() == 0.0


def test_concurrency_peek_is_the_next_acquire_and_reset_frees_every_permit(
    store: RedisStore, redis_url: str, name: str
) -> None:
    pool = RedisConcurrencyLimiter(store, name, 2, lease_ttl=60.0)
    assert pool.peek(2).allowed
    assert snapshot(redis_url, name) == [], "a peek created a key"
    leases = []
    for k in range(3):
        before = snapshot(redis_url, name)
        peeked = pool.peek()
        assert_unchanged(before, snapshot(redis_url, name), "peek")
        decision, lease = pool.try_acquire()
        assert (peeked.allowed, peeked.remaining) == (decision.allowed, decision.remaining)
        assert decision.allowed == (k < 2)
        if lease is not None:
            leases.append(lease)
    assert pool.reset() is True
    assert pool.held() == 0
    assert pool.release(leases[0]) is False

    async def run() -> None:
        assert (await pool.peek_async(2)).allowed
        assert await pool.reset_async() is False

    asyncio.run(run())
