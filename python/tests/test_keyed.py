"""`KeyedLimiter`: one limiter per key from a template, in bounded memory;
keys as str or bytes; its errors."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from typing import Any, Callable

import pytest

from ratekeeper import (
    ArgumentTypeError,
    AtCapacity,
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
    SlidingLog,
    SlidingWindow,
    SlidingWindowCounter,
    TokenBucket,
)


def test_one_limiter_per_key(clock: ManualClock) -> None:
    users = KeyedLimiter(FixedWindow(5, 60.0), max_keys=1_000, clock=clock)
    for _ in range(5):
        assert users.check("user:42/post").allowed
    refused = users.check("user:42/post")
    assert (refused.allowed, refused.retry_after) == (False, 60.0)
    assert users.check("user:42/like") == Decision(True, 5, 4, 0, 60_000_000, 0, 60_000_000)
    assert len(users) == 2
    clock.advance(60)
    assert users.check("user:42/post").allowed


def test_str_and_bytes_are_the_same_key(clock: ManualClock) -> None:
    keyed = KeyedLimiter(Gcra(0, 1, 1.0), 10, clock=clock)
    assert keyed.check("é").allowed
    assert not keyed.check("é".encode()).allowed
    assert not keyed.check(b"\xc3\xa9").allowed
    long_key = "k" * 100  # beyond what a slot holds inline
    assert keyed.check(long_key).allowed
    assert not keyed.check(long_key.encode()).allowed
    assert len(keyed) == 2


TEMPLATES: list[Callable[[ManualClock | None], Limiter]] = [
    lambda c: TokenBucket(1.0, 2, clock=c),
    lambda c: Gcra(1, 1, 1.0, clock=c),
    lambda c: LeakyBucketMeter(2, 1, 1.0, clock=c),
    lambda c: LeakyBucketQueue(1, 1.0, clock=c),
    lambda c: FixedWindow(2, 1.0, clock=c),
    lambda c: SlidingWindow(2, 1.0, 2, clock=c),
    lambda c: SlidingLog(2, 1.0, clock=c),
    lambda c: SlidingWindowCounter(2, 1.0, clock=c),
]


@pytest.mark.parametrize("make", TEMPLATES)
def test_every_algorithm_can_be_a_template(
    make: Callable[[ManualClock | None], Limiter], clock: ManualClock
) -> None:
    keyed = KeyedLimiter(make(None), 100, clock=clock)
    alone = make(clock)  # what each key's limiter should be
    for key in ("a", "b"):
        assert [keyed.check(key).allowed for _ in range(3)] == [True, True, False]
    clock.advance(0.25)
    assert [keyed.check("c") for _ in range(3)] == [alone.check() for _ in range(3)]
    assert keyed.peek("a") == keyed.peek(b"a")


@pytest.mark.parametrize("make", TEMPLATES)
def test_allow_is_checks_yes_or_no(make: Callable[[ManualClock | None], Limiter]) -> None:
    clock = ManualClock()
    asked, checked = KeyedLimiter(make(clock), 3), KeyedLimiter(make(clock), 3)
    steps = [("a", 1), ("a", 1), ("b", 2), ("a", 1), ("c", 1), ("d", 1), ("a", 5), ("b", 1)]
    answers = []
    for round_ in range(3):
        for key, cost in steps:
            allowed = asked.allow(key, cost)
            assert allowed is checked.check(key, cost).allowed, (round_, key, cost)
            answers.append(allowed)
        clock.advance(0.4)
    assert True in answers
    assert False in answers
    assert len(asked) == len(checked)


def test_peek_and_refusals_create_no_key(clock: ManualClock) -> None:
    keyed = KeyedLimiter(Gcra(1, 1, 1.0), 10, clock=clock)
    assert keyed.peek("a").allowed
    assert keyed.check("a", 0).allowed  # a free look
    assert keyed.check("b", 5).is_never  # above the limit: refused
    assert len(keyed) == 0
    keyed.check("a")
    assert keyed.peek("a", 2) == keyed.peek("a", 2)
    assert len(keyed) == 1


def test_full_keys_are_forgotten_and_remove(clock: ManualClock) -> None:
    keyed = KeyedLimiter(Gcra(2, 2, 1.0), 100, clock=clock)
    keyed.check("a")
    keyed.check("b")
    assert keyed.remove("a")
    assert not keyed.remove("a")
    assert len(keyed) == 1
    assert keyed.evict_full() == 0  # "b" still owes
    clock.advance(2)
    assert keyed.evict_full() == 1
    assert len(keyed) == 0


def test_at_the_bound_new_keys_are_refused(clock: ManualClock) -> None:
    keyed = KeyedLimiter(FixedWindow(1, 3600.0), max_keys=2, shards=1, clock=clock)
    assert keyed.check("a").allowed
    assert keyed.check("b").allowed
    refused = keyed.check("c")
    assert not refused.allowed
    assert refused.retry_after == 3600.0
    with pytest.raises(AtCapacity) as raised:
        keyed.try_check("c")
    assert isinstance(raised.value, RateLimitExceeded)
    assert raised.value.decision == refused
    assert "at capacity" in str(raised.value)
    with pytest.raises(AtCapacity):
        keyed.try_peek("c")
    assert keyed.try_check("a") == keyed.check("a")  # keys held are decided as always
    assert keyed.refused_new_keys == 2
    assert (keyed.max_keys, keyed.when_full, len(keyed)) == (2, "refuse_new_keys", 2)


def test_evict_soonest_full_keeps_admitting(clock: ManualClock) -> None:
    keyed = KeyedLimiter(
        FixedWindow(1, 3600.0), max_keys=2, shards=1, when_full="evict_soonest_full", clock=clock
    )
    for key in "abc":
        assert keyed.try_check(key).allowed
    assert len(keyed) == 2
    assert keyed.forced_evictions == 1
    assert keyed.when_full == "evict_soonest_full"


def test_the_clock_is_the_templates_by_default() -> None:
    clock = ManualClock()
    keyed = KeyedLimiter(Gcra(0, 1, 1.0, clock=clock), 10)
    assert keyed.clock is clock
    keyed.check("a")
    assert not keyed.check("a").allowed
    clock.advance(timedelta(seconds=1))
    assert keyed.check("a").allowed
    assert KeyedLimiter(Gcra(0, 1, 1.0), 10).clock is None
    other = ManualClock()
    assert KeyedLimiter(Gcra(0, 1, 1.0, clock=clock), 10, clock=other).clock is other


def test_repr_and_attributes(clock: ManualClock) -> None:
    bucket = TokenBucket(1.0, 2)
    bucket.burst = 4  # the template's parameters as they are now
    keyed = KeyedLimiter(bucket, 50, clock=clock)
    assert repr(keyed) == (
        "KeyedLimiter(TokenBucket(rate=1.0, burst=4), max_keys=50, "
        "when_full='refuse_new_keys', max_key_bytes=256, clock=ManualClock(now=0.0))"
    )
    assert keyed.algorithm == "token_bucket"
    assert keyed.check("a", 4).allowed
    assert keyed.max_key_bytes == 256
    # The table for 50 keys of up to 256 bytes, each at its largest state.
    assert 50 * 256 < keyed.max_bytes < 50 * 512


def test_threads_never_admit_more_than_the_limit_per_key() -> None:
    clock = ManualClock()
    keyed = KeyedLimiter(SlidingLog(3, 60.0), 1_000, clock=clock)
    keys = [f"user-{i}" for i in range(20)]
    admitted = {key: 0 for key in keys}
    lock = threading.Lock()
    barrier = threading.Barrier(4)

    def hammer() -> None:
        barrier.wait()
        for _ in range(10):
            for key in keys:
                if keyed.check(key).allowed:
                    with lock:
                        admitted[key] += 1

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(admitted.values()) == {3}


# The constructor, for calls with arguments of the wrong type on purpose.
untyped: Any = KeyedLimiter


@pytest.mark.parametrize(
    ("make", "argument", "kind"),
    [
        (lambda: untyped(Gcra(1, 1, 1.0), 0), "max_keys", InvalidArgumentError),
        (lambda: untyped(Gcra(1, 1, 1.0), -1), "max_keys", InvalidArgumentError),
        (lambda: untyped(Gcra(1, 1, 1.0), 2**40 + 1), "max_keys", InvalidArgumentError),
        (lambda: untyped(Gcra(1, 1, 1.0), 10**30), "max_keys", InvalidArgumentError),
        (lambda: untyped(Gcra(1, 1, 1.0), 10.0), "max_keys", ArgumentTypeError),
        (lambda: untyped(Gcra(1, 1, 1.0), 100, shards=3), "shards", InvalidArgumentError),
        (lambda: untyped(Gcra(1, 1, 1.0), 4, shards=8), "shards", InvalidArgumentError),
        (lambda: untyped(Gcra(1, 1, 1.0), 100, shards=0), "shards", InvalidArgumentError),
        (lambda: untyped(Gcra(1, 1, 1.0), 100, shards=-2), "shards", InvalidArgumentError),
        (lambda: untyped(Gcra(1, 1, 1.0), 100, shards="4"), "shards", ArgumentTypeError),
        (
            lambda: untyped(Gcra(1, 1, 1.0), 10, when_full="lru"),
            "when_full",
            InvalidArgumentError,
        ),
        (lambda: untyped(Gcra(1, 1, 1.0), 10, when_full=True), "when_full", ArgumentTypeError),
        (lambda: untyped(RateLimiter(1.0), 10), "template", ArgumentTypeError),
        (lambda: untyped("gcra", 10), "template", ArgumentTypeError),
        (
            lambda: untyped(CompositeLimiter([Gcra(1, 1, 1.0)]), 10),
            "template",
            ArgumentTypeError,
        ),
        (lambda: untyped(Gcra(1, 1, 1.0), 10, clock="now"), "clock", ArgumentTypeError),
    ],
)
def test_invalid_construction(
    make: Callable[[], object], argument: str, kind: type[Exception]
) -> None:
    with pytest.raises(kind) as raised:
        make()
    assert type(raised.value) is kind
    assert getattr(raised.value, "argument", None) == argument


KEYED = KeyedLimiter(Gcra(1, 1, 1.0), 10)
METHODS: list[Callable[[Any, Any], object]] = [
    lambda key, cost: KEYED.check(key, cost),
    lambda key, cost: KEYED.allow(key, cost),
    lambda key, cost: KEYED.try_check(key, cost),
    lambda key, cost: KEYED.peek(key, cost),
    lambda key, cost: KEYED.try_peek(key, cost),
]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("bad", [1, None, 1.5, bytearray(b"a"), ["a"]])
def test_keys_of_the_wrong_type(method: Callable[[Any, Any], object], bad: Any) -> None:
    with pytest.raises(ArgumentTypeError) as raised:
        method(bad, 1)
    assert raised.value.argument == "key"
    assert "must be a str or bytes" in str(raised.value)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    ("bad", "kind"),
    [(-1, InvalidArgumentError), (2**63, InvalidArgumentError), (1.0, ArgumentTypeError)],
)
def test_bad_costs(method: Callable[[Any, Any], object], bad: Any, kind: type[Exception]) -> None:
    with pytest.raises(kind) as raised:
        method("a", bad)
    assert getattr(raised.value, "argument", None) == "cost"
    assert len(KEYED) == 0


def test_remove_checks_its_key() -> None:
    with pytest.raises(ArgumentTypeError) as raised:
        KEYED.remove(5)  # type: ignore[arg-type]
    assert raised.value.argument == "key"


@pytest.mark.parametrize("method", [*METHODS, lambda key, cost: KEYED.remove(key)])
@pytest.mark.parametrize("key", ["k" * 257, b"k" * 257, "é" * 129, b"k" * 10_000_000])
def test_keys_longer_than_max_key_bytes_are_refused(
    method: Callable[[Any, Any], object], key: str | bytes
) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        method(key, 1)
    assert raised.value.argument == "key"
    assert raised.value.value == len(key.encode() if isinstance(key, str) else key)
    assert "at most max_key_bytes bytes" in str(raised.value)
    assert len(KEYED) == 0


def test_max_key_bytes_sets_the_longest_key(clock: ManualClock) -> None:
    keyed = KeyedLimiter(FixedWindow(1, 1.0), 10, max_key_bytes=4, clock=clock)
    assert keyed.max_key_bytes == 4
    assert keyed.check("abcd").allowed
    assert keyed.check("é" * 2).allowed  # 4 bytes of UTF-8
    with pytest.raises(InvalidArgumentError):
        keyed.check("abcde")
    assert len(keyed) == 2
    wide = KeyedLimiter(FixedWindow(1, 1.0), 10, max_key_bytes=65_536, clock=clock)
    assert wide.check(b"k" * 65_536).allowed
    smaller = KeyedLimiter(SlidingLog(1_000, 1.0), 1_000, max_key_bytes=16, clock=clock)
    assert smaller.max_bytes < KeyedLimiter(SlidingLog(1_000, 1.0), 1_000, clock=clock).max_bytes


@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        (0, InvalidArgumentError),
        (65_537, InvalidArgumentError),
        (-1, InvalidArgumentError),
        (2**64, InvalidArgumentError),
        (1.5, ArgumentTypeError),
        ("256", ArgumentTypeError),
    ],
)
def test_bad_max_key_bytes(bad: Any, kind: type[Exception]) -> None:
    with pytest.raises(kind) as raised:
        KeyedLimiter(Gcra(1, 1, 1.0), 10, max_key_bytes=bad)
    assert type(raised.value) is kind
    assert getattr(raised.value, "argument", None) == "max_key_bytes"


@pytest.mark.parametrize("method", [*METHODS, lambda key, cost: KEYED.remove(key)])
@pytest.mark.parametrize(("key", "at"), [("\ud800", 0), ("ab\udfff", 2), ("a\udc80\ud800", 1)])
def test_text_keys_with_a_lone_surrogate_are_refused(
    method: Callable[[Any, Any], object], key: str, at: int
) -> None:
    # UTF-8 has no form for them: refused, never a replacement character
    # that would make distinct strings one key.
    with pytest.raises(InvalidArgumentError) as raised:
        method(key, 1)
    assert type(raised.value) is InvalidArgumentError
    assert (raised.value.argument, raised.value.value) == ("key", at)
    assert "valid Unicode" in str(raised.value)
    assert len(KEYED) == 0


def test_the_keyed_decorator(clock: ManualClock) -> None:
    keyed = KeyedLimiter(FixedWindow(2, 60.0), 100, clock=clock)

    @keyed.limited(key=lambda user, item: f"user:{user}")
    def buy(user: str, item: str) -> str:
        return item

    @keyed.limited(b"all", cost=2)
    async def browse() -> str:
        return "ok"

    assert (buy("ann", "a"), buy("ann", "b"), buy("bob", "c")) == ("a", "b", "c")
    with pytest.raises(RateLimitExceeded) as raised:
        buy("ann", "d")
    assert raised.value.decision is not None
    assert raised.value.decision.retry_after == 60.0
    assert asyncio.run(browse()) == "ok"
    with pytest.raises(RateLimitExceeded):
        asyncio.run(browse())
    clock.advance(60)
    assert buy("ann", "e") == "e"
    with pytest.raises(InvalidArgumentError, match="cost = -1"):
        keyed.limited("k", cost=-1)
    assert len(keyed) == 3  # checking the cost made no key


def _handler(request: str) -> str:
    return request


async def _handler_async(request: str) -> str:
    return request


class _Service:
    def handle(self, request: str) -> str:
        return request


@pytest.mark.parametrize("func", [_handler, _handler_async, _Service.handle])
def test_a_bare_keyed_decorator_is_refused_when_decorating(func: Callable[..., Any]) -> None:
    # `@keyed.limited` passes the function where a key goes: taken for a key
    # function it made every call return a function, limiting nothing.
    keyed = KeyedLimiter(FixedWindow(1, 60.0), 100)
    with pytest.raises(ArgumentTypeError) as raised:
        keyed.limited(func)  # type: ignore[call-overload]
    assert isinstance(raised.value, TypeError)
    assert (raised.value.argument, raised.value.value) == ("key", func)
    assert "@limiter.limited(key=lambda request: request.user)" in str(raised.value)
    assert len(keyed) == 0


@pytest.mark.parametrize(
    ("decorate", "value"),
    [
        (lambda k: k.limited(), None),  # no key at all
        (lambda k: k.limited(cost=2), None),
        (lambda k: k.limited(lambda request: request), "function"),  # a key function goes by name
        (lambda k: k.limited("a", key="b"), "a"),  # two keys
        (lambda k: k.limited(key=42), 42),
    ],
)
def test_a_keyed_decorator_needs_one_key(
    decorate: Callable[[KeyedLimiter], object], value: object
) -> None:
    keyed = KeyedLimiter(FixedWindow(1, 60.0), 100)
    with pytest.raises(ArgumentTypeError) as raised:
        decorate(keyed)
    assert raised.value.argument == "key"
    if value == "function":
        assert callable(raised.value.value)
    else:
        assert raised.value.value == value
    assert str(raised.value).startswith("invalid argument key = ")


def test_the_keyed_decorator_on_methods_and_coroutines(clock: ManualClock) -> None:
    keyed = KeyedLimiter(FixedWindow(1, 60.0), 100, clock=clock)

    class Service:
        @keyed.limited(key=lambda self, user: f"user:{user}")
        def handle(self, user: str) -> str:
            return user

        @keyed.limited(key=lambda self, user: f"async:{user}")
        async def handle_async(self, user: str) -> str:
            return user

    service = Service()
    assert service.handle("ann") == "ann"
    with pytest.raises(RateLimitExceeded):
        service.handle("ann")
    assert asyncio.run(service.handle_async("ann")) == "ann"
    with pytest.raises(RateLimitExceeded):
        asyncio.run(service.handle_async("ann"))
    assert len(keyed) == 2


def test_the_keyed_decorator_wraps_functions_only() -> None:
    keyed = KeyedLimiter(FixedWindow(1, 60.0), 100)
    with pytest.raises(ArgumentTypeError) as raised:
        keyed.limited("k")(42)  # type: ignore[type-var]
    assert (raised.value.argument, raised.value.value) == ("func", 42)
