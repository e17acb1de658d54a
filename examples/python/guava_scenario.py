"""Guava's documented scenario, as the demo runs it in every language.

A limiter of 1 permit per second asked for 1, 2, 3, 4 and 5 permits, on a
ManualClock the program moves in step with real time: ``acquire`` returns
the wait at once (moving the manual clock by it), then the program sleeps
that long for real. Prints ``acquire(N) waited W slept S`` per request
(seconds, six places); ``--no-sleep`` skips the real sleeps.

    .venv/bin/python examples/python/guava_scenario.py
"""

import sys
import time

from ratekeeper import ManualClock, RateLimiter


def main() -> None:
    sleep = "--no-sleep" not in sys.argv[1:]
    clock = ManualClock()
    limiter = RateLimiter.create(1.0, clock=clock)
    for permits in range(1, 6):
        waited = limiter.acquire(permits)
        before = time.perf_counter()
        if sleep:
            time.sleep(waited)
        slept = time.perf_counter() - before
        print(f"acquire({permits}) waited {waited:.6f} slept {slept:.6f}", flush=True)
    assert clock.now_micros == 10_000_000, "the manual clock moved by the waits"


if __name__ == "__main__":
    main()
