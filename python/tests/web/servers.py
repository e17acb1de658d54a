"""Real servers on loopback port 0 (the OS picks the port) for the HTTP
middleware's tests, and a plain HTTP client (``http.client``).

``uvicorn_server`` runs an ASGI application under uvicorn, and
``waitress_server`` a WSGI one under waitress, each in a thread of the test
process, so that a test can hold the same limiter as the server."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import uvicorn
import waitress


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        found = [v for k, v in self.headers if k.lower() == name.lower()]
        return ", ".join(found) if found else None

    def fields(self, names: set[str]) -> list[tuple[str, str]]:
        """The header fields among ``names`` (lower case), in order, names
        lowered (HTTP field names are case-insensitive; h11 lowers them)."""
        return [(k.lower(), v) for k, v in self.headers if k.lower() in names]


def request(
    port: int, path: str = "/", *, method: str = "GET", headers: dict[str, str] | None = None
) -> Reply:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        body = response.read()
        return Reply(response.status, response.getheaders(), body)
    finally:
        connection.close()


@contextmanager
def uvicorn_server(app: Any, *, lifespan: Literal["on", "off"] = "off") -> Iterator[int]:
    """``lifespan="on"``: the application's startup and shutdown run (and
    must succeed through whatever middleware wraps it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # uvicorn believes X-Forwarded-For from 127.0.0.1 by default: off here,
    # so that ratekeeper's own handling is tested.
    server = uvicorn.Server(
        uvicorn.Config(
            app, log_level="error", lifespan=lifespan, access_log=False, proxy_headers=False
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


@contextmanager
def waitress_server(app: Any) -> Iterator[int]:
    # waitress drops forwarding headers from peers it does not trust (all,
    # by default): kept here, so that ratekeeper's own handling is tested.
    server = waitress.create_server(
        app, host="127.0.0.1", port=0, threads=8, clear_untrusted_proxy_headers=False
    )
    port = int(server.effective_port)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        # Closed from waitress's own loop thread (its trigger runs the
        # function there): every connection, the listening socket and the
        # trigger itself; the loop ends when nothing is left.
        def close_all() -> None:
            for dispatcher in list(server._map.values()):
                dispatcher.close()

        try:
            server.trigger.pull_trigger(close_all)
        except OSError:
            # A response's own wake-up (waitress pulls the trigger when a
            # task has output) can make the loop run close_all between the
            # thunk's queueing and this pull's write: the trigger is closed
            # by then, and the write fails with EBADF. Only that is expected.
            if not server.trigger._closed:
                raise
        thread.join(20)
        server.task_dispatcher.shutdown()
