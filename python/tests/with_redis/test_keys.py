"""The Redis limiters' keys: ``str`` (its UTF-8) or ``bytes``, as a
``KeyedLimiter``'s; at most ``max_key_bytes`` bytes (256 unless given, 1 to
65536), a longer one refused with ``InvalidArgumentError`` naming ``key``
before anything is sent, by every limiter and every call."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

from ratekeeper import (
    ArgumentTypeError,
    Gcra,
    InvalidArgumentError,
    RedisDividedLimiter,
    RedisLeasedLimiter,
    RedisLimiter,
    RedisStore,
)

TEMPLATE = Gcra(9, 1, 60.0)


def key_error(length: int) -> Any:
    return pytest.raises(InvalidArgumentError, match=f"^invalid argument key = {length}: ")


def test_text_is_its_utf8_and_other_bytes_keys_of_their_own(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, TEMPLATE)
    assert limiter.check("é").remaining == 9
    assert limiter.check("é".encode()).remaining == 8
    assert limiter.check(b"\xff").remaining == 9  # not UTF-8: a key of its own
    assert limiter.check("\ufffd").remaining == 9  # not the replacement character's
    assert limiter.check(b"\xff").remaining == 8
    with pytest.raises(ArgumentTypeError, match="key"):
        limiter.check(42)  # type: ignore[arg-type]


def test_text_with_a_lone_surrogate_is_refused_as_a_keyed_limiters_is(
    store: RedisStore, name: str
) -> None:
    # No UTF-8 form: refused naming ``key`` (the surrogate's index) before
    # anything is sent, never sent as a replacement character.
    limiter = RedisLimiter(store, name, TEMPLATE)
    leased = RedisLeasedLimiter(store, f"{name}:leased", TEMPLATE, batch=2, lease=60.0)
    for call in (limiter.check, limiter.peek, leased.check):
        with pytest.raises(InvalidArgumentError) as raised:
            call("ab\ud800")
        assert (raised.value.argument, raised.value.value) == ("key", 2)

    async def main() -> None:
        with pytest.raises(InvalidArgumentError):
            await limiter.check_async("\udfff")

    asyncio.run(main())
    assert limiter.check("\ufffd").remaining == 9
    assert limiter.check("ab\ufffd").remaining == 9


def test_a_key_past_the_bound_is_refused_by_every_call(store: RedisStore, name: str) -> None:
    limiter = RedisLimiter(store, name, TEMPLATE, when_unavailable="fail_open")
    leased = RedisLeasedLimiter(store, f"{name}:leased", TEMPLATE, batch=2, lease=60.0)
    divided = RedisDividedLimiter(
        store, f"{name}:divided", TEMPLATE, heartbeat_ttl=10.0, max_keys=10
    )
    assert limiter.max_key_bytes == leased.max_key_bytes == divided.max_key_bytes == 256
    long = "k" * 257
    calls: list[Callable[[], object]] = [
        lambda: limiter.check(long),
        lambda: limiter.peek(long.encode()),
        lambda: leased.check(long),
        lambda: divided.check(long),
    ]
    for call in calls:
        with key_error(257) as raised:
            call()
        assert raised.value.argument == "key"
        assert raised.value.value == 257

    async def main() -> None:
        with key_error(257):
            await limiter.check_async(long)
        with key_error(257):
            await limiter.peek_async(long)
        with key_error(257):
            await leased.check_async(long)

    asyncio.run(main())
    assert limiter.check("k" * 256).allowed
    divided.close()


def test_max_key_bytes_is_given_per_limiter_and_checked(store: RedisStore, name: str) -> None:
    roomy = RedisLimiter(store, name, TEMPLATE, max_key_bytes=65536)
    assert roomy.max_key_bytes == 65536
    key = b"\xff" * (60 << 10)
    assert roomy.check(key).remaining == 9
    assert roomy.check(key).remaining == 8
    with key_error(65537):
        roomy.check(b"x" * 65537)
    tight = RedisLeasedLimiter(store, name, TEMPLATE, batch=1, lease=60.0, max_key_bytes=4)
    assert tight.max_key_bytes == 4
    with key_error(5):
        tight.check("12345")
    assert tight.check("1234").allowed
    for bad in (0, 65537, -1):
        with pytest.raises(InvalidArgumentError, match="max_key_bytes") as raised:
            RedisLimiter(store, name, TEMPLATE, max_key_bytes=bad)
        assert raised.value.argument == "max_key_bytes"
    for wrong in ("256", 256.0):
        with pytest.raises(ArgumentTypeError, match="max_key_bytes"):
            RedisDividedLimiter(
                store,
                name,
                TEMPLATE,
                heartbeat_ttl=10.0,
                max_keys=10,
                max_key_bytes=wrong,  # type: ignore[arg-type]
            )


def test_the_async_factory_passes_max_key_bytes_on(store: RedisStore, name: str) -> None:
    async def main() -> RedisDividedLimiter:
        return await RedisDividedLimiter.create_async(
            store, name, TEMPLATE, heartbeat_ttl=10.0, max_keys=10, max_key_bytes=1000
        )

    with asyncio.run(main()) as divided:
        assert divided.max_key_bytes == 1000
        assert divided.check("k" * 1000).allowed
