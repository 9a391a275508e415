"""Traces: every question leaves a record (SQLite, or PostgreSQL); readers' feedback attaches to it.

    TraceStore(path).sink      the pipeline's trace_sink (never raises)
    PostgresTraceStore         the same interface, in PostgreSQL (trace.backend = "postgres")
    open_trace_store(config)   the store the config names
    TraceStore.get / list      read them back; add_feedback attaches a verdict
    render_trace / trace_text  a trace for people (a held answer names rule and value)
    classify_failure           the failure class, when the expected outcome is known
    trace_path(config)         where a deployment's traces live
"""

from vouched.trace.failure import FAILURE_CLASSES, classify_failure
from vouched.trace.paths import chain_sinks, open_trace_store, trace_path, trace_sink_for
from vouched.trace.postgres import PostgresTraceStore
from vouched.trace.render import render_trace, trace_text
from vouched.trace.store import AmbiguousTraceId, TraceNotFound, TraceStore, TraceStoreError

__all__ = [
    "FAILURE_CLASSES",
    "AmbiguousTraceId",
    "PostgresTraceStore",
    "TraceNotFound",
    "TraceStore",
    "TraceStoreError",
    "chain_sinks",
    "classify_failure",
    "open_trace_store",
    "render_trace",
    "trace_path",
    "trace_sink_for",
    "trace_text",
]
