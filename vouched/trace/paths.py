"""Where a deployment's traces live (a SQLite file, or PostgreSQL), and how a sink is wired to a pipeline."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

TRACE_FILE = "traces.sqlite"


def trace_path(config: Any) -> Path:
    """``trace.path`` from the config when it has that section, else ``traces.sqlite`` beside the store."""
    section = getattr(config, "trace", None)
    path = getattr(section, "path", None)
    if path:
        return config.resolve(Path(path))
    return config.store_path.parent / TRACE_FILE


def open_trace_store(config: Any, **kw: Any) -> Any:
    """The trace store the config names: ``TraceStore`` (a SQLite file at ``trace_path``) or,
    with ``trace.backend = "postgres"``, ``PostgresTraceStore`` in the ``[store]`` database and
    schema. Both open lazily; ``kw`` (e.g. ``clock``) goes to the constructor."""
    section = getattr(config, "trace", None)
    if getattr(section, "backend", "sqlite") == "postgres":
        from vouched.trace.postgres import PostgresTraceStore

        return PostgresTraceStore(config.store.dsn, schema=config.store.pg_schema, **kw)
    from vouched.trace.store import TraceStore

    return TraceStore(trace_path(config), **kw)


def trace_sink_for(config: Any) -> Callable[[Any], None] | None:
    """A trace store's sink for the config (None when ``trace.enabled`` is false). Opens lazily."""
    section = getattr(config, "trace", None)
    if section is not None and not getattr(section, "enabled", True):
        return None
    return open_trace_store(config).sink


def chain_sinks(*sinks: Callable[[Any], None] | None) -> Callable[[Any], None] | None:
    """One sink that calls each given sink in order (None entries are skipped).

    A sink that raises is logged and skipped: the others still run, and the answer is not
    broken by its bookkeeping.
    """
    live = [s for s in sinks if s is not None]
    if not live:
        return None

    def sink(record: Any) -> None:
        for s in live:
            try:
                s(record)
            except Exception:
                logging.getLogger("vouched.trace").exception("trace sink %r failed", s)

    return sink
