"""``ctrl_c_after``: a Ctrl-C delivered to the main thread during a test.

Not a test module: the tests of blocking waits import it."""

from __future__ import annotations

import _thread
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def ctrl_c_after(seconds: float) -> Iterator[None]:
    """Simulates SIGINT ``seconds`` after entering, as a user's Ctrl-C.

    Python's own handler is installed meanwhile: ``interrupt_main`` runs
    whatever handles SIGINT, and a runner may have replaced or ignored it
    (then nothing would raise ``KeyboardInterrupt``)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, _thread.interrupt_main)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)
