"""What one app serves with, built lazily: the assistant, the spend gate, the rate limiter, the keys.

Nothing is built when the app is created: the first request that needs the assistant builds
it (and a refusal still loads no model, see the pipeline). Everything hangs off
`app.state.services`; there is no module-level state, so a test can build many apps.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from starlette.requests import Request

from vouched.answer import Assistant
from vouched.answer.build import Lazy, Parts
from vouched.config import Config
from vouched.server.auth import Caller, KeyRing, identify, presented_key, public_tenants, tenant_for
from vouched.server.errors import RateLimited
from vouched.server.metrics import Metrics

_UNSET: Any = object()


class Services:
    """The app's parts (answer/build.py `build`, on first need) and its callers' checks."""

    def __init__(self, config: Config, metrics: Metrics, *, assistant: Assistant | None = None,
                 spend: Any = None, limiter: Any = None, keys: KeyRing | None = None,
                 parts: Parts | None = None) -> None:
        self.config = config
        self.metrics = metrics
        self.keys = keys if keys is not None else KeyRing.load(config)  # read at start: a bad file fails here
        self.public = public_tenants(config)
        self._assistant = assistant
        self._spend = spend if spend is not None else _UNSET
        self._limiter = limiter if limiter is not None else _UNSET
        self._parts = parts
        if assistant is not None:
            self._observe(assistant)
        for part in (spend, limiter, getattr(assistant, "pipeline", None) and assistant.pipeline.spend,
                     getattr(assistant, "pipeline", None) and assistant.pipeline.cache):
            metrics.attach(getattr(part, "metrics", None))

    # -- wiring ----------------------------------------------------------------------------
    @property
    def parts(self) -> Parts:
        """`build(config)` with whatever was injected (cheap: opens nothing, loads no model)."""
        if self._parts is None:
            from vouched.answer.build import build

            given = {k: v for k, v in (("spend", self._spend), ("limiter", self._limiter)) if v is not _UNSET}
            self._parts = build(self.config, **given)
        return self._parts

    def _build(self) -> None:
        """The spend gate and rate limiter of the parts for whatever was not injected, with their metrics."""
        if self._spend is _UNSET:
            self._spend = self.parts.spend.get()
            self.metrics.attach(getattr(self._spend, "metrics", None))
        if self._limiter is _UNSET:
            self._limiter = self.parts.limiter.get()
            self.metrics.attach(getattr(self._limiter, "metrics", None))

    @property
    def spend(self) -> Any:
        if self._spend is _UNSET:
            self._build()
        return self._spend

    @property
    def limiter(self) -> Any:
        if not self.config.rate_limit.enabled:
            return None
        if self._limiter is _UNSET:
            self._build()
        return self._limiter

    @property
    def assistant(self) -> Assistant:
        if self._assistant is None:
            from vouched.trace.paths import chain_sinks, trace_sink_for

            sink = chain_sinks(self.metrics.observe_trace, trace_sink_for(self.config))
            parts = dataclasses.replace(self.parts, spend=Lazy.of(self.spend), trace_sink=sink)
            self._assistant = Assistant(self.config, parts=parts)
            self.metrics.attach(getattr(self._assistant.pipeline.cache, "metrics", None))
        return self._assistant

    def _observe(self, assistant: Assistant) -> None:
        """Chain the metrics onto an injected assistant's trace sink."""
        pipeline = assistant.pipeline
        previous = pipeline.trace_sink
        observe = self.metrics.observe_trace

        def sink(trace) -> None:
            observe(trace)
            if previous is not None:
                previous(trace)

        pipeline.trace_sink = sink

    # -- callers and tenants -------------------------------------------------------------
    def caller(self, request: Request) -> Caller:
        """Who asks (Unauthorized for a key that is not valid)."""
        return identify(presented_key(request.headers), self.keys, self.public)

    def tenant(self, caller: Caller, requested: str | None) -> str:
        """The tenant this caller's request reads (Forbidden/Unauthorized otherwise)."""
        return tenant_for(caller, requested, self.config.corpus.tenant)

    # -- rate limits ---------------------------------------------------------------------
    def client_key(self, request: Request, limiter: Any = None) -> str:
        """The address the trusted edge proxy saw, never a header the client can write."""
        peer = request.client.host if request.client else ""
        if limiter is not None and hasattr(limiter, "client_key"):
            return limiter.client_key(peer, request.headers)
        from vouched.spend import client_key

        return client_key(peer, request.headers, self.config.rate_limit.trusted_proxies)

    async def check_rate(self, request: Request, caller: Caller | None = None) -> None:
        """Raise RateLimited (429 + Retry-After) when the client address, or the caller's key,
        is over a limit. The counter call runs off the event loop with a deadline; limits fail open."""
        limiter = self.limiter
        if limiter is None:
            return
        checks: list[tuple[str, Any, str]] = [(self.client_key(request, limiter), None, "this address")]
        key_limits = _key_limits(caller)
        if key_limits and caller is not None and caller.key is not None:
            checks.append((f"key:{caller.key.id}", key_limits, "this API key"))
        for key, limits, who in checks:
            if hasattr(limiter, "acheck"):
                decision = await limiter.acheck(key, limits) if limits is not None else await limiter.acheck(key)
            else:
                decision = limiter.check(key)
                if inspect.isawaitable(decision):
                    decision = await decision
            if not decision.allowed:
                limit = decision.limit_name or "rate"
                raise RateLimited(f"too many requests from {who}: the per-{limit} limit is reached; "
                                  f"retry after {decision.retry_after_s:.0f} s",
                                  retry_after_s=decision.retry_after_s, limit=limit)


def _key_limits(caller: Caller | None):
    """The caller's own limits (an API key's per_minute/per_hour/per_day), or None."""
    if caller is None or caller.key is None:
        return None
    from vouched.spend import Limit

    k = caller.key
    limits = tuple(Limit(name, count, period) for name, count, period in
                   (("minute", k.per_minute, 60), ("hour", k.per_hour, 3600), ("day", k.per_day, 86400))
                   if count)
    return limits or None

