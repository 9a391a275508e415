"""Traces and readers' feedback in PostgreSQL: `TraceStore`'s interface and semantics.

`[trace] backend = "postgres"` puts them in the database and schema of `[store]` (`dsn`, or
`VOUCHED_PG_DSN`, and `pg_schema`), so every replica writes to one place and `vouched
traces` sees them all. Tables `traces` and `feedback`, created by append-only named
migrations recorded in `trace_migrations` (`vouched.pg.migrate`: the same rules as the
SQLite file's `_migrations` — a migration is never edited; add the next one).

Differences from the SQLite file, none visible through the methods:
- `created_at` is a `timestamptz` (the `since` filter compares instants); it is read back
  in `utc_iso`'s format, whatever form the record gave it in.
- `data` (everything of a record that is not a column) is `jsonb`.
- ids are `text COLLATE "C"`, so a prefix is a range on the primary key in code point
  order, whatever the database's collation.
- PostgreSQL text cannot hold NUL: a NUL character in a record is stored as U+FFFD.

Like `TraceStore`, `sink` never raises (errors are logged and counted), the reading and
feedback methods raise `TraceStoreError` (or its subclasses), and nothing is opened until
first use. An unreachable server fails fast (a refused connection at once, an unanswered
one after `connect_timeout_s`) so a down database costs an answer at most that.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Callable, Iterator

from vouched.pg import (
    PgConnections, PgUnavailable, check_schema, dsn_from, migrate as pg_migrate, require_psycopg, utc, where,
)
from vouched.trace.store import (
    COLUMNS, MIN_PREFIX, TraceNotFound, TraceSink, TraceStoreError, _now, one_match, split_record, summary,
    utc_iso,
)

__all__ = ["MIGRATIONS", "MIGRATIONS_TABLE", "PostgresTraceStore", "migrate"]

MIGRATIONS_TABLE = "trace_migrations"

# Append only. Never edit, reorder or remove an entry: add a new one.
MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("001_traces", """
        CREATE TABLE traces (
            id TEXT COLLATE "C" PRIMARY KEY,
            created_at TIMESTAMPTZ NOT NULL,
            question TEXT NOT NULL,
            normalized TEXT NOT NULL DEFAULT '',
            lang TEXT NOT NULL DEFAULT '',
            route TEXT NOT NULL DEFAULT '',
            layer TEXT,
            category TEXT,
            outcome TEXT NOT NULL DEFAULT '',
            threshold DOUBLE PRECISION,
            evidence DOUBLE PRECISION,
            evidence_run TEXT NOT NULL DEFAULT '',
            data JSONB NOT NULL DEFAULT '{}',
            failure_class TEXT
        );
        CREATE INDEX traces_created_at ON traces (created_at);
        CREATE INDEX traces_outcome ON traces (outcome, created_at);
    """),
    ("002_feedback", """
        CREATE TABLE feedback (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            trace_id TEXT COLLATE "C" NOT NULL REFERENCES traces (id),
            created_at TIMESTAMPTZ NOT NULL,
            useful BOOLEAN NOT NULL,
            comment TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX feedback_trace ON feedback (trace_id);
    """),
)

_SELECT = f"id, created_at, {', '.join(COLUMNS)}, data, failure_class"
# A JSON "\u0000" escape not itself escaped (jsonb refuses NUL).
_JSON_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def migrate(conn, schema: str, migrations: tuple[tuple[str, str], ...] = MIGRATIONS) -> list[str]:
    """Apply the trace migrations this schema lacks; the names applied now (TraceStoreError if newer/edited)."""
    return pg_migrate(conn, schema, MIGRATIONS_TABLE, migrations, TraceStoreError)


def _text(v: Any) -> Any:
    return v.replace("\x00", "\ufffd") if isinstance(v, str) else v


def _created(value: Any, clock: Callable[[], datetime]) -> datetime:
    if isinstance(value, datetime):
        return utc(value)
    if value:
        try:
            return utc(datetime.fromisoformat(str(value).replace("Z", "+00:00")))
        except ValueError:
            raise ValueError(f"created_at {value!r} is not an ISO date and time") from None
    return utc(clock())


class PostgresTraceStore(TraceSink):
    """Traces and feedback in PostgreSQL (`[store].dsn` / VOUCHED_PG_DSN, schema `[store].pg_schema`).

    `clock` returns the current time (tests pass a fake one). Thread-safe: each call takes a
    connection of a small pool (`pool_size`).
    """

    def __init__(self, dsn: str = "", *, schema: str = "vouched", clock: Callable[[], datetime] = _now,
                 pool_size: int = 4, connect_timeout_s: float = 3.0) -> None:
        require_psycopg("[trace] backend")
        self.dsn = dsn_from(dsn)
        if not self.dsn:
            raise TraceStoreError('[trace] backend = "postgres" needs a dsn: set store.dsn in vouched.toml or VOUCHED_PG_DSN')
        try:
            self.schema = check_schema(schema)
        except ValueError as exc:
            raise TraceStoreError(str(exc)) from None
        self.clock = clock
        self.errors = 0  # writes that failed inside `sink` (logged and swallowed)
        self.error_kinds: Counter[str] = Counter()  # the same, by exception class
        self.location = where(self.dsn, self.schema)
        self._pool = PgConnections(self.dsn, self.schema, max_size=pool_size, connect_timeout_s=connect_timeout_s,
                                   setup=lambda conn: migrate(conn, self.schema))

    # -- connection and schema -------------------------------------------------------------
    @contextmanager
    def _conn(self) -> Iterator:
        """A pooled connection; failing to reach the server is a TraceStoreError (as an unopenable file is)."""
        import psycopg

        try:
            with self._pool.connection() as db:
                yield db
        except (psycopg.OperationalError, PgUnavailable) as exc:
            raise TraceStoreError(f"trace store {self.location}: {str(exc).strip()}") from exc

    def exists(self) -> bool:
        """Has anything created the traces table yet? (Reading commands never create it.)"""
        import psycopg

        try:
            with psycopg.connect(self.dsn, autocommit=True, connect_timeout=max(1, round(self._pool.connect_timeout_s))) as c:
                row = c.execute("SELECT to_regclass(%s) IS NOT NULL", (f"{self.schema}.traces",)).fetchone()
        except psycopg.Error as exc:
            raise TraceStoreError(f"trace store {self.location}: {exc}".strip()) from exc
        return bool(row[0])

    def applied_migrations(self) -> list[str]:
        with self._conn() as db:
            return [r[0] for r in db.execute(f"SELECT name FROM {MIGRATIONS_TABLE} ORDER BY seq")]

    def close(self) -> None:
        self._pool.close()

    # -- writing -----------------------------------------------------------------------------
    def write(self, record: Any, *, failure_class: str | None = None) -> str:
        """Insert one trace (a TraceRecord or its dict); raises on failure. Returns its id."""
        from psycopg.types.json import Jsonb

        tid, row, d = split_record(record)
        tid = _text(tid)
        row = {c: _text(v) for c, v in row.items()}
        created = _created(d.pop("created_at", None), self.clock)
        failure_class = _text(failure_class or d.pop("failure_class", None))
        data = _JSON_NUL.sub(r"\1\\ufffd", json.dumps(d, ensure_ascii=False, default=str, sort_keys=True))
        with self._conn() as db:
            db.execute(
                f"INSERT INTO traces ({_SELECT}) VALUES (%s, %s, {', '.join(['%s'] * len(COLUMNS))}, %s, %s)",
                (tid, created, *(row[c] for c in COLUMNS), Jsonb(data, dumps=lambda s: s), failure_class),
            )
        return tid

    def set_failure_class(self, trace_id: str, failure_class: str | None) -> None:
        """Record the failure class the eval harness found (it knows the expected outcome)."""
        tid = self.resolve(trace_id)
        with self._conn() as db:
            db.execute("UPDATE traces SET failure_class = %s WHERE id = %s", (_text(failure_class), tid))

    def add_feedback(self, trace_id: str, useful: bool, comment: str = "") -> int:
        """Attach a reader's verdict to a trace (id or unique prefix); returns the feedback id."""
        tid = self.resolve(trace_id)
        with self._conn() as db:
            return int(db.execute(
                "INSERT INTO feedback (trace_id, created_at, useful, comment) VALUES (%s, %s, %s, %s) RETURNING id",
                (tid, utc(self.clock()), bool(useful), _text(comment or "")),
            ).fetchone()[0])

    # -- reading -----------------------------------------------------------------------------
    def resolve(self, id_or_prefix: str) -> str:
        """The full id of the one trace whose id is, or starts with, the given text."""
        p = (id_or_prefix or "").strip()
        if not p:
            raise TraceNotFound("give a trace id (or its first characters)")
        if "\x00" in p:
            raise TraceNotFound(f"no trace with id {p!r}")
        with self._conn() as db:
            if db.execute("SELECT 1 FROM traces WHERE id = %s", (p,)).fetchone():
                return p
            if len(p) < MIN_PREFIX:
                raise TraceNotFound(f"no trace with id {p!r} (a prefix needs at least {MIN_PREFIX} characters)")
            # A range on the primary key (code point order: the column is COLLATE "C"); no
            # LIKE, so '%' and '_' in the input mean themselves.
            rows = db.execute("SELECT id FROM traces WHERE id >= %s AND id < %s ORDER BY id LIMIT 6",
                              (p, p + "\U0010ffff")).fetchall()
        return one_match(p, [r[0] for r in rows], self.location)

    def get(self, id_or_prefix: str) -> dict:
        """One trace as a dict: the columns, the JSON fields, and its feedback (oldest first)."""
        tid = self.resolve(id_or_prefix)
        with self._conn() as db:
            cur = db.execute(f"SELECT {_SELECT} FROM traces WHERE id = %s", (tid,))
            names = [c.name for c in cur.description]
            row = cur.fetchone()
            fb = db.execute("SELECT id, created_at, useful, comment FROM feedback WHERE trace_id = %s ORDER BY id",
                            (tid,)).fetchall()
        if row is None:  # deleted between resolve and read
            raise TraceNotFound(f"no trace with id {tid!r} in {self.location}")
        return {**_row(dict(zip(names, row))),
                "feedback": [{"id": f[0], "created_at": utc_iso(f[1]), "useful": bool(f[2]), "comment": f[3]} for f in fb]}

    def list(self, since: datetime | None = None, limit: int = 50, outcome: str | None = None) -> list[dict]:
        """Traces newest first, each a summary dict (no passages or sentences)."""
        where_, args = [], []
        if since is not None:
            where_.append("created_at >= %s")
            args.append(utc(since))
        if outcome:
            where_.append("outcome = %s")
            args.append(_text(outcome))
        sql = (f"SELECT {', '.join('t.' + c for c in _SELECT.split(', '))}, "
               "(SELECT COUNT(*) FROM feedback f WHERE f.trace_id = t.id) AS feedback_count, "
               "(SELECT SUM(useful::int) FROM feedback f WHERE f.trace_id = t.id) AS useful_count FROM traces t"
               + (" WHERE " + " AND ".join(where_) if where_ else "")
               + " ORDER BY t.created_at DESC, t.id DESC LIMIT %s")
        with self._conn() as db:
            cur = db.execute(sql, (*args, max(0, int(limit))))
            names = [c.name for c in cur.description]
            rows = [dict(zip(names, r)) for r in cur.fetchall()]
        return [summary(_row(r), r["feedback_count"], r["useful_count"]) for r in rows]


def _row(row: dict) -> dict:
    d = dict(row)
    data = d.pop("data") or {}
    if isinstance(data, str):
        data = json.loads(data)
    d.pop("feedback_count", None)
    d.pop("useful_count", None)
    d["created_at"] = utc_iso(d["created_at"])
    return {**data, **d}
