"""``KeyedLimiter``: the native keyed limiter plus the keyed decorator."""

from __future__ import annotations

from ratekeeper import _ratekeeper
from ratekeeper._limited import Key, KeyedCalls
from ratekeeper._ratekeeper import Decision


class KeyedLimiter(_ratekeeper.KeyedLimiter, KeyedCalls):
    __slots__ = ()
    __doc__ = _ratekeeper.KeyedLimiter.__doc__

    def _check_key(self, key: Key, cost: int) -> Decision:
        return self.check(key, cost)

    def _check_keyed_call(self, cost: int) -> None:
        self.peek(b"", cost)  # takes nothing and creates no key: checks cost
