"""Spend and rate counters in PostgreSQL: the shared counter suite, PostgreSQL specifics, and
several OS processes (spawned, each with its own connections and threads) reserving against
one cap: zero overshoot. A real server (tests/conftest.py `postgres_dsn`); each test its own schema.
"""

from __future__ import annotations

import multiprocessing
import socket
import uuid

import psycopg
import pytest

from tests.spend.suite import MONTH, PRICE, T0, CountersSuite, FakeClock, run_together, spend_settings
from vouched.config import load_config
from vouched.pg import migration_hash
from vouched.spend import Budget, Limit, build_spend, upper_bound_micros
from vouched.spend.postgres import MIGRATIONS, PostgresRateCounters, PostgresSpendCounters, migrate_counters

RELEASED = {"001_counters": "a505929b3be41c0db8b764bea52985f82142fcb16f979111737dedf04845e70e"}


def _schema() -> str:
    return "sp_" + uuid.uuid4().hex[:12]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def pg_counters(postgres_dsn, monkeypatch):
    """`make(schema)` -> (spend, rate) handles with their own connections; closed afterwards."""
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    made = []

    def make(schema):
        pair = (PostgresSpendCounters(postgres_dsn, schema=schema), PostgresRateCounters(postgres_dsn, schema=schema))
        made.extend(pair)
        return pair

    yield make
    for c in made:
        c.close()


class TestPostgresCounters(CountersSuite):
    @pytest.fixture
    def make_counters(self, pg_counters):
        schema = _schema()
        return lambda: pg_counters(schema)

    @pytest.fixture
    def unreachable(self, monkeypatch):
        monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
        dsn = f"postgresql://postgres@127.0.0.1:{_closed_port()}/postgres"
        return PostgresSpendCounters(dsn), PostgresRateCounters(dsn)


def test_migrations_are_append_only():
    names = [n for n, _ in MIGRATIONS]
    assert len(set(names)) == len(names) and names == sorted(names)
    assert names[: len(RELEASED)] == list(RELEASED), "a released migration was removed or reordered"
    for name, sql in MIGRATIONS[: len(RELEASED)]:
        assert migration_hash(sql) == RELEASED[name], f"migration {name} was edited: add a new one instead"


def test_totals_row_equals_the_reservations_and_migrations_run_once(pg_counters, postgres_dsn):
    schema = _schema()
    spend, _ = pg_counters(schema)
    a = spend.try_reserve(MONTH, 700, 1000, 60, T0)
    b = spend.try_reserve(MONTH, 200, 1000, 60, T0 + 30)
    spend.settle(MONTH, a, 300, T0 + 1)
    assert spend.spent(MONTH, T0 + 61) == (300, 200)
    assert spend.spent(MONTH, T0 + 90) == (500, 0)  # b expired: charged at its full bound
    spend.settle(MONTH, b, 150, T0 + 91)  # settled after its expiry: the cost replaces the bound
    spend2, _ = pg_counters(schema)  # another replica on the same schema
    assert spend2.spent(MONTH, T0 + 91) == (450, 0)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        row = conn.execute(f"SELECT settled_micros, reserved_micros FROM {schema}.spend_months WHERE month = %s",
                           (MONTH,)).fetchone()
        sums = conn.execute(f"SELECT COALESCE(SUM(amount_micros) FILTER (WHERE settled), 0), "
                            f"COALESCE(SUM(amount_micros) FILTER (WHERE NOT settled), 0) "
                            f"FROM {schema}.spend_reservations WHERE month = %s", (MONTH,)).fetchone()
        assert tuple(row) == tuple(sums) == (450, 0)
        assert migrate_counters(conn, schema) == []
        assert [r[0] for r in conn.execute(f"SELECT name FROM {schema}.counter_migrations")] == ["001_counters"]


def test_old_rate_hits_are_pruned(pg_counters, postgres_dsn):
    schema = _schema()
    _, r = pg_counters(schema)
    limits = (Limit("minute", 5, 60),)
    for i in range(3):
        r.hit(f"k{i}", limits, T0)
    r.hit("other", limits, T0 + 601)  # past PRUNE_EVERY_S: everyone's old hits go
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        assert conn.execute(f"SELECT key FROM {schema}.rate_hits").fetchall() == [("other",)]


def test_build_spend_uses_the_store_database(tmp_path, postgres_dsn, monkeypatch):
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    schema = _schema()
    toml = tmp_path / "vouched.toml"
    toml.write_text(f'[store]\ndsn = "{postgres_dsn}"\npg_schema = "{schema}"\n'
                    f'[spend]\nbackend = "postgres"\nmonthly_cap_usd = 1.0\n'
                    f'[spend.prices.m]\ninput_per_mtok = 3.0\noutput_per_mtok = 15.0\n', encoding="utf-8")
    budget, limiter = build_spend(load_config(toml), clock=FakeClock())
    assert isinstance(budget.counters, PostgresSpendCounters) and budget.counters.schema == schema
    assert isinstance(limiter.counters, PostgresRateCounters)
    assert budget.reserve(model="m", prompt_bytes=100, max_output_tokens=100) is not None
    assert budget.status().reserved_usd > 0
    assert limiter.check("192.0.2.1").allowed
    budget.counters.close()
    limiter.counters.close()


def test_a_session_ended_while_idle_is_not_handed_out(pg_counters, postgres_dsn):
    """The server ends our idle sessions (pg_terminate_backend, as a restart would): the next
    reserve finds them dead in the pool, drops them and connects afresh instead of failing."""
    spend, _ = pg_counters(_schema())
    budget = Budget(spend_settings(10.0), spend, FakeClock())
    assert budget.reserve(model="m", prompt_bytes=10, max_output_tokens=10) is not None
    pids = [c.info.backend_pid for c in spend._pool._idle]
    assert pids
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))  # waits until the backend is gone
        assert not conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchall()
    assert budget.reserve(model="m", prompt_bytes=10, max_output_tokens=10) is not None
    assert budget.metrics.refused.value("store") == 0
    assert [c.info.backend_pid for c in spend._pool._idle] not in ([], pids)


def test_idle_alive_tells_a_dead_session_from_a_live_one(postgres_dsn):
    from vouched.pg import idle_alive

    with psycopg.connect(postgres_dsn, autocommit=True) as live, psycopg.connect(postgres_dsn, autocommit=True) as doomed:
        assert idle_alive(live) and idle_alive(doomed)
        live.execute("SELECT pg_terminate_backend(%s, 5000)", (doomed.info.backend_pid,))
        assert idle_alive(live) and not idle_alive(doomed)
        doomed.close()
        assert not idle_alive(doomed)


# -- several processes against one cap ---------------------------------------------------------

PROCESSES = 4
ATTEMPTS = 30  # per process, on as many threads released at once: 120 reservation attempts in all
POOL = 8  # connections per process and counter store
AMOUNT = upper_bound_micros(3000, 1024, PRICE)
ADMIT = 37  # the cap admits exactly this many
RATE_PER_MINUTE = 25


def _child(dsn, schema, start, out):
    """One process: its own connections, ATTEMPTS threads reserving (and hitting one rate key) at once."""
    spend = PostgresSpendCounters(dsn, schema=schema, pool_size=POOL)
    rate = PostgresRateCounters(dsn, schema=schema, pool_size=POOL)
    spend.spent(MONTH, T0)  # connected and migrated before the start, so all processes start level
    rate.hit("warm-up", (Limit("minute", 1, 60),), T0)
    out.put("ready")
    start.wait(60)
    limits = (Limit("minute", RATE_PER_MINUTE, 60),)

    def one(i):
        rid = spend.try_reserve(MONTH, AMOUNT, AMOUNT * ADMIT, 600, T0)
        return rid, rate.hit("198.51.100.9", limits, T0).allowed

    results = run_together(ATTEMPTS, one)
    out.put({"ids": [r for r, _ in results if r], "allowed": sum(a for _, a in results)})
    spend.close()
    rate.close()


def test_processes_share_one_budget_and_one_rate_limit_without_overshoot(postgres_dsn, monkeypatch):
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    schema = _schema()
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_child, args=(postgres_dsn, schema, start, out)) for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    try:
        for _ in procs:
            assert out.get(timeout=120) == "ready"
        start.set()  # release every process at once
        results = [out.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=30)
            assert p.exitcode == 0
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
    ids = [i for r in results for i in r["ids"]]
    assert len(ids) == ADMIT and len(set(ids)) == ADMIT  # exactly the cap, each reservation once
    spend = PostgresSpendCounters(postgres_dsn, schema=schema)
    assert spend.spent(MONTH, T0) == (0, ADMIT * AMOUNT)  # zero overshoot, nothing lost
    spend.close()
    assert sum(r["allowed"] for r in results) == RATE_PER_MINUTE  # the minute limit counted once across processes


def test_a_missing_dsn_or_a_bad_schema_is_a_config_error(monkeypatch):
    from vouched.errors import ConfigError

    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    with pytest.raises(ConfigError, match="store.dsn"):
        PostgresSpendCounters("")
    with pytest.raises(ConfigError, match="identifier"):
        PostgresRateCounters("postgresql://u@db/v", schema="a; DROP TABLE x")
    monkeypatch.setenv("VOUCHED_PG_DSN", "postgresql://u@envdb/v")
    assert PostgresSpendCounters("postgresql://u@other/v").dsn == "postgresql://u@envdb/v"


def test_a_stalled_lock_holder_makes_reserves_refuse_not_hang(postgres_dsn, monkeypatch):
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    schema = _schema()
    spend = PostgresSpendCounters(postgres_dsn, schema=schema, lock_timeout_s=0.3)
    budget = Budget(spend_settings(10.0), spend, FakeClock())
    assert budget.reserve(model="m", prompt_bytes=10, max_output_tokens=10) is not None
    with psycopg.connect(postgres_dsn) as holder:  # a transaction holding the month's lock, stalled
        holder.execute(f"SELECT 1 FROM {schema}.spend_months WHERE month = %s FOR UPDATE", (MONTH,))
        assert budget.reserve(model="m", prompt_bytes=10, max_output_tokens=10) is None
        assert budget.metrics.refused.value("store") == 1
        holder.rollback()
    assert budget.reserve(model="m", prompt_bytes=10, max_output_tokens=10) is not None
    spend.close()
