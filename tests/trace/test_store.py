"""The trace store: the SQLite file and PostgreSQL (tests/conftest.py `postgres_dsn`, a real
server; each test its own schema). Tests taking `make_store` run on both backends."""

import socket
import sqlite3
import threading
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from vouched.answer.pipeline import TraceRecord
from vouched.trace import postgres as pgtrace
from vouched.trace.postgres import PostgresTraceStore
from vouched.trace.store import (
    MIGRATIONS, AmbiguousTraceId, TraceNotFound, TraceStore, TraceStoreError, migrate, migration_hash,
)

# Migrations already released: never edit one of these, append a new migration instead.
RELEASED = {
    "001_traces": "dc9034ed27dd824c066c8f75d28d04eb9eeb3148376fba403750b6d8ade35337",
    "002_feedback": "6d12a272d04a532120968fe63d1e1db3be9fab9866e172289015b50c09dc591c",
}
RELEASED_PG = {
    "001_traces": "c1729179903d75a0e284cbf2d7de2229d230d192dee275abbcf16dcd7126db3f",
    "002_feedback": "2eae929898654bb72a4fab91ae0c2703d8109e96b3b2abbe598be9d0dc13ec90",
}

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


class Clock:
    def __init__(self, t=T0):
        self.t = t

    def __call__(self):
        return self.t


def record(tid="a" * 32, **kw):
    base = dict(id=tid, question="Which database?", normalized="which database?", lang="en", route="retrieval",
                outcome="answered", threshold=0.3, evidence=0.61, evidence_run="question",
                retrieved=[{"id": "en/projects/x#2", "rank": 1, "dense": 0.61, "keyword": 0.5, "evidence": 0.61}],
                source_ids=["en/projects/x#2"], sentences=[{"text": "It ran on PostgreSQL [1].", "ok": True, "rule": None, "value": None}],
                usage={"input_tokens": 10, "output_tokens": 5}, stages_ms={"l1": 0.2, "retrieve": 3.5, "total": 9.0},
                warnings=["w"])
    base.update(kw)
    return TraceRecord(**base)


def _schema() -> str:
    return "tr_" + uuid.uuid4().hex[:12]


def _closed_port() -> int:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request, tmp_path, monkeypatch):
    """`make(**kw)` -> a new handle on one fresh trace store of either backend (`make.backend`)."""
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    made = []
    if request.param == "sqlite":
        def new(**kw):
            return TraceStore(tmp_path / "t.sqlite", **kw)
    else:
        dsn, schema = request.getfixturevalue("postgres_dsn"), _schema()

        def new(**kw):
            return PostgresTraceStore(dsn, schema=schema, **kw)

    def make(**kw):
        made.append(new(**kw))
        return made[-1]

    make.backend = request.param
    yield make
    for s in made:
        s.close()


@pytest.mark.parametrize("migrations, released", [(MIGRATIONS, RELEASED), (pgtrace.MIGRATIONS, RELEASED_PG)],
                         ids=["sqlite", "postgres"])
def test_migrations_are_append_only(migrations, released):
    names = [n for n, _ in migrations]
    assert len(set(names)) == len(names) and names == sorted(names)
    assert names[: len(released)] == list(released), "a released migration was removed or reordered"
    for name, sql in migrations[: len(released)]:
        assert migration_hash(sql) == released[name], f"migration {name} was edited: add a new one instead"


def test_migrations_applied_once_in_order(tmp_path):
    path = tmp_path / "t.sqlite"
    s = TraceStore(path)
    assert s.applied_migrations() == [n for n, _ in MIGRATIONS]
    s.close()
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn) == []  # nothing left to apply
    rows = conn.execute("SELECT seq, name FROM _migrations ORDER BY seq").fetchall()
    assert rows == [(i, n) for i, (n, _) in enumerate(MIGRATIONS, 1)]


def test_a_file_from_an_older_release_gets_only_the_new_migrations(tmp_path):
    path = tmp_path / "t.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, MIGRATIONS[:1]) == ["001_traces"]
    conn.execute("INSERT INTO traces (id, created_at, question) VALUES ('old1', '2026-01-01T00:00:00.000000Z', 'q')")
    conn.close()
    s = TraceStore(path)
    assert s.applied_migrations() == [n for n, _ in MIGRATIONS]
    assert s.get("old1")["question"] == "q"
    s.add_feedback("old1", True, "fine")


def test_an_edited_or_unknown_migration_is_refused(tmp_path):
    conn = sqlite3.connect(tmp_path / "t.sqlite", isolation_level=None)
    migrate(conn)
    edited = ((MIGRATIONS[0][0], MIGRATIONS[0][1] + "\n-- edited"), *MIGRATIONS[1:])
    with pytest.raises(TraceStoreError, match="edited"):
        migrate(conn, edited)
    with pytest.raises(TraceStoreError, match="newer"):
        migrate(conn, MIGRATIONS[:1])


def test_a_failed_migration_leaves_nothing_half_applied(tmp_path):
    conn = sqlite3.connect(tmp_path / "t.sqlite", isolation_level=None)
    bad = (*MIGRATIONS, ("003_bad", "CREATE TABLE ok_part (x);\nCREATE TABLE broken ("))
    with pytest.raises(sqlite3.Error):
        migrate(conn, bad)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "ok_part" not in tables and "traces" in tables
    assert [r[0] for r in conn.execute("SELECT name FROM _migrations")] == [n for n, _ in MIGRATIONS]


def test_write_and_get_round_trip(make_store):
    s = make_store(clock=Clock())
    s.sink(record())
    t = s.get("a" * 32)
    assert t["question"] == "Which database?" and t["outcome"] == "answered" and t["evidence"] == 0.61
    assert t["retrieved"][0]["id"] == "en/projects/x#2" and t["stages_ms"]["retrieve"] == 3.5
    assert t["sentences"][0]["ok"] is True and t["warnings"] == ["w"]
    assert t["created_at"] == "2026-11-30T09:00:00.000000Z"
    assert t["failure_class"] is None and t["feedback"] == []
    s.set_failure_class("aaaa", "ranking")
    assert s.get("aaaa")["failure_class"] == "ranking"


def test_sink_never_raises(make_store, tmp_path, caplog):
    if make_store.backend == "sqlite":
        (tmp_path / "dir.sqlite").mkdir()
        broken = TraceStore(tmp_path / "dir.sqlite")  # a directory: cannot be opened
    else:
        broken = PostgresTraceStore(f"postgresql://postgres@127.0.0.1:{_closed_port()}/postgres")  # nobody listens
    broken.sink(record())
    assert broken.errors == 1 and sum(broken.error_kinds.values()) == 1 and len(broken.error_kinds) == 1
    s = make_store()
    s.sink(record())
    s.sink(record())  # duplicate id
    s.sink(object())  # not a trace at all
    assert s.errors == 2
    assert "not written" in caplog.text


def test_get_by_prefix(make_store):
    s = make_store()
    s.sink(record("abcd1234" + "0" * 24))
    s.sink(record("abcd9999" + "0" * 24))
    s.sink(record("abce" + "1" * 28))
    assert s.get("abcd1")["id"] == "abcd1234" + "0" * 24
    assert s.get("abce")["id"].startswith("abce1")
    with pytest.raises(AmbiguousTraceId, match="abcd1234"):
        s.get("abcd")
    with pytest.raises(TraceNotFound):
        s.get("ffff")
    with pytest.raises(TraceNotFound, match="at least"):
        s.get("ab")  # too short to be a prefix
    with pytest.raises(TraceNotFound):
        s.get("abc%")  # no LIKE: a wildcard means itself


def test_list_since_limit_and_outcome(make_store):
    clock = Clock()
    s = make_store(clock=clock)
    for i, (hours, outcome) in enumerate([(0, "answered"), (1, "refused"), (3, "held")]):
        clock.t = T0 + timedelta(hours=hours)
        s.sink(record(f"{i:04d}" + "f" * 28, outcome=outcome))
    assert [r["outcome"] for r in s.list()] == ["held", "refused", "answered"]  # newest first
    assert [r["outcome"] for r in s.list(since=T0 + timedelta(minutes=30))] == ["held", "refused"]
    assert [r["outcome"] for r in s.list(since=T0 + timedelta(hours=1))] == ["held", "refused"]  # inclusive
    assert len(s.list(limit=1)) == 1
    assert [r["outcome"] for r in s.list(outcome="refused")] == ["refused"]
    # a naive datetime is UTC; another zone compares by instant
    assert len(s.list(since=datetime(2026, 11, 30, 10, 30))) == 1
    assert len(s.list(since=datetime(2026, 11, 30, 11, 30, tzinfo=timezone(timedelta(hours=1))))) == 1
    row = s.list()[0]
    assert row["total_ms"] == 9.0 and row["feedback"] == {"count": 0, "useful": 0}
    assert "retrieved" not in row


def test_feedback(make_store):
    clock = Clock()
    s = make_store(clock=clock)
    s.sink(record())
    first = s.add_feedback("aaaa", True, "clear and cited")
    clock.t = T0 + timedelta(minutes=5)
    second = s.add_feedback("a" * 32, False, "")
    assert second > first
    fb = s.get("aaaa")["feedback"]
    assert [(f["useful"], f["comment"]) for f in fb] == [(True, "clear and cited"), (False, "")]
    assert fb[1]["created_at"] == "2026-11-30T09:05:00.000000Z"
    assert s.list()[0]["feedback"] == {"count": 2, "useful": 1}
    with pytest.raises(TraceNotFound):
        s.add_feedback("bbbb", True, "no such trace")


def test_concurrent_sinks_all_land(make_store):
    s = make_store()

    def work(n):
        for i in range(20):
            s.sink(record(f"{n:02d}{i:02d}" + "0" * 28))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert s.errors == 0 and len(s.list(limit=1000)) == 120


# -- PostgreSQL only ---------------------------------------------------------------------------

@pytest.fixture
def pg(postgres_dsn, monkeypatch):
    """(dsn, a fresh schema name, an autocommit admin connection)."""
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        yield postgres_dsn, _schema(), conn


def test_pg_migrations_applied_once_in_order(pg):
    dsn, schema, conn = pg
    with PostgresTraceStore(dsn, schema=schema) as s:
        assert s.applied_migrations() == [n for n, _ in pgtrace.MIGRATIONS]
    assert pgtrace.migrate(conn, schema) == []  # nothing left to apply
    rows = conn.execute(f"SELECT seq, name FROM {schema}.trace_migrations ORDER BY seq").fetchall()
    assert rows == [(i, n) for i, (n, _) in enumerate(pgtrace.MIGRATIONS, 1)]


def test_pg_schema_from_an_older_release_gets_only_the_new_migrations(pg):
    dsn, schema, conn = pg
    assert pgtrace.migrate(conn, schema, pgtrace.MIGRATIONS[:1]) == ["001_traces"]
    conn.execute(f"INSERT INTO {schema}.traces (id, created_at, question) VALUES ('old1', '2026-01-01T00:00:00Z', 'q')")
    with PostgresTraceStore(dsn, schema=schema) as s:
        assert s.applied_migrations() == [n for n, _ in pgtrace.MIGRATIONS]
        t = s.get("old1")
        assert t["question"] == "q" and t["created_at"] == "2026-01-01T00:00:00.000000Z"
        s.add_feedback("old1", True, "fine")


def test_pg_an_edited_or_unknown_migration_is_refused(pg):
    dsn, schema, conn = pg
    pgtrace.migrate(conn, schema)
    edited = ((pgtrace.MIGRATIONS[0][0], pgtrace.MIGRATIONS[0][1] + "\n-- edited"), *pgtrace.MIGRATIONS[1:])
    with pytest.raises(TraceStoreError, match="edited"):
        pgtrace.migrate(conn, schema, edited)
    with pytest.raises(TraceStoreError, match="newer"):
        pgtrace.migrate(conn, schema, pgtrace.MIGRATIONS[:1])
    conn.execute(f"INSERT INTO {schema}.trace_migrations (seq, name, sha256) VALUES (99, '099_future', 'x')")
    with PostgresTraceStore(dsn, schema=schema) as s, pytest.raises(TraceStoreError, match="upgrade vouched"):
        s.get("abcd")


def test_pg_a_failed_migration_leaves_nothing_half_applied(pg):
    dsn, schema, conn = pg
    bad = (*pgtrace.MIGRATIONS, ("003_bad", "CREATE TABLE ok_part (x int);\nCREATE TABLE broken ("))
    with pytest.raises(psycopg.Error):
        pgtrace.migrate(conn, schema, bad)
    tables = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                                         (schema,))}
    assert "ok_part" not in tables and {"traces", "feedback"} <= tables
    assert [r[0] for r in conn.execute(f"SELECT name FROM {schema}.trace_migrations ORDER BY seq")] == \
        [n for n, _ in pgtrace.MIGRATIONS]


def test_pg_reading_creates_nothing_and_replicas_share_one_store(pg):
    dsn, schema, conn = pg
    a, b = PostgresTraceStore(dsn, schema=schema), PostgresTraceStore(dsn, schema=schema)  # two replicas
    try:
        assert a.exists() is False
        assert conn.execute("SELECT to_regnamespace(%s)", (schema,)).fetchone()[0] is None  # not even the schema
        a.sink(record("r1" + "0" * 30, created_at="2026-11-30T10:00:00.123+00:00"))  # the pipeline's form
        assert a.exists() and b.exists()
        t = b.get("r100")
        assert t["created_at"] == "2026-11-30T10:00:00.123000Z"
        assert conn.execute(f"SELECT jsonb_typeof(data) FROM {schema}.traces").fetchone()[0] == "object"
        b.add_feedback("r100", False, "from the other replica")
        assert a.list()[0]["feedback"] == {"count": 1, "useful": 0}
    finally:
        a.close()
        b.close()


def test_pg_nul_characters_are_stored_as_replacement_characters(pg):
    dsn, schema, _ = pg
    with PostgresTraceStore(dsn, schema=schema) as s:
        s.write(record("n" * 32, question="a\x00b", warnings=["x\x00y", "back\\u0000slash"]))
        t = s.get("nnnn")
        assert t["question"] == "a\ufffdb" and t["warnings"] == ["x\ufffdy", "back\\u0000slash"]
        with pytest.raises(TraceNotFound):
            s.get("nn\x00n")


def test_pg_unreachable_server_is_a_trace_store_error(monkeypatch):
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    s = PostgresTraceStore(f"postgresql://postgres@127.0.0.1:{_closed_port()}/postgres")
    with pytest.raises(TraceStoreError, match="127.0.0.1"):
        s.get("abcd")
    with pytest.raises(TraceStoreError):
        s.exists()
    with pytest.raises(TraceStoreError, match="dsn"):
        PostgresTraceStore("")
