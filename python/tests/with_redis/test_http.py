"""ratekeeper.http with a Redis-backed limit: two server processes (FastAPI
under uvicorn, which awaits Redis, and Flask under waitress, which blocks a
worker thread) share one limit, whichever a client reaches."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from web.servers import request

from ratekeeper import RedisStore, RedisUnavailableError
from ratekeeper.http import RateLimit, TrustedProxies
from ratekeeper.http.asgi import AsgiRequest, RateLimitMiddleware
from with_redis.servers import PrivateRedis

SERVER = Path(__file__).resolve().parent.parent / "web" / "shared_server.py"


@contextmanager
def shared_server(kind: str, url: str, name: str, limits: str) -> Iterator[int]:
    with subprocess.Popen(
        [sys.executable, str(SERVER), kind, url, name, limits],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            line = process.stdout.readline()
            assert line.strip().isdigit(), f"{kind} server did not start"
            yield int(line)
        finally:
            process.stdin.close()  # the server stops at the end of its input
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_a_redis_limit_holds_across_two_server_processes(redis_url: str, name: str) -> None:
    limit, keys, clients, each = 6, 2, 4, 5
    with ExitStack() as stack:
        ports = [
            stack.enter_context(shared_server(kind, redis_url, name, f"{limit}/hour"))
            for kind in ("fastapi", "flask")
        ]

        def client(key: str, port: int) -> list[int]:
            return [request(port, headers={"X-Key": key}).status for _ in range(each)]

        with ThreadPoolExecutor(keys * clients) as pool:
            runs = [
                (k, pool.submit(client, f"k{k}", ports[c % 2]))
                for k in range(keys)
                for c in range(clients)
            ]
            statuses = [(k, s) for k, run in runs for s in run.result()]
        # Both processes answered, and refused past the shared limit.
        for port in ports:
            reply = request(port, headers={"X-Key": "k0"})
            assert reply.status == 429
            assert reply.header("Retry-After") is not None
    admitted = {k: sum(1 for key, s in statuses if key == k and s == 200) for k in range(keys)}
    assert admitted == {k: limit for k in range(keys)}


def test_several_limits_through_redis(redis_url: str, name: str) -> None:
    # "2/hour; 3/day": the per-hour limit refuses first, and the fields name
    # both policies.
    with shared_server("fastapi", redis_url, name, "2/hour; 3/day") as port:
        replies = [request(port, headers={"X-Key": "a"}) for _ in range(3)]
    assert [r.status for r in replies] == [200, 200, 429]
    assert replies[0].header("RateLimit-Policy") == '"2-in-1hr";q=2;w=3600, "3-in-1day";q=3;w=86400'
    last = replies[2].header("RateLimit") or ""
    assert last.startswith('"2-in-1hr";r=0;')
    assert '"3-in-1day";r=1;' in last


def test_several_limits_through_redis_are_all_or_nothing(redis_url: str, name: str) -> None:
    # "3/hour; 2/day": the day's limit refuses the third request, and the
    # hour's keeps the unit it would have taken (one RedisCompositeLimiter:
    # asked in turn, the hour's limit kept what it took, r=0), on both
    # kinds of server.
    for kind in ("fastapi", "flask"):
        with shared_server(kind, redis_url, f"{name}-{kind}", "3/hour; 2/day") as port:
            replies = [request(port, headers={"X-Key": "a"}) for _ in range(4)]
        assert [r.status for r in replies] == [200, 200, 429, 429]
        for refused in replies[2:]:
            fields = refused.header("RateLimit") or ""
            assert fields.startswith('"3-in-1hr";r=1;'), fields
            assert '"2-in-1day";r=0;' in fields


def test_the_asgi_middleware_awaits_redis_without_blocking_the_loop(
    private_redis: PrivateRedis, name: str
) -> None:
    # Redis answers nobody for 0.4 s: the request waits that long, while
    # another task on the same event loop goes on ticking.
    store = RedisStore.connect(private_redis.url, timeout=2.0, retry_interval=0.0)
    rule = RateLimit("5/hour", store=store, name=name)
    sent: list[MutableMapping[str, object]] = []

    async def app(scope: object, receive: object, send: object) -> None:
        sent.append({"type": "app called"})

    async def receive() -> MutableMapping[str, object]:
        return {"type": "http.request"}

    async def send(message: MutableMapping[str, object]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "client": ("127.0.0.1", 1),
        "headers": [],
    }
    ticks = 0

    async def main() -> float:
        nonlocal ticks
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0.01)
        private_redis.stall(0.4)
        started = time.monotonic()
        await RateLimitMiddleware(app, rule)(scope, receive, send)
        took = time.monotonic() - started
        done.set()
        await task
        return took

    took = asyncio.run(main())
    store.close()
    assert sent == [{"type": "app called"}]  # admitted, once Redis answered
    assert took >= 0.25
    # About one tick per 5 ms while the request waited; a blocked loop
    # would have ticked once or twice.
    assert ticks >= 20


def test_when_redis_is_down_the_rule_follows_its_policy(
    private_redis: PrivateRedis, name: str
) -> None:
    store = RedisStore.connect(private_redis.url, timeout=0.5, retry_interval=0.0)
    scope = {"type": "http", "method": "GET", "path": "/", "client": ("127.0.0.1", 1)}
    request = AsgiRequest(scope, TrustedProxies())
    rules = {
        policy: RateLimit("5/hour", store=store, name=f"{name}-{policy}", when_unavailable=policy)
        for policy in ("error", "fail_open", "fail_closed")
    }
    private_redis.kill()
    with pytest.raises(RedisUnavailableError):
        rules["error"].decide(request)
    admitted = rules["fail_open"].decide(request)
    assert admitted is not None
    assert admitted.allowed
    refused = asyncio.run(rules["fail_closed"].decide_async(request))
    assert refused is not None
    assert not refused.allowed
    store.close()
