"""The HTTP middleware benchmark, Python (run through ``run`` beside it).

For each framework (FastAPI under uvicorn, Flask under waitress) the same
one-route application is served three ways — no limiter, ratekeeper.http's
middleware, the peer's (slowapi's ``SlowAPIMiddleware``, Flask-Limiter's
default limits) — each with a limit out of reach (every request does the
whole work: key, decision, header fields), header fields on for both, the
key the client's address. And once more through Redis (``fastapi-redis``:
ratekeeper's limit on a ``RedisStore``, slowapi on limits' ``redis://``
storage, both on the one server ``RATEKEEPER_REDIS_URL`` names; ``run``
starts a private one). Each server is one process on loopback port 0,
loaded by wrk for ``--seconds`` after a warm-up, ``--rounds`` times in
turn (the median is kept); every contender's answer is checked first (200,
the rate-limit fields where a limiter runs, and its keys in Redis).

The added cost of a middleware is its time per request minus the bare
application's (1/rps on a server that is saturated, one process); the ratio
is ratekeeper's added cost over the peer's (issue #27's target: <= 0.3);
through Redis, the target is on requests per second: ratekeeper's >= 1.5x
slowapi's (its time per request <= 0.67x).

    bench_http.py [--seconds S] [--rounds N] [--connections C] [--in-process]
                  [--frameworks fastapi,flask,fastapi-redis] [--json FILE]
    bench_http.py serve FRAMEWORK CONTENDER     (one server; prints its port)

``--json FILE`` writes the ``ratekeeper-bench/1`` format of
``benches/report.py`` (suite ``http-python``): a table per framework, the
workloads "server time per request" (ns, 1e9 / requests per second) and
"added by the middleware" (that minus the bare application's), the peer
the reference.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from importlib import metadata
from typing import Any

FRAMEWORKS = {
    "fastapi": ("none", "ratekeeper", "slowapi"),
    "flask": ("none", "ratekeeper", "flask-limiter"),
    "fastapi-redis": ("none", "ratekeeper", "slowapi"),
}
OUT_OF_REACH = "1000000000/hour"
# The Redis variant's server and its keys' prefix (one per run, so that a
# contender's check finds its own keys, and no run meets another's), passed
# to the server processes through their environment.
REDIS_URL = "RATEKEEPER_REDIS_URL"
REDIS_PREFIX = "RK_BENCH_HTTP_PREFIX"


def redis_setup() -> tuple[str, str] | None:
    url = os.environ.get(REDIS_URL)
    if not url:
        return None
    return url, os.environ.setdefault(REDIS_PREFIX, f"bench-http-{uuid.uuid4().hex[:8]}")


def fastapi_app(contender: str, redis: tuple[str, str] | None = None) -> Any:
    """``redis``: (url, key prefix) to limit through Redis, else in memory."""
    from fastapi import FastAPI
    from fastapi.responses import PlainTextResponse

    app = FastAPI()
    if contender == "ratekeeper":
        from ratekeeper.http import RateLimit
        from ratekeeper.http.asgi import RateLimitMiddleware

        if redis is None:
            rule = RateLimit(OUT_OF_REACH)
        else:
            from ratekeeper import RedisStore

            store = RedisStore.connect(redis[0])
            rule = RateLimit(OUT_OF_REACH, store=store, name=redis[1])
        app.add_middleware(RateLimitMiddleware, rule=rule)
    elif contender == "slowapi":
        from slowapi import Limiter, _rate_limit_exceeded_handler
        from slowapi.errors import RateLimitExceeded
        from slowapi.middleware import SlowAPIMiddleware
        from slowapi.util import get_remote_address

        # slowapi's defaults otherwise (its fixed window), as its users run it.
        storage: dict[str, Any] = (
            {} if redis is None else {"storage_uri": redis[0], "key_prefix": redis[1]}
        )
        limiter = Limiter(
            key_func=get_remote_address,
            default_limits=[OUT_OF_REACH],
            headers_enabled=True,
            **storage,
        )
        app.state.limiter = limiter
        app.add_exception_handler(RateLimitExceeded, _rate_limit_exceeded_handler)  # type: ignore[arg-type]
        app.add_middleware(SlowAPIMiddleware)

    @app.get("/", response_class=PlainTextResponse)
    async def ok() -> str:
        return "ok"

    return app


def flask_app(contender: str) -> Any:
    import flask

    app = flask.Flask("bench")

    @app.get("/")
    def ok() -> str:
        return "ok"

    if contender == "ratekeeper":
        from ratekeeper.http import RateLimit
        from ratekeeper.http.wsgi import RateLimitMiddleware

        app.wsgi_app = RateLimitMiddleware(app.wsgi_app, RateLimit(OUT_OF_REACH))  # type: ignore[method-assign]
    elif contender == "flask-limiter":
        from flask_limiter import Limiter
        from flask_limiter.util import get_remote_address

        Limiter(
            get_remote_address,
            app=app,
            default_limits=[OUT_OF_REACH],
            headers_enabled=True,
            storage_uri="memory://",
        )
    return app


def application(framework: str, contender: str) -> Any:
    if framework == "fastapi":
        return fastapi_app(contender)
    if framework == "fastapi-redis":
        redis = redis_setup()
        if redis is None:
            raise SystemExit(f"{framework}: {REDIS_URL} must name the Redis server")
        return fastapi_app(contender, redis)
    return flask_app(contender)


def serve(framework: str, contender: str) -> None:
    import socket

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it. uvicorn given a socket of ours (not
    # a host and port) answers in two writes that Nagle's algorithm and the
    # client's delayed ACK hold for up to 40 ms: a bare FastAPI app served
    # about 360 requests per second instead of thousands.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    if framework != "flask":
        import uvicorn

        server = uvicorn.Server(
            uvicorn.Config(
                application(framework, contender),
                log_level="error",
                access_log=False,
                lifespan="off",
            )
        )
        print(port, flush=True)
        server.run(sockets=[sock])
    else:
        import logging

        import waitress

        # Under load its queue is deep by design: not worth a line each time.
        logging.getLogger("waitress.queue").setLevel(logging.ERROR)
        sock.listen(1024)
        app = flask_app(contender)
        print(port, flush=True)
        waitress.serve(app, sockets=[sock], threads=4, _quiet=True)


def check(port: int, framework: str, contender: str) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/")
    response = connection.getresponse()
    body = response.read()
    connection.close()
    if response.status != 200 or body != b"ok":
        raise SystemExit(f"{contender}: answered {response.status} {body!r}")
    names = {name.lower() for name, _ in response.getheaders()}
    limited = contender != "none"
    if limited and not names & {"ratelimit", "x-ratelimit-limit", "ratelimit-limit"}:
        raise SystemExit(f"{contender}: no rate-limit field in {sorted(names)}")
    if limited and framework == "fastapi-redis":
        redis_keys(contender)


def redis_keys(contender: str) -> None:
    """That the contender keeps its counts in Redis (keys under this run's
    prefix), not in its process."""
    import redis

    found = redis_setup()
    assert found is not None
    url, prefix = found
    client = redis.Redis.from_url(url)
    try:
        keys = [k.decode() for k in client.scan_iter(match=f"*{prefix}*", count=1000)]
    finally:
        client.close()
    # ratekeeper's keys start with its limiter's name ("{prefix}:..."),
    # limits' with its own prefix ("LIMITS:{prefix}/...").
    theirs = [k for k in keys if k.startswith("LIMITS")]
    ours = [k for k in keys if not k.startswith("LIMITS")]
    if not (ours if contender == "ratekeeper" else theirs):
        raise SystemExit(f"{contender}: no key of its in Redis (found {keys})")


def wrk(port: int, seconds: float, connections: int) -> float:
    """Requests per second."""
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            f"http://127.0.0.1:{port}/",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise SystemExit(f"wrk saw errors:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]


def measure(
    framework: str, contenders: tuple[str, ...], seconds: float, rounds: int, connections: int
) -> dict[str, float]:
    """Each contender's requests per second under wrk: one server process
    each (all started first, idle but the one loaded), ``rounds`` loads of
    each in turn, the median."""
    servers: dict[str, tuple[subprocess.Popen[str], int]] = {}
    try:
        for contender in contenders:
            command = [sys.executable, __file__, "serve", framework, contender]
            if shutil.which("taskset"):
                command = ["taskset", "-c", "0", *command]
            server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            assert server.stdout is not None
            servers[contender] = server, int(server.stdout.readline())
        for contender, (_, port) in servers.items():
            deadline = time.monotonic() + 20
            while True:
                try:
                    check(port, framework, contender)
                    break
                except (ConnectionError, OSError):
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            wrk(port, 1, connections)  # warm-up
        rates: dict[str, list[float]] = {c: [] for c in contenders}
        for _ in range(rounds):
            for contender, (_, port) in servers.items():
                rates[contender].append(wrk(port, seconds, connections))
        return {c: statistics.median(r) for c, r in rates.items()}
    finally:
        for server, _ in servers.values():
            server.terminate()
            server.wait(20)


def in_process(framework: str, contender: str, seconds: float, rounds: int) -> float:
    """Requests per second with no server and no socket: the application
    called as its server would call it, from one thread, for ``seconds``
    (the best of ``rounds``) — the middleware's CPU cost without the
    network's noise (through Redis: its round trips, one at a time)."""
    app = application(framework, contender)
    statuses: list[int] = []
    if framework != "flask":
        import asyncio

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/",
            "raw_path": b"/",
            "root_path": "",
            "query_string": b"",
            "headers": [(b"host", b"127.0.0.1")],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        async def best_of_rounds() -> float:
            best = float("inf")
            for _ in range(rounds):
                count, started = 0, time.perf_counter()
                while time.perf_counter() - started < seconds:
                    for _ in range(100):
                        await app(dict(scope), receive, send)
                    count += 100
                best = min(best, (time.perf_counter() - started) / count)
            return best

        per_request = asyncio.run(best_of_rounds())
    else:
        import io

        environ = {
            "REQUEST_METHOD": "GET",
            "SCRIPT_NAME": "",
            "PATH_INFO": "/",
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1",
            "wsgi.url_scheme": "http",
            "wsgi.input": None,
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }

        def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
            statuses.append(int(status.split()[0]))
            return None

        best = float("inf")
        for _ in range(rounds):
            count, started = 0, time.perf_counter()
            while time.perf_counter() - started < seconds:
                for _ in range(100):
                    e = dict(environ)
                    e["wsgi.input"] = io.BytesIO()
                    b"".join(app(e, start_response))
                count += 100
            best = min(best, (time.perf_counter() - started) / count)
        per_request = best
    if set(statuses) != {200}:
        raise SystemExit(f"{framework}/{contender}: answered {sorted(set(statuses))}")
    if contender != "none" and framework == "fastapi-redis":
        redis_keys(contender)
    return 1 / per_request


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def contender_names() -> dict[str, dict[str, str]]:
    """Each framework's contenders as the report names them."""
    rk = f"ratekeeper {_version('ratekeeper')}"
    slowapi = f"slowapi {_version('slowapi')} (limits {_version('limits')}"
    return {
        "fastapi": {
            "none": "no limiter",
            "ratekeeper": f"{rk} asgi.RateLimitMiddleware",
            "slowapi": f"{slowapi}, memory)",
        },
        "flask": {
            "none": "no limiter",
            "ratekeeper": f"{rk} wsgi.RateLimitMiddleware",
            "flask-limiter": f"flask-limiter {_version('flask-limiter')} (memory)",
        },
        "fastapi-redis": {
            "none": "no limiter",
            "ratekeeper": f"{rk} asgi.RateLimitMiddleware, RedisStore",
            "slowapi": f"{slowapi}, redis:// storage, redis-py {_version('redis')})",
        },
    }


TITLES = {
    "fastapi": "HTTP, Python: FastAPI under uvicorn",
    "flask": "HTTP, Python: Flask under waitress",
    "fastapi-redis": "HTTP, Python: FastAPI under uvicorn, the limit through Redis",
}


def bench_document(
    results: dict[str, dict[str, float]], command: str, notes: str
) -> dict[str, Any]:
    """The ``ratekeeper-bench/1`` document of the results (requests per
    second per framework and contender): a table per framework, the peer
    its reference."""
    names = contender_names()
    tables = []
    for framework, rates in results.items():
        contenders = FRAMEWORKS[framework]
        peer = contenders[2]
        named = names[framework]
        per_request = {c: 1e9 / rates[c] for c in contenders}
        rows: list[dict[str, Any]] = [
            {
                "workload": "server time per request",
                "contender": named[c],
                "value": per_request[c],
                "requests_per_second": rates[c],
            }
            for c in contenders
        ]
        rows += [
            {
                "workload": "added by the middleware",
                "contender": named[c],
                "value": per_request[c] - per_request["none"],
            }
            for c in contenders[1:]
        ]
        tables.append(
            {"title": TITLES[framework], "unit": "ns", "reference": named[peer], "rows": rows}
        )
    return {
        "format": "ratekeeper-bench/1",
        "suite": "http-python",
        "title": "HTTP middleware, Python: ratekeeper.http beside slowapi and Flask-Limiter",
        "command": command,
        "notes": notes,
        "tables": tables,
    }


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per load (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="loads per contender (default 3)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument(
        "--frameworks",
        default=",".join(FRAMEWORKS),
        help="comma-separated, of " + ", ".join(FRAMEWORKS) + " (default: all)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the ratekeeper-bench/1 results")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="call the applications directly (no server, no wrk): the CPU cost alone",
    )
    options = parser.parse_args()
    frameworks = [f for f in options.frameworks.split(",") if f]
    unknown = [f for f in frameworks if f not in FRAMEWORKS]
    if unknown:
        parser.error(f"unknown framework {unknown[0]!r}: one of {', '.join(FRAMEWORKS)}")
    if options.rounds < 1 or options.seconds <= 0:
        parser.error("--rounds must be at least 1 and --seconds more than 0")
    if "fastapi-redis" in frameworks and redis_setup() is None:
        parser.error(f"fastapi-redis: {REDIS_URL} must name the Redis (run starts one)")
    results: dict[str, dict[str, float]] = {}
    for framework in frameworks:
        contenders = FRAMEWORKS[framework]
        if options.in_process:
            rates = {
                c: in_process(framework, c, options.seconds, options.rounds) for c in contenders
            }
        else:
            rates = measure(
                framework, contenders, options.seconds, options.rounds, options.connections
            )
        results[framework] = rates
        base = 1e6 / rates["none"]
        peer_name = contenders[2]
        print(f"{framework}:")
        for name, rps in rates.items():
            us = 1e6 / rps
            print(f"  {name:14} {rps:9.0f} req/s  {us:7.1f} us/req  added {us - base:6.1f} us")
        ours, peer = 1e6 / rates["ratekeeper"] - base, 1e6 / rates[peer_name] - base
        added = ours / peer if peer > 0 else float("nan")
        faster = rates["ratekeeper"] / rates[peer_name]
        print(f"  ratekeeper's added cost / {peer_name}'s: {added:.2f}")
        print(f"  ratekeeper's requests per second / {peer_name}'s: {faster:.2f}")
    if options.json:
        mode = (
            f"in process (no server, no socket), best of {options.rounds} rounds of "
            f"{options.seconds:g} s per contender"
            if options.in_process
            else f"one server process per contender pinned to core 0 (taskset), wrk -t1 "
            f"-c{options.connections}, median of {options.rounds} loads of "
            f"{options.seconds:g} s per contender in turn after a 1 s warm-up"
        )
        notes = (
            f"Every limit out of reach ({OUT_OF_REACH}): each request does the whole work "
            "(key, decision, header fields); the key is the client's address. Value: ns per "
            "request (1e9 / requests per second, also given) and that minus the bare "
            "application's; ratio: ours / the peer's. Targets (issue #27): added cost <= 0.3x "
            "slowapi's and Flask-Limiter's; through Redis, requests per second >= 1.5x slowapi's "
            f"(server time <= 0.67x). {mode}. Python {platform.python_version()}; "
            + ", ".join(
                f"{p} {_version(p)}"
                for p in ("fastapi", "starlette", "uvicorn", "flask", "waitress")
            )
            + "."
        )
        command = "benches/http/python/run " + " ".join(sys.argv[1:])
        document = bench_document(results, command, notes)
        if options.in_process:
            # Its own section of the report, beside the loads'.
            document["suite"] = "http-python-in-process"
            document["title"] += ", in process (no server)"
        with open(options.json, "w", encoding="utf-8") as out:
            json.dump(document, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
