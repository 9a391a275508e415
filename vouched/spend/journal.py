"""The settle journal: a settle the counter store did not accept waits here, durably, until it does.

    Budget.settle ─► counters.settle ── ok ─► done
                              └─ failed or past the deadline ─► journal.record (SQLite, fsync'd)
    retry thread  ─► every `retry_s`: counters.settle for each entry; an accepted one is deleted

The file is local to the service (one per machine, beside its other files), so a settle is
never lost with the counter store: a Redis that is down, a PostgreSQL that is paused. Every
store's settle is idempotent (it replaces the reservation's figure with the actual cost), so
an entry retried after a reply was lost, or by two processes sharing the file, counts once.
A later figure for the same reservation replaces the earlier entry (the last figure stands,
as in the stores). A process killed before it could write its entry loses nothing either:
its reservation expires and is charged at its full bound.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable

log = logging.getLogger("vouched.spend")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending_settles (
    reservation_id TEXT PRIMARY KEY,
    month          TEXT NOT NULL,
    actual_micros  INTEGER NOT NULL,
    recorded_at    REAL NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0
);
"""

SettleFn = Callable[[str, str, int, float], None]  # (month, reservation id, actual micros, now)


class SettleJournal:
    """Durable pending settles in one SQLite file, retried by one daemon thread while any wait."""

    def __init__(self, path: str | Path, *, retry_s: float = 1.0, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.retry_s = retry_s
        self.clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._settle: SettleFn | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._checked = False

    # -- the file --------------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists()
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # an entry survives a crash of the machine, not only the process
            conn.executescript(_SCHEMA)
            if new:  # the file's directory entry must survive a crash too
                fd = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            self._conn = conn
        return self._conn

    def record(self, month: str, reservation_id: str, actual_micros: int) -> None:
        """Write the settle durably (raises if the disk refuses) and make sure a retry runs."""
        with self._lock:
            self._db().execute(
                "INSERT INTO pending_settles (reservation_id, month, actual_micros, recorded_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (reservation_id) DO UPDATE SET month = excluded.month, actual_micros = excluded.actual_micros, "
                "recorded_at = excluded.recorded_at",
                (reservation_id, month, int(actual_micros), self.clock()))
        self._ensure_thread()
        self._wake.set()

    def pending(self) -> list[tuple[str, str, int]]:
        """(month, reservation id, actual micros) of every settle still waiting, oldest first."""
        with self._lock:
            rows = self._db().execute(
                "SELECT month, reservation_id, actual_micros FROM pending_settles ORDER BY recorded_at").fetchall()
        return [(m, r, int(a)) for m, r, a in rows]

    def drain(self, settle: SettleFn | None = None) -> int:
        """Try every waiting settle once; the number the store accepted (and that left the file)."""
        settle = settle or self._settle
        if settle is None:
            return 0
        done = 0
        for month, rid, actual in self.pending():
            try:
                settle(month, rid, actual, self.clock())
            except Exception as exc:
                with self._lock:
                    self._db().execute("UPDATE pending_settles SET attempts = attempts + 1 WHERE reservation_id = ?", (rid,))
                log.warning("journaled settle %s (%d µUSD) still not accepted: %r", rid, actual, exc)
                break  # the store is still down: wait for the next round
            with self._lock:  # delete only the figure just applied (a newer one may have replaced it)
                self._db().execute("DELETE FROM pending_settles WHERE reservation_id = ? AND actual_micros = ? AND month = ?",
                                   (rid, actual, month))
            done += 1
        return done

    # -- the retry thread --------------------------------------------------------------------
    def attach(self, settle: SettleFn) -> None:
        """The store's settle to retry with; starts the thread if entries wait from an earlier run."""
        self._settle = settle
        if not self._checked:
            self._checked = True
            if self.path.exists() and self.pending():
                log.warning("settle journal %s holds settles from an earlier run; retrying them", self.path)
                self._ensure_thread()

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            if self._settle is None:
                return
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="vouched-settle-journal", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.drain()
                left = self.pending()
            except Exception as exc:  # the journal file itself failed: keep trying, say so
                log.error("settle journal %s failed: %r", self.path, exc)
                left = [None]
            if not left:
                with self._lock:
                    if not self._pending_locked():
                        self._thread = None
                        return
            self._wake.wait(self.retry_s)
            self._wake.clear()

    def _pending_locked(self) -> bool:
        return self._db().execute("SELECT 1 FROM pending_settles LIMIT 1").fetchone() is not None

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(2 * self.retry_s + 1)
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


__all__ = ["SettleJournal"]
