"""Traces and readers' feedback in SQLite, through append-only named migrations.

Every question the pipeline runs leaves one row in ``traces`` (``TraceStore.sink`` is the
pipeline's ``trace_sink``); readers' feedback rows point at a trace. The schema grows only
by appending to ``MIGRATIONS``: each entry is a name and one SQL script, applied once, in
order, and recorded in ``_migrations`` with the SHA-256 of its text. A migration already
applied is never edited (opening a store whose recorded hash differs from the code's raises
``TraceStoreError``, and ``tests/trace`` pins the hashes), so a trace file written by any
earlier release opens with any later one — as simonw/llm does for its logs.

Writing a trace must never break an answer: ``sink`` logs and counts its errors
(``TraceStore.errors``) and returns. The reading and feedback methods raise, so a command
can say what went wrong.

Columns hold what is filtered or listed on; everything else of a ``TraceRecord`` (retrieved
passages, source ids, sentences with their verdicts, usage, stage latencies, warnings, and
any field the record gains later) is one JSON object in ``data``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import sqlite3
import threading
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable


__all__ = [
    "COLUMNS",
    "MIGRATIONS",
    "AmbiguousTraceId",
    "TraceNotFound",
    "TraceSink",
    "TraceStore",
    "TraceStoreError",
    "migration_hash",
    "utc_iso",
]

log = logging.getLogger("vouched.trace")

MIN_PREFIX = 4

# Append only. Never edit, reorder or remove an entry: add a new one.
MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("001_traces", """
        CREATE TABLE traces (
            id TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            question TEXT NOT NULL,
            normalized TEXT NOT NULL DEFAULT '',
            lang TEXT NOT NULL DEFAULT '',
            route TEXT NOT NULL DEFAULT '',
            layer TEXT,
            category TEXT,
            outcome TEXT NOT NULL DEFAULT '',
            threshold REAL,
            evidence REAL,
            evidence_run TEXT NOT NULL DEFAULT '',
            data TEXT NOT NULL DEFAULT '{}',
            failure_class TEXT
        );
        CREATE INDEX traces_created_at ON traces(created_at);
        CREATE INDEX traces_outcome ON traces(outcome, created_at);
    """),
    ("002_feedback", """
        CREATE TABLE feedback (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            trace_id TEXT NOT NULL REFERENCES traces(id),
            created_at TEXT NOT NULL,
            useful INTEGER NOT NULL CHECK (useful IN (0, 1)),
            comment TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX feedback_trace ON feedback(trace_id);
    """),
)

# The columns of `traces` filled from a TraceRecord's fields of the same name.
COLUMNS = ("question", "normalized", "lang", "route", "layer", "category", "outcome", "threshold", "evidence", "evidence_run")


# Drawn in vouched.errors (the one error tree); re-exported here for the imports that use this module.
from vouched.errors import AmbiguousTraceId, TraceNotFound, TraceStoreError  # noqa: E402,F401


def migration_hash(sql: str) -> str:
    return hashlib.sha256(sql.encode("utf-8")).hexdigest()


def utc_iso(t: datetime) -> str:
    """The one timestamp format stored (UTC, microseconds), so text order is time order.

    A naive datetime is taken as UTC.
    """
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _as_dict(record: Any) -> dict:
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return dataclasses.asdict(record)
    if isinstance(record, dict):
        return dict(record)
    raise TypeError(f"a trace is a TraceRecord (or dict), got {type(record).__name__}")


def split_record(record: Any) -> tuple[str, dict, dict]:
    """(id, the column values with their defaults, everything else) of a trace record."""
    d = _as_dict(record)
    tid = str(d.pop("id"))
    row = {c: d.pop(c, None) for c in COLUMNS}
    row["question"] = row["question"] or ""
    for c in ("normalized", "lang", "route", "outcome", "evidence_run"):
        row[c] = row[c] or ""
    return tid, row, d


class TraceSink:
    """What both trace stores share: the never-raising ``sink`` and the context manager.

    A subclass sets ``location`` (for messages), ``errors`` and ``error_kinds``, and has
    ``write`` and ``close``. A failed write is logged with its message and counted, in
    ``errors`` and by exception class in ``error_kinds``; no last error is kept (the store is
    shared by every request).
    """

    location: str
    errors: int
    error_kinds: Counter[str]

    def write(self, record: Any, *, failure_class: str | None = None) -> str:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def sink(self, record: Any) -> None:
        """The pipeline's trace sink: write, and never raise (errors are logged and counted)."""
        try:
            self.write(record)
        except Exception as exc:  # an answer must not fail because its trace could not be written
            self.errors += 1
            self.error_kinds[type(exc).__name__] += 1
            log.warning("trace %s not written to %s: %s: %s", getattr(record, "id", "?"), self.location,
                        type(exc).__name__, exc)


class TraceStore(TraceSink):
    """One SQLite file of traces and feedback.

    ``clock`` returns the current time (tests pass a fake one). The connection is shared
    between threads under a lock: the service writes from its event loop while retrieval
    runs in worker threads.
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], datetime] = _now) -> None:
        self.path = Path(path)
        self.location = str(self.path)  # where the traces are, for messages (as PostgresTraceStore has)
        self.clock = clock
        self.errors = 0  # writes that failed inside `sink` (logged and swallowed)
        self.error_kinds: Counter[str] = Counter()  # the same, by exception class
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    # -- connection and schema -------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, check_same_thread=False, timeout=5.0, isolation_level=None)
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA foreign_keys=ON")
                migrate(conn)
            except sqlite3.Error as exc:
                raise TraceStoreError(f"trace store {self.path}: {exc}") from exc
            self._conn = conn
        return self._conn

    def exists(self) -> bool:
        """Has anything created the trace file yet? (Reading commands never create it.)"""
        return self.path.exists()

    def applied_migrations(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db().execute("SELECT name FROM _migrations ORDER BY seq")]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- writing -----------------------------------------------------------------------------
    def write(self, record: Any, *, failure_class: str | None = None) -> str:
        """Insert one trace (a TraceRecord or its dict); raises on failure. Returns its id."""
        tid, row, d = split_record(record)
        created = d.pop("created_at", None) or utc_iso(self.clock())
        failure_class = failure_class or d.pop("failure_class", None)
        data = json.dumps(d, ensure_ascii=False, default=str, sort_keys=True)
        with self._lock:
            self._db().execute(
                f"INSERT INTO traces (id, created_at, {', '.join(COLUMNS)}, data, failure_class) "
                f"VALUES (?, ?, {', '.join('?' * len(COLUMNS))}, ?, ?)",
                (tid, created, *(row[c] for c in COLUMNS), data, failure_class),
            )
        return tid

    def set_failure_class(self, trace_id: str, failure_class: str | None) -> None:
        """Record the failure class the eval harness found (it knows the expected outcome)."""
        tid = self.resolve(trace_id)
        with self._lock:
            self._db().execute("UPDATE traces SET failure_class = ? WHERE id = ?", (failure_class, tid))

    def add_feedback(self, trace_id: str, useful: bool, comment: str = "") -> int:
        """Attach a reader's verdict to a trace (id or unique prefix); returns the feedback id."""
        tid = self.resolve(trace_id)
        with self._lock:
            cur = self._db().execute(
                "INSERT INTO feedback (trace_id, created_at, useful, comment) VALUES (?, ?, ?, ?)",
                (tid, utc_iso(self.clock()), int(bool(useful)), comment or ""),
            )
            return int(cur.lastrowid)

    # -- reading -----------------------------------------------------------------------------
    def resolve(self, id_or_prefix: str) -> str:
        """The full id of the one trace whose id is, or starts with, the given text."""
        p = (id_or_prefix or "").strip()
        if not p:
            raise TraceNotFound("give a trace id (or its first characters)")
        with self._lock:
            db = self._db()
            if db.execute("SELECT 1 FROM traces WHERE id = ?", (p,)).fetchone():
                return p
            if len(p) < MIN_PREFIX:
                raise TraceNotFound(f"no trace with id {p!r} (a prefix needs at least {MIN_PREFIX} characters)")
            # A range on the primary key: no LIKE, so '%' and '_' in the input mean themselves.
            rows = db.execute("SELECT id FROM traces WHERE id >= ? AND id < ? ORDER BY id LIMIT 6",
                              (p, p + "\U0010ffff")).fetchall()
        return one_match(p, [r[0] for r in rows], self.path)

    def get(self, id_or_prefix: str) -> dict:
        """One trace as a dict: the columns, the JSON fields, and its feedback (oldest first)."""
        tid = self.resolve(id_or_prefix)
        with self._lock:
            db = self._db()
            row = db.execute("SELECT * FROM traces WHERE id = ?", (tid,)).fetchone()
            fb = db.execute("SELECT id, created_at, useful, comment FROM feedback WHERE trace_id = ? ORDER BY id",
                            (tid,)).fetchall()
        return {**_row(row), "feedback": [{**dict(f), "useful": bool(f["useful"])} for f in fb]}

    def list(self, since: datetime | None = None, limit: int = 50, outcome: str | None = None) -> list[dict]:
        """Traces newest first, each a summary dict (no passages or sentences)."""
        where, args = [], []
        if since is not None:
            where.append("created_at >= ?")
            args.append(utc_iso(since))
        if outcome:
            where.append("outcome = ?")
            args.append(outcome)
        sql = ("SELECT t.*, (SELECT COUNT(*) FROM feedback f WHERE f.trace_id = t.id) AS feedback_count, "
               "(SELECT SUM(useful) FROM feedback f WHERE f.trace_id = t.id) AS useful_count FROM traces t"
               + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY created_at DESC, id DESC LIMIT ?")
        with self._lock:
            rows = self._db().execute(sql, (*args, max(0, int(limit)))).fetchall()
        out = []
        for r in rows:
            out.append(summary(_row(r), r["feedback_count"], r["useful_count"]))
        return out


SUMMARY_KEYS = ("id", "created_at", "question", "lang", "route", "layer", "category", "outcome", "threshold", "evidence",
                "failure_class")


def one_match(prefix: str, ids: list[str], where: object) -> str:
    """The one id a prefix lookup found (up to 6 asked for), or the error a reader can act on."""
    if not ids:
        raise TraceNotFound(f"no trace with id {prefix!r} in {where}")
    if len(ids) > 1:
        shown = ", ".join(i[: len(prefix) + 6] for i in ids[:5]) + (", …" if len(ids) > 5 else "")
        raise AmbiguousTraceId(f"{prefix!r} matches several traces ({shown}): give more characters")
    return ids[0]


def summary(d: dict, feedback_count, useful_count) -> dict:
    """The summary `list` gives of one trace (both trace stores)."""
    return {
        **{k: d.get(k) for k in SUMMARY_KEYS},
        "total_ms": (d.get("stages_ms") or {}).get("total"),
        "feedback": {"count": int(feedback_count or 0), "useful": int(useful_count or 0)},
    }


def _row(row: sqlite3.Row) -> dict:
    d = dict(row)
    data = json.loads(d.pop("data") or "{}")
    d.pop("feedback_count", None)
    d.pop("useful_count", None)
    return {**data, **d}


def migrate(conn: sqlite3.Connection, migrations: tuple[tuple[str, str], ...] = MIGRATIONS) -> list[str]:
    """Apply the migrations not yet applied, in order, each in its own transaction.

    Returns the names applied now. Raises TraceStoreError when the file records a migration
    this code does not have, or one whose text has changed since it was applied.
    """
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (seq INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
                 "sha256 TEXT NOT NULL, applied_at TEXT NOT NULL)")
    done = {r[0]: r[1] for r in conn.execute("SELECT name, sha256 FROM _migrations")}
    known = {name: migration_hash(sql) for name, sql in migrations}
    unknown = sorted(set(done) - set(known))
    if unknown:
        raise TraceStoreError(f"the trace file was written by a newer vouched (migrations {unknown}): upgrade vouched")
    changed = [n for n, h in done.items() if known[n] != h]
    if changed:
        raise TraceStoreError(f"migration(s) {changed} were edited after being applied; migrations are append-only")
    applied = []
    for seq, (name, sql) in enumerate(migrations, 1):
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have applied it between our read and the lock.
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                conn.execute("COMMIT")
                continue
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO _migrations (seq, name, sha256, applied_at) VALUES (?, ?, ?, ?)",
                         (seq, name, known[name], utc_iso(_now())))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


def _statements(script: str) -> list[str]:
    """Split a migration into statements (executescript would commit our transaction)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
