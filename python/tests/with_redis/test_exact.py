"""``RedisLimiter`` (exact mode): decides as one local limiter of its
template would, shared by every limiter of the same name; its arguments;
blocking calls release the GIL, the async ones never block the loop; many
threads and tasks never get more than the limit."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from typing import Any, Callable

import pytest

from ratekeeper import (
    ArgumentTypeError,
    CompositeLimiter,
    Decision,
    FixedWindow,
    Gcra,
    InvalidArgumentError,
    KeyedLimiter,
    LeakyBucketMeter,
    LeakyBucketQueue,
    Limiter,
    ManualClock,
    RateLimiter,
    RateLimitExceeded,
    RedisLimiter,
    RedisStore,
    SlidingLog,
    SlidingWindow,
    SlidingWindowCounter,
    TokenBucket,
    UnsupportedError,
)
from with_redis.servers import Heartbeat, PrivateRedis


def test_gcra_answers_as_cl_throttle(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, Gcra(29, 30, 60.0))  # 30 at once, then one per 2 s
    decisions = [limiter.check("user:42") for _ in range(31)]
    assert [d.allowed for d in decisions] == [True] * 30 + [False]
    assert [d.remaining for d in decisions[:30]] == list(range(29, -1, -1))
    assert {d.limit for d in decisions} == {30}
    refused = decisions[-1]
    # 2 s after the first admission (less what the 31 round trips took).
    assert 1.5 < refused.retry_after <= 2.0
    assert 59.5 < refused.reset_after <= 60.0
    assert limiter.check("user:43").allowed  # another key, its own limit


# Templates whose limit no test reaches by waiting: every answer of a burst
# is the local limiter's, at one instant.
TEMPLATES: dict[str, Callable[[ManualClock | None], Limiter]] = {
    "gcra": lambda c: Gcra(4, 5, 60.0, clock=c),
    "token_bucket": lambda c: TokenBucket(0.01, 5, clock=c),
    "fixed_window": lambda c: FixedWindow(5, 1e6, clock=c),
    "sliding_window_counter": lambda c: SlidingWindowCounter(5, 1e6, clock=c),
    "sliding_log": lambda c: SlidingLog(5, 60.0, clock=c),
}


@pytest.mark.parametrize(("algorithm", "make"), TEMPLATES.items(), ids=list(TEMPLATES))
def test_every_algorithm_decides_as_the_local_one(
    algorithm: str, make: Callable[[ManualClock | None], Limiter], store: RedisStore, name: str
) -> None:
    shared = RedisLimiter(store, name, make(None))
    local = make(ManualClock())
    costs = [1, 2, 1, 3, 1, 1, 1, 6]
    got = [shared.check("k", cost) for cost in costs]
    want = [local.check(cost) for cost in costs]
    assert [(d.allowed, d.remaining, d.limit) for d in got] == [
        (d.allowed, d.remaining, d.limit) for d in want
    ]
    # A cost above the limit can never be admitted: refused at once, for ever.
    never = shared.check("k", 6)
    assert not never.allowed
    assert never.is_never
    assert never.retry_after == math.inf
    assert (shared.algorithm, shared.limit) == (algorithm, 5)


def test_peek_takes_nothing(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, FixedWindow(2, 1e6))
    assert limiter.peek("k").remaining == 1
    assert limiter.peek("k", 2).allowed
    assert [limiter.check("k").allowed for _ in range(3)] == [True, True, False]
    assert not limiter.peek("k").allowed


def test_limiters_of_one_name_share_and_names_and_keys_never_collide(
    store: RedisStore, name: str
) -> None:
    one = RedisLimiter(store, name, FixedWindow(3, 1e6))
    other = RedisLimiter(store, name, FixedWindow(3, 1e6))  # as in another process
    assert [one.check("k").allowed, other.check("k").allowed, one.check("k").allowed] == [True] * 3
    assert not other.check("k").allowed
    # Escaped names and keys: "a" + "b:c" is not "a:b" + "c", and braces
    # do not change the hash slot.
    assert RedisLimiter(store, f"{name}:a", FixedWindow(1, 1e6)).check("b:c").allowed
    assert RedisLimiter(store, f"{name}:a:b", FixedWindow(1, 1e6)).check("c").allowed
    assert RedisLimiter(store, f"{name}{{x}}", FixedWindow(1, 1e6)).check("}{k").allowed
    assert RedisLimiter(store, f"{name}{{x}}}}", FixedWindow(1, 1e6)).check("{k").allowed
    assert RedisLimiter(store, name, FixedWindow(3, 1e6)).check("é 🎉").allowed


def test_remembered_refusals_are_served_without_redis(private_redis: PrivateRedis) -> None:
    store = RedisStore.connect(private_redis.url, timeout=2.0)
    remembering = RedisLimiter(store, "r", Gcra(1, 1, 60.0))  # 2 at once, then 1 a minute
    forgetting = RedisLimiter(store, "f", Gcra(1, 1, 60.0), remember_refusals=False)
    for limiter in (remembering, forgetting):
        assert [limiter.check("k").allowed for _ in range(3)] == [True, True, False]
    private_redis.kill()
    # No round trip: the refusal stands while its retry-after runs.
    again = remembering.check("k")
    assert not again.allowed
    assert 59.0 < again.retry_after <= 60.0
    assert not remembering.check("k", 2).allowed  # a larger cost too
    with pytest.raises(ConnectionError):
        forgetting.check("k")


def test_attributes_and_repr(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, Gcra(9, 10, 1.0))
    assert (limiter.name, limiter.algorithm, limiter.limit) == (name, "gcra", 10)
    assert limiter.store is store
    assert (limiter.when_unavailable, limiter.remember_refusals, limiter.membership) == (
        "error",
        True,
        None,
    )
    assert repr(limiter) == (
        f"<RedisLimiter {name!r} Gcra(max_burst=9, count_per_period=10, period=1.0), "
        "when_unavailable='error'>"
    )
    closed = RedisLimiter(store, name, FixedWindow(1, 1.0), when_unavailable="fail_closed")
    assert closed.when_unavailable == "fail_closed"


@pytest.mark.parametrize(
    "template",
    [
        LeakyBucketMeter(2, 1, 1.0),
        LeakyBucketQueue(2, 1.0),
        SlidingWindow(2, 1.0, 2),
    ],
    ids=["leaky_bucket_meter", "leaky_bucket_queue", "sliding_window"],
)
def test_algorithms_without_a_script_are_unsupported(
    store: RedisStore, name: str, template: Limiter
) -> None:
    with pytest.raises(UnsupportedError, match="does not run in Redis"):
        RedisLimiter(store, name, template)


@pytest.mark.parametrize(
    ("kwargs", "argument", "kind"),
    [
        ({"store": "redis://127.0.0.1/"}, "store", ArgumentTypeError),
        ({"name": b"n"}, "name", ArgumentTypeError),
        ({"template": RateLimiter.create(1.0)}, "template", ArgumentTypeError),
        ({"template": KeyedLimiter(FixedWindow(1, 1.0), 10)}, "template", ArgumentTypeError),
        ({"template": None}, "template", ArgumentTypeError),
        ({"template": CompositeLimiter([FixedWindow(1, 1.0)])}, "template", ArgumentTypeError),
        ({"remember_refusals": 1}, "remember_refusals", ArgumentTypeError),
        ({"when_unavailable": "sometimes"}, "when_unavailable", InvalidArgumentError),
        ({"when_unavailable": 0}, "when_unavailable", ArgumentTypeError),
        ({"when_unavailable": "local_share"}, "membership", ArgumentTypeError),
        ({"max_keys": 10}, "max_keys", ArgumentTypeError),
    ],
)
def test_invalid_construction(
    store: RedisStore, name: str, kwargs: dict[str, Any], argument: str, kind: type[Exception]
) -> None:
    args: dict[str, Any] = {"store": store, "name": name, "template": FixedWindow(1, 1.0)}
    args.update({k: kwargs.pop(k) for k in list(kwargs) if k in args})
    with pytest.raises(kind, match=f"^invalid argument {argument} = ") as raised:
        RedisLimiter(args["store"], args["name"], args["template"], **kwargs)
    assert raised.value.argument == argument  # type: ignore[attr-defined]


def test_invalid_template_parameters_are_the_local_errors(store: RedisStore, name: str) -> None:
    with pytest.raises(InvalidArgumentError, match=r"^invalid argument limit = 0"):
        RedisLimiter(store, name, FixedWindow(0, 1.0))


@pytest.mark.parametrize(
    ("call", "argument", "kind"),
    [
        (lambda lim: lim.check(bytearray(b"k")), "key", ArgumentTypeError),
        (lambda lim: lim.check(42), "key", ArgumentTypeError),
        (lambda lim: lim.check(None), "key", ArgumentTypeError),
        (lambda lim: lim.check("k", -1), "cost", InvalidArgumentError),
        (lambda lim: lim.check("k", 1.5), "cost", ArgumentTypeError),
        (lambda lim: lim.check("k", 2**64), "cost", InvalidArgumentError),
        (lambda lim: lim.peek(1.5), "key", ArgumentTypeError),
        (lambda lim: lim.check("k" * 257), "key", InvalidArgumentError),
        (lambda lim: lim.peek(b"k" * 257), "key", InvalidArgumentError),
        (lambda lim: lim.peek("k", -1), "cost", InvalidArgumentError),
    ],
)
def test_invalid_calls_send_nothing(
    store: RedisStore,
    name: str,
    call: Callable[[Any], object],
    argument: str,
    kind: type[Exception],
) -> None:
    limiter = RedisLimiter(store, name, FixedWindow(1, 1e6))
    with pytest.raises(kind, match=f"^invalid argument {argument} = "):
        call(limiter)
    assert limiter.check("k").remaining == 0  # the whole limit was still there


def test_the_async_calls_check_their_arguments(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, FixedWindow(1, 1e6))
    with pytest.raises(ArgumentTypeError, match="key = 42"):
        asyncio.run(limiter.check_async(42))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="key = 257"):
        asyncio.run(limiter.check_async(b"k" * 257))
    with pytest.raises(InvalidArgumentError, match="cost = -1"):
        asyncio.run(limiter.peek_async("k", -1))
    with pytest.raises(RuntimeError, match="no running event loop"):
        limiter._check_future("k")


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda lim: lim.check("k"), id="check"),
        pytest.param(lambda lim: lim.peek("k"), id="peek"),
    ],
)
def test_a_blocking_call_releases_the_gil(
    private_redis: PrivateRedis, heartbeat: Heartbeat, call: Callable[[RedisLimiter], Decision]
) -> None:
    store = RedisStore.connect(private_redis.url, timeout=2.0)
    limiter = RedisLimiter(store, "gil", FixedWindow(5, 1e6))
    limiter.check("warm")
    private_redis.stall(0.4)
    start = time.monotonic()
    assert call(limiter).allowed
    end = time.monotonic()
    assert end - start >= 0.25  # it waited for the stalled server
    beats = heartbeat.between(start + 0.02, end - 0.02)
    # Held, the GIL would stop the heartbeat dead; released, it beats about
    # every ms, or less often on a loaded machine, but beats.
    assert beats >= 20, f"{beats} beats in {end - start:.3f} s"


def test_check_async_never_blocks_the_event_loop(private_redis: PrivateRedis) -> None:
    store = RedisStore.connect(private_redis.url, timeout=2.0)
    limiter = RedisLimiter(store, "loop", FixedWindow(5, 1e6))

    async def main() -> tuple[Decision, int, float]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        assert (await limiter.check_async("warm")).allowed
        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        private_redis.stall(0.4)  # blocks this thread 50 ms itself
        start = time.monotonic()
        decision = await limiter.check_async("k")
        elapsed = time.monotonic() - start
        task.cancel()
        return decision, ticks, elapsed

    decision, ticks, elapsed = asyncio.run(main())
    assert decision.allowed
    assert decision.remaining == 4
    assert elapsed >= 0.25
    assert ticks >= 0.3 * elapsed / 0.005, (ticks, elapsed)


def test_many_tasks_get_exactly_the_limit(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, Gcra(29, 30, 60.0), remember_refusals=False)

    async def main() -> list[Decision]:
        return await asyncio.gather(*(limiter.check_async("k") for _ in range(100)))

    decisions = asyncio.run(main())
    assert sum(d.allowed for d in decisions) == 30
    assert sorted(d.remaining for d in decisions if d.allowed) == list(range(30))


def test_many_threads_get_exactly_the_limit(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, Gcra(29, 30, 60.0))
    admitted = [0] * 8
    barrier = threading.Barrier(len(admitted))

    def hammer(i: int) -> None:
        barrier.wait()
        for _ in range(25):
            if limiter.check("k").allowed:
                admitted[i] += 1

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(len(admitted))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(admitted) == 30


def test_the_decorator_limits_per_key(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, FixedWindow(2, 1e6))
    calls: list[str] = []

    @limiter.limited(key=lambda user, item: f"user:{user}")
    def buy(user: str, item: str) -> str:
        calls.append(item)
        return item

    @limiter.limited("everyone", cost=2)
    async def browse() -> str:
        return "ok"

    assert (buy("ann", "a"), buy("ann", "b"), buy("bob", "c")) == ("a", "b", "c")
    with pytest.raises(RateLimitExceeded) as raised:
        buy("ann", "d")
    assert raised.value.decision is not None
    assert not raised.value.decision.allowed
    assert calls == ["a", "b", "c"]
    assert asyncio.run(browse()) == "ok"
    with pytest.raises(RateLimitExceeded):
        asyncio.run(browse())
    # A bad cost fails when decorating, not on the first call.
    with pytest.raises(InvalidArgumentError, match="cost = -1"):
        limiter.limited("k", cost=-1)
    with pytest.raises(ArgumentTypeError, match=r"cost = 1\.5"):
        limiter.limited("k", cost=1.5)  # type: ignore[call-overload]
    # A bare decorator would limit nothing: refused when decorating.
    with pytest.raises(ArgumentTypeError, match="key=") as bare:
        limiter.limited(buy)  # type: ignore[call-overload]
    assert bare.value.argument == "key"
