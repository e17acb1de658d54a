"""The HTTP middleware benchmark, Python (run through ``run`` beside it).

For each framework (FastAPI under uvicorn, Flask under waitress) the same
one-route application is served three ways — no limiter, ratekeeper.http's
middleware, the peer's (slowapi's ``SlowAPIMiddleware``, Flask-Limiter's
default limits) — each with a limit out of reach (every request does the
whole work: key, decision, header fields), header fields on for both, the
key the client's address. Each server is one process on loopback port 0,
loaded by wrk for ``--seconds`` after a warm-up; every contender's answer
is checked first (200, and the rate-limit fields where a limiter runs).

The added cost of a middleware is its time per request minus the bare
application's (1/rps on a server that is saturated, one process); the ratio
is ratekeeper's added cost over the peer's (issue #27's target: <= 0.3).

    bench_http.py [--seconds S] [--connections C] [--json FILE]
    bench_http.py serve FRAMEWORK CONTENDER     (one server; prints its port)
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import shutil
import subprocess
import sys
import time
from typing import Any

FRAMEWORKS = {
    "fastapi": ("none", "ratekeeper", "slowapi"),
    "flask": ("none", "ratekeeper", "flask-limiter"),
}
OUT_OF_REACH = "1000000000/hour"


def fastapi_app(contender: str) -> Any:
    from fastapi import FastAPI
    from fastapi.responses import PlainTextResponse

    app = FastAPI()
    if contender == "ratekeeper":
        from ratekeeper.http import RateLimit
        from ratekeeper.http.asgi import RateLimitMiddleware

        app.add_middleware(RateLimitMiddleware, rule=RateLimit(OUT_OF_REACH))
    elif contender == "slowapi":
        from slowapi import Limiter, _rate_limit_exceeded_handler
        from slowapi.errors import RateLimitExceeded
        from slowapi.middleware import SlowAPIMiddleware
        from slowapi.util import get_remote_address

        limiter = Limiter(
            key_func=get_remote_address, default_limits=[OUT_OF_REACH], headers_enabled=True
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


def serve(framework: str, contender: str) -> None:
    import socket

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    if framework == "fastapi":
        import uvicorn

        server = uvicorn.Server(
            uvicorn.Config(
                fastapi_app(contender), log_level="error", access_log=False, lifespan="off"
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


def check(port: int, contender: str) -> None:
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


def wrk(port: int, seconds: float, connections: int) -> dict[str, float]:
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
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return {"rps": rps, "us_per_request": 1e6 / rps}


def measure(framework: str, contender: str, seconds: float, connections: int) -> dict[str, float]:
    command = [sys.executable, __file__, "serve", framework, contender]
    if shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        deadline = time.monotonic() + 20
        while True:
            try:
                check(port, contender)
                break
            except (ConnectionError, OSError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        wrk(port, 1, connections)  # warm-up
        return wrk(port, seconds, connections)
    finally:
        server.terminate()
        server.wait(20)


def in_process(framework: str, contender: str, seconds: float) -> dict[str, float]:
    """Time per request with no server and no socket: the application
    called as its server would call it, from one thread, for ``seconds``
    (best of three rounds) — the middleware's CPU cost without the
    network's noise."""
    if framework == "fastapi":
        import asyncio

        app = fastapi_app(contender)
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

        statuses: list[int] = []

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        async def rounds() -> float:
            best = float("inf")
            for _ in range(3):
                count, started = 0, time.perf_counter()
                while time.perf_counter() - started < seconds / 3:
                    for _ in range(100):
                        await app(dict(scope), receive, send)
                    count += 100
                best = min(best, (time.perf_counter() - started) / count)
            return best

        per_request = asyncio.run(rounds())
    else:
        app = flask_app(contender)
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
        statuses = []

        def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
            statuses.append(int(status.split()[0]))
            return None

        best = float("inf")
        for _ in range(3):
            count, started = 0, time.perf_counter()
            while time.perf_counter() - started < seconds / 3:
                for _ in range(100):
                    import io

                    e = dict(environ)
                    e["wsgi.input"] = io.BytesIO()
                    b"".join(app(e, start_response))
                count += 100
            best = min(best, (time.perf_counter() - started) / count)
        per_request = best
    if set(statuses) != {200}:
        raise SystemExit(f"{framework}/{contender}: answered {sorted(set(statuses))}")
    return {"rps": 1 / per_request, "us_per_request": per_request * 1e6}


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--json", help="write the results here too")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="call the applications directly (no server, no wrk): the CPU cost alone",
    )
    options = parser.parse_args()
    results: dict[str, dict[str, dict[str, float]]] = {}
    for framework, contenders in FRAMEWORKS.items():
        results[framework] = {
            c: (
                in_process(framework, c, options.seconds)
                if options.in_process
                else measure(framework, c, options.seconds, options.connections)
            )
            for c in contenders
        }
        base = results[framework]["none"]["us_per_request"]
        for figures in results[framework].values():
            figures["added_us"] = figures["us_per_request"] - base
        ours = results[framework]["ratekeeper"]["added_us"]
        peer_name = contenders[2]
        peer = results[framework][peer_name]["added_us"]
        print(f"{framework}:")
        for name, figures in results[framework].items():
            print(
                f"  {name:14} {figures['rps']:9.0f} req/s  {figures['us_per_request']:7.1f} us/req"
                f"  added {figures['added_us']:6.1f} us"
            )
        ratio = ours / peer if peer > 0 else float("nan")
        print(f"  ratekeeper's added cost / {peer_name}'s: {ratio:.2f}")
    if options.json:
        with open(options.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
