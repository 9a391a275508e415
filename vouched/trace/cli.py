"""`vouched trace ID`, `vouched traces --since 2h`, `vouched feedback ID --useful/--not-useful`.

Each command returns 0 when done and raises from the error tree otherwise (the CLI maps it
with the one table, vouched.errors.EXIT_CODES): a TraceStoreError (exit 1) for no such trace,
an ambiguous prefix, no trace file yet or an unreachable trace store; a ConfigError or an
InputError (exit 2) for the config or a --since that is not a duration or a date. Reading
never creates the trace file.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

from rich.console import Console

from vouched.errors import EXIT_OK, InputError, TraceNotFound, TraceStoreError, VouchedError

__all__ = ["feedback_command", "parse_since", "trace_command", "traces_command"]

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.I)


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """'90s', '30m', '2h', '1d', '2w' (before now), or an ISO date / datetime (naive = UTC).

    Raises InputError (a ValueError) with a message that says what is accepted.
    """
    now = now or datetime.now(timezone.utc)
    m = _DURATION.match(text or "")
    if m:
        return now - timedelta(**{_UNITS[m.group(2).lower()]: float(m.group(1))})
    s = (text or "").strip()
    try:
        if len(s) == 10:
            d = date.fromisoformat(s)
            return datetime(d.year, d.month, d.day, tzinfo=timezone.utc)
        t = datetime.fromisoformat(s.replace("Z", "+00:00"))
        return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    except ValueError:
        raise InputError(f"--since {text!r}: give a duration such as 30m, 2h, 1d, 2w, or a date YYYY-MM-DD[THH:MM]") from None


def _open(config_path: Path | None):
    """(config, trace store); never creates the trace file (or tables)."""
    from vouched.config import load_config
    from vouched.trace.paths import open_trace_store

    cfg = load_config(config_path)
    store = open_trace_store(cfg)
    try:
        exists = store.exists()
    except TraceStoreError:
        raise
    except VouchedError as exc:  # PostgreSQL unreachable: nothing can be shown
        raise TraceStoreError(str(exc)) from exc
    if not exists:
        what = "does not exist" if cfg.trace.backend == "sqlite" else "has no traces table"
        raise TraceNotFound(f"no traces recorded yet: {store.location} {what} "
                            "(traces are written by `vouched ask` and the service)")
    return cfg, store


def _run(config_path, body: Callable) -> int:
    cfg, store = _open(config_path)
    try:
        return body(cfg, store)
    finally:
        store.close()


def trace_command(config_path: Path | None, trace_id: str, as_json: bool = False, *,
                  out: Console | None = None) -> int:
    """Print one trace (id or a unique prefix of at least 4 characters)."""
    from vouched.trace.render import render_trace

    out = out or Console()

    def body(cfg, store) -> int:
        t = store.get(trace_id)
        if as_json:
            print(json.dumps(t, ensure_ascii=False, indent=2, default=str), file=out.file)
        else:
            out.print(render_trace(t, prices=dict(cfg.spend.prices)))
        return EXIT_OK

    return _run(config_path, body)


def traces_command(config_path: Path | None, since: str | None = None, limit: int = 50, as_json: bool = False,
                   outcome: str | None = None, *, out: Console | None = None,
                   now: datetime | None = None) -> int:
    """List traces newest first, optionally since a duration ago or a date, and by outcome."""
    from vouched.trace.render import traces_table

    out = out or Console()
    since_t = parse_since(since, now) if since else None

    def body(cfg, store) -> int:
        rows = store.list(since=since_t, limit=limit, outcome=outcome)
        if as_json:
            print(json.dumps(rows, ensure_ascii=False, indent=2, default=str), file=out.file)
            return EXIT_OK
        title = f"traces{' since ' + since_t.strftime('%Y-%m-%d %H:%M UTC') if since_t else ''}: {len(rows)}"
        out.print(traces_table(rows, title=title))
        return EXIT_OK

    return _run(config_path, body)


def feedback_command(config_path: Path | None, trace_id: str, useful: bool, comment: str = "", *,
                     out: Console | None = None) -> int:
    """Attach a reader's verdict (useful / not useful, with a comment) to a trace."""
    out = out or Console()

    def body(cfg, store) -> int:
        tid = store.resolve(trace_id)
        fid = store.add_feedback(tid, useful, comment or "")
        out.print(f"feedback {fid} on trace {tid[:12]}: {'useful' if useful else 'not useful'}"
                  + (f" — {comment}" if comment else ""), highlight=False)
        return EXIT_OK

    return _run(config_path, body)

