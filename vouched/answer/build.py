"""One wiring point: `build(config, **overrides) -> Parts`.

Everything a deployment answers with, built from its config in one place — the CLI, the
Python API (`Assistant`), the HTTP service (server/services.py) and the evaluations take the
`Parts`. What is heavy stays lazy exactly as before: the store is opened, the embedding
model loaded, the retriever (and a cross-encoder) built, the provider constructed and the
spend counters wired only on first use (`Lazy.get`), so an L1 refusal still touches none.

    parts = build(config)                       # everything from the config
    parts = build(config, provider=scripted)    # any part given instead (tests, benchmarks)
    Assistant(config, parts=parts)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from vouched.config import Config
from vouched.engine import Engine

if TYPE_CHECKING:
    from vouched.answer.cache import SemanticCache
    from vouched.answer.outcomes import Texts
    from vouched.embed import Embedder
    from vouched.guard.packs import Packs
    from vouched.llm.base import Provider
    from vouched.retrieve import HybridRetriever
    from vouched.spend import Budget, RateLimiter
    from vouched.store import Store
    from vouched.trace.record import TraceRecord

T = TypeVar("T")
_UNSET: Any = object()


class Lazy(Generic[T]):
    """A part built on first use, once (thread-safe), or given already built."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._value: Any = _UNSET
        self._lock = threading.Lock()

    @classmethod
    def of(cls, value: T) -> "Lazy[T]":
        lazy = cls(lambda: value)
        lazy._value = value
        return lazy

    @property
    def built(self) -> bool:
        return self._value is not _UNSET

    def get(self) -> T:
        if self._value is _UNSET:
            with self._lock:
                if self._value is _UNSET:
                    self._value = self._make()
        return self._value

    __call__ = get  # a Lazy is also its own factory


@dataclass(frozen=True)
class Parts:
    """What a deployment answers with (see the module docstring)."""

    config: Config
    engine: Engine  # ingest, rollback, search; holds the store, embedder and retriever below
    store: "Lazy[Store]"
    embedder: "Lazy[Embedder]"
    retriever: "Lazy[HybridRetriever]"
    packs: "Packs"  # L1 patterns of the categories in force for the site's kind
    cache: "SemanticCache | None"  # the semantic answer cache (cache.enabled)
    provider: "Lazy[Provider] | None"  # None: the extractive generator answers
    spend: "Lazy[Budget | None]"  # the monthly cap a paid call reserves against (None: no reservation)
    limiter: "Lazy[RateLimiter | None]"  # the rate limiter (its reader checks rate_limit.enabled)
    texts: "Texts"  # the fixed texts (refusals, notices, replies) for the site's kind
    trace_sink: "Callable[[TraceRecord], None] | None" = None
    metrics: tuple[Any, ...] = field(default=())  # the metrics objects of the parts built so far (cache)

    def with_sink(self, sink: "Callable[[TraceRecord], None] | None") -> "Parts":
        import dataclasses

        return dataclasses.replace(self, trace_sink=sink)

    def part_metrics(self) -> tuple[Any, ...]:
        """The metrics of every part built so far (spend, limiter, cache): what a service exports."""
        out = list(self.metrics)
        for lazy in (self.spend, self.limiter):
            part = lazy.get() if lazy.built else None
            m = getattr(part, "metrics", None)
            if m is not None:
                out.append(m)
        return tuple(out)


def _lazy(value: Any) -> Lazy | None:
    if value is None or isinstance(value, Lazy):
        return value
    return Lazy.of(value)


def build(
    config: Config,
    *,
    engine: Engine | None = None,
    store: Any = None,
    embedder: Any = None,
    retriever: Any = None,
    provider: Any = None,
    spend: Any = _UNSET,
    limiter: Any = _UNSET,
    cache: Any = _UNSET,
    trace_sink: "Callable[[TraceRecord], None] | None" = None,
    traces: bool = False,
) -> Parts:
    """The parts for ``config``; each keyword gives that part instead of building it (a value,
    or a `Lazy` to build it on first use). ``traces``: write traces where the config says
    (trace/paths.py), chained after ``trace_sink``.

    Spend: a paid provider (``answer.provider`` other than "extractive") never calls without a
    reservation against the monthly cap, so unless a gate is given the config's is wired
    (`vouched.spend.build_spend`: at once for a paid provider, so a model without a price
    fails here; on first use otherwise); a provider given by the caller (a test's scripted
    one) reserves against no gate unless one is given.
    """
    from vouched.guard.kinds import packs_for_kind
    from vouched.guard.packs import load_packs
    from vouched.text import LANGS

    eng = engine or Engine(config, store=None if store is None or isinstance(store, Lazy) else store,
                           embedder=None if embedder is None or isinstance(embedder, Lazy) else embedder)
    lazy_store = _lazy(store) or Lazy(lambda: eng.store)
    lazy_embedder = _lazy(embedder) or Lazy(lambda: eng.embedder)
    lazy_retriever = _lazy(retriever) or Lazy(lambda: eng.retriever)

    paid = config.answer.provider != "extractive"
    lazy_provider = _lazy(provider)
    if lazy_provider is None and paid:
        lazy_provider = Lazy(lambda: _make_provider(config))

    wired: dict[str, Any] = {}
    lock = threading.Lock()

    def _spend_pair() -> tuple[Any, Any]:
        with lock:
            if not wired:
                from vouched.spend import build_spend

                wired["budget"], wired["limiter"] = build_spend(config)
        return wired["budget"], wired["limiter"]

    if spend is not _UNSET:
        spend_part = _lazy(spend) or Lazy.of(None)
    elif provider is not None:
        spend_part = Lazy.of(None)  # a provider given by the caller reserves only against a gate it is given
    else:
        spend_part = Lazy(lambda: _spend_pair()[0])
        if paid:
            spend_part.get()  # a paid model without a price is a ConfigError now, not at the first call
    limiter_part = Lazy(lambda: _spend_pair()[1]) if limiter is _UNSET else (_lazy(limiter) or Lazy.of(None))

    if cache is _UNSET:
        cache = None
        if config.cache.enabled:
            from vouched.answer.cache import SemanticCache
            from vouched.spend.metrics import CacheMetrics

            cache = SemanticCache.from_config(config, CacheMetrics())

    # L1 runs every language's pack: a reader may ask in any language, and safety must not
    # depend on language identification; only the categories in force for the site's kind.
    packs = packs_for_kind(load_packs(LANGS, config.guard.extra_patterns or None), config.site_kind,
                           config.site.refuse, config.guard.extra_patterns)
    from vouched.answer.outcomes import Texts

    texts = Texts(config)
    sink = trace_sink
    if traces:
        from vouched.trace.paths import chain_sinks, trace_sink_for

        sink = chain_sinks(trace_sink, trace_sink_for(config))
    cache_metrics = getattr(cache, "metrics", None)
    return Parts(config=config, engine=eng, store=lazy_store, embedder=lazy_embedder, retriever=lazy_retriever,
                 packs=packs, cache=cache, provider=lazy_provider, spend=spend_part, limiter=limiter_part,
                 trace_sink=sink, metrics=(cache_metrics,) if cache_metrics is not None else (), texts=texts)


def _make_provider(config: Config):
    from vouched.llm.registry import make_provider

    a = config.answer
    settings = {"model": a.model, "base_url": a.base_url, "api_key_env": a.api_key_env}
    return make_provider(a.provider, {k: v for k, v in settings.items() if v})
