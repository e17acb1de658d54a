"""The native part of ratekeeper; import from ``ratekeeper`` instead."""

from datetime import timedelta
from typing import final

__version__: str

class RateLimitError(Exception):
    """The base class of every error ratekeeper raises."""

class InvalidArgumentError(RateLimitError, ValueError):
    """An argument's value is outside what the operation accepts."""

    argument: str | None
    value: object

class ArgumentTypeError(RateLimitError, TypeError):
    """An argument has the wrong type."""

    argument: str | None
    value: object

class RateLimitExceeded(RateLimitError):
    """A rate-limited call could not get its permits within its timeout."""

@final
class ManualClock:
    """A clock that moves only when told to, for deterministic tests."""

    def __new__(cls) -> ManualClock: ...
    def advance(self, seconds: float | timedelta) -> None: ...
    @property
    def now(self) -> float: ...
    @property
    def now_micros(self) -> int: ...

class RateLimiter:
    """Guava's ``RateLimiter`` (the native class; use ``ratekeeper.RateLimiter``)."""

    def __new__(
        cls,
        permits_per_second: float,
        warmup: float | timedelta | None = None,
        *,
        max_burst_seconds: float | None = None,
        cold_factor: float | None = None,
        clock: ManualClock | None = None,
    ) -> RateLimiter: ...
    def acquire(self, permits: int = 1) -> float: ...
    def try_acquire(self, permits: int = 1, timeout: float | timedelta = 0.0) -> bool: ...
    def time_until_available(self, permits: int = 1) -> float: ...
    def can_acquire(self, permits: int = 1, timeout: float | timedelta = 0.0) -> bool: ...
    @property
    def rate(self) -> float: ...
    @rate.setter
    def rate(self, permits_per_second: float) -> None: ...
    @property
    def clock(self) -> ManualClock | None: ...
    def _reserve(self, permits: int = 1) -> tuple[float, float]: ...
    def _try_reserve(
        self, permits: int = 1, timeout: float | timedelta = 0.0
    ) -> float | None: ...
