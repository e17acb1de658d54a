# Stubs of the native module (bindings/python); its docstrings are at run time.
# `python -m mypy.stubtest ratekeeper` (scripts/test.sh) keeps them true.

from datetime import timedelta
from typing import final

from typing_extensions import Self, disjoint_base

__all__ = [
    "ArgumentTypeError",
    "InvalidArgumentError",
    "ManualClock",
    "RateLimitError",
    "RateLimitExceeded",
    "RateLimiter",
    "__version__",
]

__version__: str

class RateLimitError(Exception): ...

class InvalidArgumentError(RateLimitError, ValueError):
    argument: str | None
    value: object

class ArgumentTypeError(RateLimitError, TypeError):
    argument: str | None
    value: object

class RateLimitExceeded(RateLimitError): ...

@final
class ManualClock:
    def __new__(cls) -> Self: ...
    def advance(self, seconds: float | timedelta) -> None: ...
    @property
    def now(self) -> float: ...
    @property
    def now_micros(self) -> int: ...

@disjoint_base
class RateLimiter:
    def __new__(
        cls,
        permits_per_second: float,
        warmup: float | timedelta | None = None,
        *,
        max_burst_seconds: float | None = None,
        cold_factor: float | None = None,
        clock: ManualClock | None = None,
    ) -> Self: ...
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
    def _try_reserve(self, permits: int = 1, timeout: float | timedelta = 0.0) -> float | None: ...
