"""ratekeeper: Guava's ``RateLimiter`` for Python, to the microsecond.

The decisions are made by ratekeeper's Rust engine, the same one its Rust,
Node.js and C bindings use, and are identical to Guava 31.1's::

    from ratekeeper import RateLimiter

    limiter = RateLimiter.create(5.0)     # 5 permits per second
    limiter.acquire()                     # blocks as needed, GIL released
    if limiter.try_acquire(timeout=0.1):  # waits at most 100 ms
        ...
    await limiter.acquire_async()         # never blocks the event loop

``ManualClock`` makes a limiter deterministic in tests. Every error is a
``RateLimitError``; bad arguments raise ``InvalidArgumentError`` (also a
``ValueError``) or ``ArgumentTypeError`` (also a ``TypeError``).
"""

from ratekeeper._limiter import RateLimiter
from ratekeeper._ratekeeper import (
    ArgumentTypeError,
    InvalidArgumentError,
    ManualClock,
    RateLimitError,
    RateLimitExceeded,
    __version__,
)

# Shown and documented under the name users import it by.
RateLimiter.__module__ = __name__

__all__ = [
    "ArgumentTypeError",
    "InvalidArgumentError",
    "ManualClock",
    "RateLimitError",
    "RateLimitExceeded",
    "RateLimiter",
    "__version__",
]
