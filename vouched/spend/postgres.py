"""Spend and rate counters in PostgreSQL (`[spend] backend = "postgres"`).

They live in the database and schema of `[store]` (`dsn`, or `VOUCHED_PG_DSN`, and
`pg_schema`), in tables created by append-only named migrations recorded in
`counter_migrations` (`vouched.pg.migrate`).

Spend. `spend_months` holds one row per month with its running totals (settled and held
micro-dollars); `spend_reservations` one row per reservation, as in the SQLite file. Every
operation on a month is ONE transaction that first takes that month's row lock
(`SELECT ... FOR UPDATE`), so operations on one month run one after another across every
process and replica: the check (`decide_reserve` on the totals) and the add cannot
interleave with another reservation's, and the cap is never overshot. Under READ COMMITTED
each later statement of the transaction sees everything committed by whoever held the lock
before. Inside the lock, expired unsettled reservations of the month (a crashed process's holds, a
settle that never arrived) are charged at their full bound: turned into settled rows and
their amounts moved from the held to the settled total, before the totals are read; the
money is never freed. Settling turns the reservation into a settled row of the actual cost
(re-created if it is missing) and moves the amounts between the totals.
A month's figures are the totals row, so a reserve costs the same on the first and the
millionth request of a month.

Rate. `rate_hits` holds one row per admitted request, as in the SQLite file. A `hit` is one
transaction that takes a transaction-scoped advisory lock on (schema, client key), reads
that key's hits inside the longest window, decides with `decide_rate`, and records the hit
if admitted: two requests of one client never both see the same count, so each window
admits exactly its count; different clients do not wait on each other.

`now` comes from the caller's clock, as in the other backends. A server that cannot be
reached fails at once (refused connection) or after the connect timeout: the spend gate
then refuses and the rate limiter passes (`Budget` and `RateLimiter` decide that).
"""

from __future__ import annotations

import uuid
from typing import Sequence

from vouched.errors import ConfigError
from vouched.pg import PgConnections, check_schema, dsn_from, migrate, require_psycopg, where
from vouched.spend.budget import decide_reserve
from vouched.spend.ratelimit import Limit, RateDecision, decide_rate

__all__ = ["MIGRATIONS", "MIGRATIONS_TABLE", "PostgresRateCounters", "PostgresSpendCounters", "migrate_counters"]

MIGRATIONS_TABLE = "counter_migrations"
LOCK_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 30.0

# Append only. Never edit, reorder or remove an entry: add a new one.
MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("001_counters", """
        CREATE TABLE spend_months (
            month           TEXT PRIMARY KEY,            -- "YYYY-MM", UTC; its row lock serialises the month
            settled_micros  BIGINT NOT NULL DEFAULT 0,   -- sum of settled reservations
            reserved_micros BIGINT NOT NULL DEFAULT 0    -- sum of open (unsettled) reservations
        );
        CREATE TABLE spend_reservations (
            id            TEXT PRIMARY KEY,
            month         TEXT NOT NULL,
            amount_micros BIGINT NOT NULL,               -- the bound while open, the actual cost once settled
            expires_at    DOUBLE PRECISION,              -- Unix seconds; NULL once settled
            settled       BOOLEAN NOT NULL DEFAULT FALSE
        );
        CREATE INDEX spend_open ON spend_reservations (month, expires_at) WHERE NOT settled;
        CREATE TABLE rate_hits (
            key TEXT NOT NULL,
            ts  DOUBLE PRECISION NOT NULL                -- Unix seconds of an admitted request
        );
        CREATE INDEX rate_hits_key_ts ON rate_hits (key, ts);
        CREATE INDEX rate_hits_ts ON rate_hits (ts);
    """),
)


def migrate_counters(conn, schema: str, migrations: tuple[tuple[str, str], ...] = MIGRATIONS) -> list[str]:
    return migrate(conn, schema, MIGRATIONS_TABLE, migrations)


class _PgCounters:
    def __init__(self, dsn: str = "", *, schema: str = "vouched", pool_size: int = 4, connect_timeout_s: float = 2.0,
                 wait_s: float = 10.0, lock_timeout_s: float = LOCK_TIMEOUT_S) -> None:
        require_psycopg("[spend] backend")
        self.dsn = dsn_from(dsn)
        if not self.dsn:
            raise ConfigError('[spend] backend = "postgres" needs a dsn: set store.dsn in vouched.toml or VOUCHED_PG_DSN')
        try:
            self.schema = check_schema(schema)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.location = where(self.dsn, self.schema)
        # A holder of a month's lock that stalls (a paused process) must not stall every request:
        # waiting on a lock gives up after lock_timeout_s (the reserve then refuses: fail closed),
        # and a transaction left idle is ended by the server, releasing its locks.
        self._pool = PgConnections(self.dsn, self.schema, max_size=pool_size, connect_timeout_s=connect_timeout_s,
                                   wait_s=wait_s, setup=lambda conn: migrate_counters(conn, self.schema),
                                   settings={"lock_timeout": f"{int(lock_timeout_s * 1000)}ms",
                                             "idle_in_transaction_session_timeout": f"{int(IDLE_TIMEOUT_S * 1000)}ms"})

    def close(self) -> None:
        self._pool.close()


def _lock_month(db, month: str, now: float) -> tuple[int, int]:
    """Take the month's row lock (creating the row on first use), charge its expired holds; (settled, reserved).

    SELECT ... FOR UPDATE that had to wait returns the row as its last holder committed it;
    after it, each statement's snapshot holds every change made under the lock before.
    """
    lock = "SELECT settled_micros, reserved_micros FROM spend_months WHERE month = %s FOR UPDATE"
    row = db.execute(lock, (month,)).fetchone()
    if row is None:
        db.execute("INSERT INTO spend_months (month) VALUES (%s) ON CONFLICT (month) DO NOTHING", (month,))
        row = db.execute(lock, (month,)).fetchone()
    charged = int(db.execute(
        "WITH gone AS (UPDATE spend_reservations SET settled = TRUE, expires_at = NULL "
        "WHERE month = %s AND NOT settled AND expires_at <= %s "
        "RETURNING amount_micros) SELECT COALESCE(SUM(amount_micros), 0) FROM gone", (month, now)).fetchone()[0])
    if charged:  # (no write when nothing expired: the month's row is hot)
        db.execute("UPDATE spend_months SET reserved_micros = reserved_micros - %s, settled_micros = settled_micros + %s "
                   "WHERE month = %s", (charged, charged, month))
    return int(row[0]) + charged, int(row[1]) - charged


class PostgresSpendCounters(_PgCounters):
    """`vouched.spend.budget.Counters` in PostgreSQL."""

    def try_reserve(self, month: str, amount_micros: int, cap_micros: int, ttl_s: float, now: float) -> str | None:
        rid = uuid.uuid4().hex
        with self._pool.connection() as db, db.transaction():
            settled, reserved = _lock_month(db, month, now)
            if not decide_reserve(settled, reserved, int(amount_micros), int(cap_micros)):
                return None
            db.execute("INSERT INTO spend_reservations (id, month, amount_micros, expires_at, settled) "
                       "VALUES (%s, %s, %s, %s, FALSE)", (rid, month, int(amount_micros), now + ttl_s))
            db.execute("UPDATE spend_months SET reserved_micros = reserved_micros + %s WHERE month = %s",
                       (int(amount_micros), month))
        return rid

    def settle(self, month: str, reservation_id: str, actual_micros: int, now: float) -> None:
        actual = int(actual_micros)
        with self._pool.connection() as db, db.transaction():
            _lock_month(db, month, now)
            # What the reservation held before (an open bound, an earlier settled figure, or
            # nothing if it was reclaimed); the row lock on it comes with the month's.
            before = db.execute("SELECT amount_micros, settled FROM spend_reservations WHERE id = %s AND month = %s FOR UPDATE",
                                (reservation_id, month)).fetchone()
            if before is None:  # unknown here (e.g. a reserve that timed out on the way): count it anyway
                db.execute("INSERT INTO spend_reservations (id, month, amount_micros, expires_at, settled) "
                           "VALUES (%s, %s, %s, NULL, TRUE)", (reservation_id, month, actual))
                held, done = 0, 0
            else:
                db.execute("UPDATE spend_reservations SET amount_micros = %s, expires_at = NULL, settled = TRUE WHERE id = %s",
                           (actual, reservation_id))
                held, done = (0, int(before[0])) if before[1] else (int(before[0]), 0)
            db.execute("UPDATE spend_months SET reserved_micros = reserved_micros - %s, "
                       "settled_micros = settled_micros - %s + %s WHERE month = %s", (held, done, actual, month))

    def spent(self, month: str, now: float) -> tuple[int, int]:
        with self._pool.connection() as db, db.transaction():
            return _lock_month(db, month, now)


class PostgresRateCounters(_PgCounters):
    """`vouched.spend.ratelimit.RateCounters` in PostgreSQL: one row per admitted request."""

    PRUNE_EVERY_S = 600.0

    def __init__(self, dsn: str = "", **kw) -> None:
        super().__init__(dsn, **kw)
        self._pruned_at = float("-inf")

    def hit(self, key: str, limits: Sequence[Limit], now: float) -> RateDecision:
        longest = max((lim.period_s for lim in limits), default=0.0)
        key = key.replace("\x00", "\ufffd")
        with self._pool.connection() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"vouched-rate:{self.schema}:{key}",))
            if now - self._pruned_at >= self.PRUNE_EVERY_S:  # clients that stopped coming
                self._pruned_at = now
                # Other clients' rows are not under our lock: skip those another hit holds
                # (waiting on them could deadlock with it); a later prune takes them.
                db.execute("DELETE FROM rate_hits WHERE ctid = ANY(ARRAY(SELECT ctid FROM rate_hits WHERE ts <= %s "
                           "FOR UPDATE SKIP LOCKED))", (now - longest,))
            db.execute("DELETE FROM rate_hits WHERE key = %s AND ts <= %s", (key, now - longest))
            hits = [r[0] for r in db.execute("SELECT ts FROM rate_hits WHERE key = %s", (key,))]
            decision = decide_rate(hits, limits, now)
            if decision.allowed:
                db.execute("INSERT INTO rate_hits (key, ts) VALUES (%s, %s)", (key, now))
        return decision
