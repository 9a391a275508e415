"""What the PostgreSQL trace store and counter stores share: connections and named migrations.

`PgConnections` is a small bounded pool of autocommit connections (psycopg 3) whose
`search_path` is the configured schema. It fails fast: a server that refuses the connection
raises at once (no background reconnect loop that a request would wait on), so the spend
gate refuses and the rate limiter passes immediately when PostgreSQL is down, as with Redis.
A connection that failed is dropped, with every idle one (after a server restart they are
all dead), and the next call connects afresh. An idle connection is checked before it is
handed out: one the server wrote to or closed while it sat idle (ended by
pg_terminate_backend, a restart) is dropped there, so a question asked once the server is
back is not refused on a connection that died in the pool. The first connection applies
the component's migrations (`migrate`), once per pool.

`migrate` mirrors `vouched.trace.store.migrate`: an append-only list of (name, SQL), each
applied once, in order, in its own transaction, recorded with the SHA-256 of its text in a
per-component table (`trace_migrations`, `counter_migrations`), so a database written by an
earlier release opens with a later one, and an edited or unknown migration is refused. It
runs under the same advisory lock as the chunk store's migrations (`PostgresStore`), so
replicas starting together, and the chunk store beside them in one schema, apply each once.

The DSN and schema are `[store].dsn` (or `VOUCHED_PG_DSN`, which wins) and
`[store].pg_schema`: traces, counters and chunks share one database and one schema.
"""

from __future__ import annotations

import hashlib
import os
import select
import threading
import weakref
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Callable, Iterator

DSN_ENV = "VOUCHED_PG_DSN"
MIGRATE_LOCK = "vouched-migrate"  # the key PostgresStore._migrate locks too

# Connections a forked child inherited: never closed or freed there (libpq's goodbye on the
# parent's socket would end the parent's session), only kept out of use.
_FORK_ORPHANS: list = []


from vouched.errors import PgUnavailable  # noqa: E402  (drawn in the one error tree: a StoreError)


def require_psycopg(what: str) -> None:
    """Fail at start, not on the first request, when the PostgreSQL client is not installed."""
    import importlib.util

    if importlib.util.find_spec("psycopg") is None:
        from vouched.errors import ConfigError

        raise ConfigError(f'{what} = "postgres" needs the PostgreSQL client: pip install "vouched[postgres]"')


def dsn_from(dsn: str) -> str:
    """The DSN to use: `VOUCHED_PG_DSN` when set, else the configured one."""
    return os.environ.get(DSN_ENV) or dsn


def check_schema(schema: str) -> str:
    """A plain identifier (it is spliced into SQL), lower-cased as PostgreSQL folds it."""
    if not schema or not schema.replace("_", "").isalnum() or not schema[0].isalpha() or not schema.isascii():
        raise ValueError(f"a PostgreSQL schema must be a plain identifier (letters, digits, _), got {schema!r}")
    return schema.lower()


def where(dsn: str, schema: str | None = None) -> str:
    """host:port/db (and schema) for messages; never the password."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        d = conninfo_to_dict(dsn)
        s = f"{d.get('host', 'localhost')}:{d.get('port', 5432)}/{d.get('dbname', '')}"
    except Exception:
        s = "the configured dsn"
    return f"PostgreSQL {s}" + (f" schema {schema}" if schema else "")


def migration_hash(sql: str) -> str:
    return hashlib.sha256(sql.encode("utf-8")).hexdigest()


from vouched.errors import MigrationError  # noqa: E402  (drawn in the one error tree: a StoreError)


def migrate(conn, schema: str, table: str, migrations: tuple[tuple[str, str], ...],
            error: Callable[[str], Exception] = MigrationError) -> list[str]:
    """Apply the migrations not yet applied, each in its own transaction; the names applied now.

    `conn` is an autocommit psycopg connection. Raises `error(message)` when the schema
    records a migration this code does not have ("newer") or one edited since ("edited").
    """
    schema = check_schema(schema)
    if not table.replace("_", "").isalnum():
        raise ValueError(f"bad migrations table name {table!r}")
    known = {name: migration_hash(sql) for name, sql in migrations}

    def recorded() -> dict[str, str]:
        return {r[0]: r[1] for r in conn.execute(f"SELECT name, sha256 FROM {schema}.{table}")}

    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (MIGRATE_LOCK,))
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        conn.execute(f"CREATE TABLE IF NOT EXISTS {schema}.{table} (seq INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
                     "sha256 TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
        done = recorded()
    unknown = sorted(set(done) - set(known))
    if unknown:
        raise error(f"{where_of(conn, schema)} was written by a newer vouched (migrations {unknown}): upgrade vouched")
    changed = sorted(n for n, h in done.items() if known[n] != h)
    if changed:
        raise error(f"migration(s) {changed} were edited after being applied; migrations are append-only")
    applied = []
    for seq, (name, sql) in enumerate(migrations, 1):
        if name in done:
            continue
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (MIGRATE_LOCK,))
            if name in recorded():  # another process applied it between our read and the lock
                continue
            conn.execute(f"SET LOCAL search_path TO {schema}, public")
            conn.execute(sql)
            conn.execute(f"INSERT INTO {schema}.{table} (seq, name, sha256) VALUES (%s, %s, %s)", (seq, name, known[name]))
        applied.append(name)
    return applied


def where_of(conn, schema: str) -> str:
    try:
        i = conn.info
        return f"PostgreSQL {i.host}:{i.port}/{i.dbname} schema {schema}"
    except Exception:
        return f"PostgreSQL schema {schema}"


def utc(t: datetime) -> datetime:
    """A naive datetime is UTC."""
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t


def idle_alive(conn) -> bool:
    """Is an idle connection still usable? Nothing may arrive on an idle autocommit session
    that does not LISTEN; a readable socket means the server sent its goodbye (a FATAL
    notice, end of file) or something this pool would not expect. Costs one poll, no round trip."""
    try:
        if conn.closed or conn.broken:
            return False
        poller = select.poll()  # (not select.select: a busy server's descriptors pass FD_SETSIZE)
        poller.register(conn.fileno(), select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except (OSError, ValueError):
        return False


def _close_quietly(conn) -> None:
    try:
        conn.close()
    except Exception:
        pass


class PgConnections:
    """A bounded pool of autocommit connections with `search_path` set to `schema`.

    setup(conn) runs on the first connection (the migrations); until it has succeeded, every
    new connection runs it. `settings` are session settings given to every new connection. At most `max_size` connections are in use at once; a caller
    waits up to `wait_s` for one to be returned.
    """

    def __init__(self, dsn: str, schema: str, *, max_size: int = 4, connect_timeout_s: float = 3.0,
                 wait_s: float = 10.0, setup: Callable | None = None, settings: dict[str, str] | None = None) -> None:
        self.dsn = dsn
        self.schema = check_schema(schema)
        self.max_size = max(1, int(max_size))
        self.connect_timeout_s = connect_timeout_s
        self.wait_s = wait_s
        self.setup = setup
        self.settings = dict(settings or {})  # session settings (lock_timeout, ...) set on each new connection
        self._ready = False
        self._reset()
        ref = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: (s := ref()) is not None and s._after_fork())

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.max_size)
        self._idle: list = []

    def _after_fork(self) -> None:
        _FORK_ORPHANS.extend(self._idle)
        self._reset()

    def _connect(self):
        import psycopg

        named = {} if "application_name" in self.dsn else {"application_name": "vouched"}  # the dsn's own wins
        conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=max(1, round(self.connect_timeout_s)), **named)
        try:
            if not self._ready and self.setup is not None:
                self.setup(conn)
            self._ready = True
            conn.execute(f"SET search_path TO {self.schema}, public")
            for name, value in self.settings.items():
                conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def connection(self) -> Iterator:
        from psycopg import OperationalError
        from psycopg.pq import TransactionStatus

        if not self._slots.acquire(timeout=self.wait_s):
            raise PgUnavailable(f"no free connection to {where(self.dsn, self.schema)} within {self.wait_s:g} s")
        try:
            conn, stale = None, []
            with self._lock:
                while self._idle and conn is None:
                    c = self._idle.pop()
                    if idle_alive(c):
                        conn = c
                    else:
                        stale.append(c)
            for c in stale:
                _close_quietly(c)
            if conn is None:
                conn = self._connect()
            try:
                yield conn
            except BaseException as exc:
                if isinstance(exc, OperationalError) or conn.broken:
                    self._discard(conn, all_idle=True)
                elif conn.info.transaction_status == TransactionStatus.IDLE:
                    self._keep(conn)
                else:
                    self._discard(conn)
                raise
            if conn.closed or conn.info.transaction_status != TransactionStatus.IDLE:
                self._discard(conn)
            else:
                self._keep(conn)
        finally:
            self._slots.release()

    def _keep(self, conn) -> None:
        with self._lock:
            self._idle.append(conn)

    def _discard(self, conn, *, all_idle: bool = False) -> None:
        dead = [conn]
        if all_idle:
            with self._lock:
                dead += self._idle
                self._idle = []
        for c in dead:
            try:
                c.close()
            except Exception:
                pass

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            try:
                c.close()
            except Exception:
                pass
