"""What one app serves with, built lazily: the assistant, the spend gate, the rate limiter.

Nothing is built when the app is created: the first request that needs the assistant builds
it (and a refusal still loads no model, see the pipeline). Everything hangs off
`app.state.services`; there is no module-level state, so a test can build many apps.
"""

from __future__ import annotations

import inspect
from typing import Any

from starlette.requests import Request

from vouched.answer import Assistant
from vouched.config import Config
from vouched.server.errors import RateLimited
from vouched.server.metrics import Metrics

_UNSET: Any = object()


class Services:
    def __init__(self, config: Config, metrics: Metrics, *, assistant: Assistant | None = None,
                 spend: Any = None, limiter: Any = None) -> None:
        self.config = config
        self.metrics = metrics
        self._assistant = assistant
        self._spend = spend if spend is not None else _UNSET
        self._limiter = limiter if limiter is not None else _UNSET
        if assistant is not None:
            self._observe(assistant)
        for part in (spend, limiter, getattr(assistant, "pipeline", None) and assistant.pipeline.spend,
                     getattr(assistant, "pipeline", None) and assistant.pipeline.cache):
            metrics.attach(getattr(part, "metrics", None))

    # -- wiring ----------------------------------------------------------------------------
    def _build(self) -> None:
        """`vouched.spend.build_spend(config)` for whatever was not injected (opens nothing yet)."""
        from vouched.spend import build_spend

        budget, limiter = build_spend(self.config)
        if self._spend is _UNSET:
            self._spend = budget
            self.metrics.attach(budget.metrics)
        if self._limiter is _UNSET:
            self._limiter = limiter
            self.metrics.attach(limiter.metrics)

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

            self._assistant = Assistant(self.config, spend=self.spend,
                                        trace_sink=chain_sinks(self.metrics.observe_trace, trace_sink_for(self.config)))
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

    # -- rate limits ---------------------------------------------------------------------
    def client_key(self, request: Request, limiter: Any = None) -> str:
        """The address the trusted edge proxy saw, never a header the client can write."""
        peer = request.client.host if request.client else ""
        if limiter is not None and hasattr(limiter, "client_key"):
            return limiter.client_key(peer, request.headers)
        from vouched.spend import client_key

        return client_key(peer, request.headers, self.config.rate_limit.trusted_proxies)

    async def check_rate(self, request: Request) -> None:
        """Raise RateLimited (429 + Retry-After) when the client is over a limit; limits fail open."""
        limiter = self.limiter
        if limiter is None:
            return
        decision = limiter.check(self.client_key(request, limiter))
        if inspect.isawaitable(decision):
            decision = await decision
        if not decision.allowed:
            limit = decision.limit_name or "rate"
            raise RateLimited(f"too many requests from this address: the per-{limit} limit is reached; "
                              f"retry after {decision.retry_after_s:.0f} s",
                              retry_after_s=decision.retry_after_s, limit=limit)
