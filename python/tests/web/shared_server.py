"""One application process of the Redis test (``with_redis/test_http.py``):
``python shared_server.py KIND REDIS_URL NAME LIMITS`` serves the test
application of ``KIND`` (``fastapi`` under uvicorn, ``flask`` under
waitress), limited by ``RateLimit(LIMITS, store=..., name=NAME)`` and so
sharing its limit with every other process of that name, on loopback port
0; prints the port on one line, and serves until its standard input
closes."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

# Run as a script: tests/ is where `web` is.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ratekeeper import RedisStore
from ratekeeper.http import RateLimit, by_header
from web.apps import serve


def main() -> None:
    kind, url, name, limits = sys.argv[1:5]
    store = RedisStore.connect(url, timeout=2.0, connect_timeout=2.0)
    rule = RateLimit(limits, store=store, name=name, key=by_header("X-Key"))
    with serve(kind, rule) as port:
        print(port, flush=True)
        done = threading.Event()

        def wait_for_eof() -> None:
            sys.stdin.read()
            done.set()

        threading.Thread(target=wait_for_eof, daemon=True).start()
        done.wait()
    store.close()


if __name__ == "__main__":
    main()
