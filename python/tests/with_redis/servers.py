"""What the Redis tests use besides fixtures: servers of a test's own (to
stop, stall and start again) and a heartbeat thread that shows whether the
GIL was released."""

from __future__ import annotations

import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def resp(*args: str) -> bytes:
    """A command as Redis reads it."""
    return f"*{len(args)}\r\n".encode() + b"".join(
        f"${len(a.encode())}\r\n{a}\r\n".encode() for a in args
    )


def command(port: int, *args: str) -> bytes:
    """Sends one command and returns the first line of the reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(resp(*args))
        return s.makefile("rb").readline()


class PrivateRedis:
    """A redis-server of one test, on a free loopback port: started,
    killed (``kill -9``), stalled (``DEBUG SLEEP``), frozen (``SIGSTOP``)
    and started again on the same port."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None
        self.stalls: list[socket.socket] = []

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/"

    def start(self) -> Self:
        self.process = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.directory)),
                *("--enable-debug-command", "yes"),  # DEBUG SLEEP
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                if command(self.port, "PING").startswith(b"+PONG"):
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"redis-server on port {self.port} did not start")
            time.sleep(0.02)

    def kill(self) -> None:
        self.thaw()
        for connection in self.stalls:
            connection.close()
        self.stalls.clear()
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def freeze(self) -> None:
        """Stops the server (SIGSTOP): connections stay open and nothing
        is answered, not even a new connection's first command."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        """Lets a frozen server go on (SIGCONT)."""
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def stall(self, seconds: float) -> None:
        """Makes the server answer nobody for ``seconds`` (from now): sends
        ``DEBUG SLEEP`` on a connection of its own, left open until
        ``kill``."""
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        connection.sendall(resp("DEBUG", "SLEEP", str(seconds)))
        self.stalls.append(connection)
        time.sleep(0.05)  # the server has read it and sleeps


class Heartbeat:
    """A thread that notes the time about once a millisecond while it runs
    Python code: it can only run while no other thread holds the GIL."""

    def __init__(self) -> None:
        self.beats: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if now - last >= 0.001:
                self.beats.append(now)
                last = now

    def start(self) -> Self:
        self._thread.start()
        while not self.beats:
            time.sleep(0.001)
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def between(self, start: float, end: float) -> int:
        return sum(start < t < end for t in self.beats)
