"""A FastAPI dependency: per-route (or per-router) limits::

    from fastapi import Depends
    from ratekeeper.http.fastapi import RateLimitDependency

    search_limit = RateLimitDependency("10/minute")

    @app.get("/search", dependencies=[Depends(search_limit)])
    async def search(): ...

It takes a ``RateLimit``, or the arguments of one. An admitted request's
response gets the rule's header fields (through FastAPI's ``Response``
parameter: a route that returns a ``Response`` object itself does not get
them); a refused one raises ``HTTPException(429)`` with ``Retry-After``
and the fields, its ``detail`` the rule's ``refusal`` (a short text by
default). A Redis limiter is awaited: the event loop never blocks. For
every route at once, use ``ratekeeper.http.asgi``'s middleware.
"""

# No `from __future__ import annotations`: FastAPI reads the parameters'
# types of __call__ at run time, and an instance has no __globals__ to
# resolve them from.
from typing import Any, Union

from fastapi import HTTPException, Request, Response

from ratekeeper.http._rule import Limits, RateLimit
from ratekeeper.http.asgi import AsgiRequest


class RateLimitDependency:
    """A dependency (``Depends(RateLimitDependency(...))``) limiting the
    routes that use it; one instance is one budget."""

    __slots__ = ("rule",)

    def __init__(self, limits: Union[RateLimit, Limits], /, **options: Any) -> None:
        self.rule = limits if isinstance(limits, RateLimit) else RateLimit(limits, **options)

    async def __call__(self, request: Request, response: Response) -> None:
        rule = self.rule
        seen = AsgiRequest(request.scope, rule.trusted_proxies)
        outcome = await rule.decide_async(seen)
        if outcome is None:
            return
        if not outcome.allowed:
            raise HTTPException(
                status_code=429,
                detail=rule.refusal_content(seen, outcome.decision),
                headers=dict(outcome.fields),
            )
        for name, value in outcome.fields:
            response.headers.append(name, value)
