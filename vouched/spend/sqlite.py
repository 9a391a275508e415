"""Spend and rate counters in one SQLite file (the embedded default).

Every operation is one `BEGIN IMMEDIATE` transaction: it takes the database's write lock
before reading, so two processes can never both read the same totals and both add. Threads
of one process share a connection behind a lock (SQLite serialises writers anyway, and a
queue on a lock is fairer than its busy-retry sleeps); other processes wait on the busy
timeout. WAL lets readers of the file (a CLI, a backup) run beside the writers;
`synchronous=NORMAL` survives a crash of the process, not of the machine.

A reservation is one row; settling turns it into a settled row of the actual cost. At the
start of every transaction an expired unsettled row (a crashed process's hold, or a settle
that never arrived) is turned into a settled row of its full bound: the call may have been
paid, so its money is never freed. A settle that arrives later replaces it with the cost.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from vouched.spend.budget import decide_reserve
from vouched.spend.ratelimit import Limit, RateDecision, decide_rate

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS spend_reservations (
    id            TEXT PRIMARY KEY,
    month         TEXT NOT NULL,          -- "YYYY-MM", UTC
    amount_micros INTEGER NOT NULL,       -- the bound while open, the actual cost once settled
    expires_at    REAL,                   -- Unix seconds; NULL once settled
    settled       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS spend_open ON spend_reservations (settled, expires_at);
CREATE INDEX IF NOT EXISTS spend_month ON spend_reservations (month, settled, amount_micros);  -- covers the totals
CREATE VIEW IF NOT EXISTS spend_totals AS
    SELECT month,
           COALESCE(SUM(CASE WHEN settled THEN amount_micros END), 0) AS settled_micros,
           COALESCE(SUM(CASE WHEN settled THEN NULL ELSE amount_micros END), 0) AS reserved_micros
    FROM spend_reservations GROUP BY month;
CREATE TABLE IF NOT EXISTS rate_hits (
    key TEXT NOT NULL,
    ts  REAL NOT NULL                     -- Unix seconds of an admitted request
);
CREATE INDEX IF NOT EXISTS rate_hits_key_ts ON rate_hits (key, ts);
"""


class _SQLiteFile:
    """One connection per process to the counters file, opened on first use."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 10.0) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        ref = weakref.ref(self)
        # A connection must not cross fork(); neither may a lock another thread held.
        os.register_at_fork(after_in_child=lambda: (s := ref()) is not None and s._forget())

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._conn = None

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
        try:
            self._wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}PRAGMA user_version={SCHEMA_VERSION};COMMIT;")
        except BaseException:
            conn.close()
            raise
        return conn

    def _wal(self, conn: sqlite3.Connection) -> None:
        """Switch a new file to WAL. Several processes (or handles) opening the same new file at once race for this
        switch, and SQLite answers "database is locked" at once instead of waiting on the busy timeout: retry until
        that timeout has passed."""
        deadline = time.monotonic() + self.busy_timeout_s
        pause = 0.005
        while True:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                self._conn = self._open()
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error:
                self._drop()
                raise
            try:
                yield conn
            except BaseException as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    self._drop()
                else:
                    if isinstance(exc, sqlite3.Error):
                        # The file failed (full disk, read-only, I/O error): a connection that met
                        # it may keep believing it (SQLite opens the WAL read-only for good once it
                        # found it unwritable), so the next transaction opens the file afresh.
                        self._drop()
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error:
                self._drop()
                raise

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass

    def close(self) -> None:
        with self._lock:
            self._drop()


def _reclaim(conn: sqlite3.Connection, now: float) -> None:
    """Expired, unsettled reservations are charged at their full bound (never freed)."""
    conn.execute("UPDATE spend_reservations SET settled = 1, expires_at = NULL WHERE settled = 0 AND expires_at <= ?", (now,))


def _totals(conn: sqlite3.Connection, month: str) -> tuple[int, int]:
    row = conn.execute("SELECT settled_micros, reserved_micros FROM spend_totals WHERE month = ?", (month,)).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


class SQLiteSpendCounters(_SQLiteFile):
    """`vouched.spend.budget.Counters` in SQLite."""

    def try_reserve(self, month: str, amount_micros: int, cap_micros: int, ttl_s: float, now: float) -> str | None:
        with self.transaction() as conn:
            _reclaim(conn, now)
            settled, reserved = _totals(conn, month)
            if not decide_reserve(settled, reserved, amount_micros, cap_micros):
                return None
            rid = uuid.uuid4().hex
            conn.execute("INSERT INTO spend_reservations (id, month, amount_micros, expires_at, settled) VALUES (?, ?, ?, ?, 0)",
                         (rid, month, amount_micros, now + ttl_s))
        return rid

    def settle(self, month: str, reservation_id: str, actual_micros: int, now: float) -> None:
        with self.transaction() as conn:
            # A reservation charged at its bound on expiry (a stream longer than the TTL, a
            # settle retried from the journal) now takes its reported cost.
            conn.execute(
                "INSERT INTO spend_reservations (id, month, amount_micros, expires_at, settled) VALUES (?, ?, ?, NULL, 1) "
                "ON CONFLICT (id) DO UPDATE SET amount_micros = excluded.amount_micros, expires_at = NULL, settled = 1",
                (reservation_id, month, actual_micros))
            _reclaim(conn, now)

    def spent(self, month: str, now: float) -> tuple[int, int]:
        with self.transaction() as conn:
            _reclaim(conn, now)
            return _totals(conn, month)


class SQLiteRateCounters(_SQLiteFile):
    """`vouched.spend.ratelimit.RateCounters` in SQLite: one row per admitted request."""

    PRUNE_EVERY_S = 600.0

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 2.0) -> None:
        super().__init__(path, busy_timeout_s=busy_timeout_s)
        self._pruned_at = float("-inf")

    def hit(self, key: str, limits: Sequence[Limit], now: float) -> RateDecision:
        longest = max((lim.period_s for lim in limits), default=0.0)
        with self.transaction() as conn:
            if now - self._pruned_at >= self.PRUNE_EVERY_S:  # clients that stopped coming
                conn.execute("DELETE FROM rate_hits WHERE ts <= ?", (now - longest,))
                self._pruned_at = now
            else:
                conn.execute("DELETE FROM rate_hits WHERE key = ? AND ts <= ?", (key, now - longest))
            hits = [r[0] for r in conn.execute("SELECT ts FROM rate_hits WHERE key = ?", (key,))]
            decision = decide_rate(hits, limits, now)
            if decision.allowed:
                conn.execute("INSERT INTO rate_hits (key, ts) VALUES (?, ?)", (key, now))
        return decision
