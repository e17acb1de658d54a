"""ratekeeper.http with a Redis-backed limit: two server processes (FastAPI
under uvicorn, which awaits Redis, and Flask under waitress, which blocks a
worker thread) share one limit, whichever a client reaches."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

from web.servers import request

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
