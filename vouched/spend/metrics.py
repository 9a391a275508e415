"""Plain in-process counters for spend, rate limiting and the semantic answer cache.

The server exports them to Prometheus; nothing here depends on a metrics library. Each
`Counter` may carry one label (e.g. `reason`, `limit`); `values()` gives every label's count.
"""

from __future__ import annotations

import threading


class Counter:
    """A count that only goes up, safe to increment from several threads."""

    def __init__(self, name: str, help: str, label: str | None = None) -> None:
        self.name = name
        self.help = help
        self.label = label
        self._values: dict[str, int] = {}
        self._lock = threading.Lock()

    def inc(self, n: int = 1, label: str = "") -> None:
        if n < 0:
            raise ValueError("a counter only goes up")
        with self._lock:
            self._values[label] = self._values.get(label, 0) + n

    def value(self, label: str = "") -> int:
        with self._lock:
            return self._values.get(label, 0)

    def total(self) -> int:
        with self._lock:
            return sum(self._values.values())

    def values(self) -> dict[str, int]:
        with self._lock:
            return dict(self._values)

    def __repr__(self) -> str:
        return f"<Counter {self.name} {self.values()}>"


class _Metrics:
    def counters(self) -> list[Counter]:
        return [v for v in vars(self).values() if isinstance(v, Counter)]

    def snapshot(self) -> dict[str, dict[str, int]]:
        return {c.name: c.values() for c in self.counters()}


class SpendMetrics(_Metrics):
    def __init__(self) -> None:
        self.reserved = Counter("vouched_spend_reservations_total", "Reservations granted before a model call.")
        self.refused = Counter("vouched_spend_refused_total",
                               "Model calls refused: reason=cap (monthly limit), caller_cap (the API key's own budget) or store (counter store failed or too slow; fail closed).",
                               label="reason")
        self.settled = Counter("vouched_spend_settled_total", "Reservations settled with the reported cost.")
        self.settled_micros = Counter("vouched_spend_settled_microusd_total", "Cost settled, in micro-USD.")
        self.over_bound = Counter("vouched_spend_over_bound_total",
                                  "Settled costs above their reserved upper bound (the provider reported more).")
        self.settle_errors = Counter("vouched_spend_settle_errors_total",
                                     "Settles the counter store failed or did not answer in time.")
        self.journaled = Counter("vouched_spend_settles_journaled_total",
                                 "Failed settles written to the local settle journal, retried until the store accepts them.")


class RateMetrics(_Metrics):
    def __init__(self) -> None:
        self.allowed = Counter("vouched_rate_allowed_total", "Requests the rate limiter let through.")
        self.limited = Counter("vouched_rate_limited_total", "Requests refused, by limit (minute, hour, day).", label="limit")
        self.store_errors = Counter("vouched_rate_store_errors_total",
                                    "Checks passed because the counter store failed (rate limits fail open).")


class CacheMetrics(_Metrics):
    """The semantic answer cache (vouched.answer.cache): hit rate = hits / (hits + misses)."""

    def __init__(self) -> None:
        self.hits = Counter("vouched_semantic_cache_hits_total",
                            "Questions answered from the semantic cache (a gate-passed answer, same corpus version).")
        self.misses = Counter("vouched_semantic_cache_misses_total",
                              "Semantic-cache lookups that found no stored answer close enough.")
