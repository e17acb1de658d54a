"""``RedisStore``: connecting, its options and their checks, a server that
is not there, and a store used after ``fork``."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from datetime import timedelta
from typing import Any

import pytest

from ratekeeper import (
    ArgumentTypeError,
    Gcra,
    InvalidArgumentError,
    RateLimitError,
    RedisError,
    RedisLimiter,
    RedisStore,
    RedisTimeoutError,
    RedisUnavailableError,
)
from with_redis.servers import PrivateRedis, free_port


def test_connect_and_its_options(redis_url: str) -> None:
    store = RedisStore.connect(
        redis_url, timeout=timedelta(milliseconds=250), connect_timeout=1, retry_interval=0.0
    )
    assert (store.timeout, store.connect_timeout, store.retry_interval) == (0.25, 1.0, 0.0)
    assert store.urls == (redis_url,)
    assert store.cluster is False
    assert store.is_down is False
    assert repr(store) == f"<RedisStore {redis_url!r}, timeout=0.25>"


def test_the_defaults(redis_url: str) -> None:
    store = RedisStore.connect(redis_url)
    assert (store.timeout, store.connect_timeout, store.retry_interval) == (0.1, 0.25, 0.2)


def test_repr_hides_a_password() -> None:
    # Refused (nothing listens there), but the URL is checked first.
    port = free_port()
    with pytest.raises(RedisUnavailableError) as raised:
        RedisStore.connect(f"redis://user:secret@127.0.0.1:{port}/0", connect_timeout=0.5)
    assert "secret" not in str(raised.value)


def test_a_server_that_is_not_there_fails_fast_and_typed() -> None:
    port = free_port()
    start = time.monotonic()
    with pytest.raises(RedisUnavailableError) as raised:
        RedisStore.connect(f"redis://127.0.0.1:{port}/", connect_timeout=0.5)
    assert time.monotonic() - start < 2.0
    assert isinstance(raised.value, ConnectionError)
    assert isinstance(raised.value, RedisError)
    assert isinstance(raised.value, RateLimitError)
    assert not isinstance(raised.value, ValueError)


def test_the_error_hierarchy() -> None:
    assert issubclass(RedisTimeoutError, RedisUnavailableError)
    assert issubclass(RedisTimeoutError, TimeoutError)
    assert issubclass(RedisUnavailableError, ConnectionError)
    assert issubclass(RedisUnavailableError, RedisError)
    assert issubclass(RedisError, RateLimitError)
    assert not issubclass(RedisError, (ValueError, TypeError))


@pytest.mark.parametrize(
    ("kwargs", "argument", "kind"),
    [
        ({"url": b"redis://127.0.0.1/"}, "url", ArgumentTypeError),
        ({"url": 6379}, "url", ArgumentTypeError),
        ({"url": "http://127.0.0.1/"}, "url", InvalidArgumentError),
        ({"url": "not a url"}, "url", InvalidArgumentError),
        ({"timeout": 0}, "timeout", InvalidArgumentError),
        ({"timeout": -1.0}, "timeout", InvalidArgumentError),
        ({"timeout": float("nan")}, "timeout", InvalidArgumentError),
        ({"timeout": float("inf")}, "timeout", InvalidArgumentError),
        ({"timeout": 3601}, "timeout", InvalidArgumentError),
        ({"timeout": "1"}, "timeout", ArgumentTypeError),
        ({"connect_timeout": timedelta(0)}, "connect_timeout", InvalidArgumentError),
        ({"retry_interval": -0.001}, "retry_interval", InvalidArgumentError),
        ({"retry_interval": [1]}, "retry_interval", ArgumentTypeError),
    ],
)
def test_invalid_arguments(
    redis_url: str, kwargs: dict[str, Any], argument: str, kind: type[Exception]
) -> None:
    url = kwargs.pop("url", redis_url)
    with pytest.raises(kind, match=f"^invalid argument {argument} = ") as raised:
        RedisStore.connect(url, **kwargs)
    assert raised.value.argument == argument  # type: ignore[attr-defined]
    assert isinstance(raised.value, ValueError if kind is InvalidArgumentError else TypeError)


HOUR_ABOVE_0 = "must be above 0 and at most an hour (1 to 3600000000 microseconds)"


@pytest.mark.parametrize(
    ("kwargs", "shown", "requirement"),
    [
        ({"timeout": 3600.000001}, "3600.000001", HOUR_ABOVE_0),
        ({"timeout": 0}, "0", HOUR_ABOVE_0),
        (
            {"connect_timeout": timedelta(hours=1, microseconds=1)},
            "datetime.timedelta(seconds=3600, microseconds=1)",
            HOUR_ABOVE_0,
        ),
        (
            {"retry_interval": 3601},
            "3601",
            "must be between 0 and an hour (0 to 3600000000 microseconds)",
        ),
    ],
)
def test_options_have_the_redis_crates_domain_in_every_language(
    redis_url: str, kwargs: dict[str, Any], shown: str, requirement: str
) -> None:
    # The domain and its words are ratekeeper-redis's (RedisOption), the
    # same from C and Node.js; the value is shown as given.
    ((argument, _),) = kwargs.items()
    with pytest.raises(InvalidArgumentError) as raised:
        RedisStore.connect(redis_url, **kwargs)
    assert str(raised.value) == f"invalid argument {argument} = {shown}: {requirement}"
    assert raised.value.argument == argument
    hour = RedisStore.connect(redis_url, timeout=3600, retry_interval=timedelta(hours=1))
    assert (hour.timeout, hour.retry_interval) == (3600.0, 3600.0)
    hour.close()


def test_invalid_cluster_arguments() -> None:
    with pytest.raises(InvalidArgumentError, match="urls = \\[\\]: must name at least one node"):
        RedisStore.connect_cluster([])
    with pytest.raises(ArgumentTypeError, match="urls = 5"):
        RedisStore.connect_cluster(5)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="urls = b'x'"):
        RedisStore.connect_cluster(["redis://127.0.0.1/", b"x"])  # type: ignore[list-item]
    with pytest.raises(ArgumentTypeError, match="cluster = 1"):
        RedisStore("redis://127.0.0.1/", cluster=1)  # type: ignore[arg-type]


def test_connect_async_does_not_block_the_event_loop(
    redis_url: str, private_redis: PrivateRedis
) -> None:
    async def main() -> tuple[RedisStore, int, float]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        store = await RedisStore.connect_async(redis_url)
        # A server that answers nothing (and a database to SELECT, so that
        # connecting needs an answer): the connect waits out its
        # connect_timeout, off the loop.
        private_redis.stall(1.0)
        start = time.monotonic()
        with pytest.raises(RedisUnavailableError):
            await RedisStore.connect_async(private_redis.url + "1", connect_timeout=0.3)
        elapsed = time.monotonic() - start
        task.cancel()
        return store, ticks, elapsed

    store, ticks, elapsed = asyncio.run(main())
    assert store.is_down is False
    assert 0.2 < elapsed < 1.0
    assert ticks >= 0.3 * elapsed / 0.005, (ticks, elapsed)


def _in_a_forked_child(store: RedisStore, url: str, name: str, out: Any) -> None:
    try:
        RedisLimiter(store, name, Gcra(0, 1, 60.0))
        out.put("the parent's store was usable")
    except RateLimitError as e:
        message = str(e)
        # A store of its own works, on the child's own runtime.
        mine = RedisLimiter(RedisStore.connect(url, timeout=2.0), name, Gcra(0, 1, 60.0))
        out.put((message, mine.check("k").allowed, mine.check("k").allowed))


def test_a_forked_child_connects_its_own_store(redis_url: str, name: str) -> None:
    store = RedisStore.connect(redis_url, timeout=2.0)
    RedisLimiter(store, name, Gcra(0, 1, 60.0)).check("warm")  # the runtime is running
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_in_a_forked_child, args=(store, redis_url, name, out))
    child.start()
    result = out.get(timeout=20)
    child.join(timeout=20)
    assert child.exitcode == 0
    assert isinstance(result, tuple), result
    message, first, second = result
    assert "cannot be used in this one" in message
    assert (first, second) == (True, False)
