"""Prometheus metrics, one registry per app (no global default registry: tests build many apps).

    vouched_http_requests_total{route,method,status}     requests by route and status
    vouched_answers_total{outcome,layer}                 outcome by the layer that decided
                                                         (outcome="abandoned": the reader left)
    vouched_gate_stops_total{rule}                       L4/L5 stops by gate rule
    vouched_stage_seconds{stage}                         pipeline stage latencies (from traces)
    vouched_time_to_first_event_seconds{endpoint}        request start → first event ready
    vouched_client_disconnects_total{endpoint}           readers who left before the end

and, read at scrape time from the spend module's own counters (`attach`), so they count
every reservation and check, not only those made through HTTP:

    vouched_spend_reservations_total, vouched_spend_refused_total{reason=cap|store},
    vouched_spend_settled_total, vouched_spend_settled_microusd_total,
    vouched_spend_over_bound_total, vouched_spend_settle_errors_total,
    vouched_rate_allowed_total, vouched_rate_limited_total{limit},
    vouched_rate_store_errors_total (counter-store failures: rate limits fail open)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from vouched.answer.pipeline import TraceRecord

_STAGE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

class _PlainCounters(Collector):
    """Exports `vouched.spend.metrics` counters (objects with `.counters()`) as they stand."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def collect(self) -> Iterator[CounterMetricFamily]:
        for c in self.source.counters():
            labels = [c.label] if c.label else []
            family = CounterMetricFamily(c.name, c.help, labels=labels)
            for value, count in sorted(c.values().items()):
                family.add_metric([value] if labels else [], float(count))
            if not labels and not c.values():
                family.add_metric([], 0.0)
            yield family

    def describe(self) -> Iterator[CounterMetricFamily]:
        return self.collect()


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter("vouched_http_requests", "HTTP requests by route, method and status.",
                                ["route", "method", "status"], registry=r)
        self.answers = Counter("vouched_answers", "Answers by outcome and the layer that decided it.",
                               ["outcome", "layer"], registry=r)
        self.gate_stops = Counter("vouched_gate_stops", "Sentence-gate stops (L4/L5) by rule.", ["rule"], registry=r)
        self.stage_seconds = Histogram("vouched_stage_seconds", "Pipeline stage latency.", ["stage"],
                                       buckets=_STAGE_BUCKETS, registry=r)
        self.first_event_seconds = Histogram("vouched_time_to_first_event_seconds",
                                             "Time from request to the first event (sentence, notice or refusal).",
                                             ["endpoint"], buckets=_STAGE_BUCKETS, registry=r)
        self.disconnects = Counter("vouched_client_disconnects", "Readers who left before the answer ended.",
                                   ["endpoint"], registry=r)
        self._attached: list[int] = []

    def attach(self, source: Any) -> None:
        """Export a spend/rate metrics object (`vouched.spend.SpendMetrics`, `RateMetrics`) at scrape time."""
        if source is None or not hasattr(source, "counters") or id(source) in self._attached:
            return
        self._attached.append(id(source))
        self.registry.register(_PlainCounters(source))

    def observe_trace(self, trace: TraceRecord) -> None:
        """The pipeline's trace sink: outcome by layer, gate stops, stage latencies."""
        outcome = trace.outcome or "abandoned"
        self.answers.labels(outcome=outcome, layer=trace.layer or "none").inc()
        if outcome == "held" and trace.category:
            self.gate_stops.labels(rule=trace.category).inc()
        for stage, ms in trace.stages_ms.items():
            self.stage_seconds.labels(stage=stage).observe(ms / 1000)

    def render(self) -> bytes:
        return generate_latest(self.registry)
