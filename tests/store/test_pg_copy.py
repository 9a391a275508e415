"""Binary COPY encoding (vouched.store.pg_copy): the wire format by hand, then round trips through a real PostgreSQL."""

from __future__ import annotations

import struct
import time
import uuid
from collections import Counter
from datetime import date

import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.store.suite import ck, write
from vouched.store import pg_copy
from vouched.store.pg_schema import fts_tokens
from vouched.store.postgres import PostgresStore, bm25_weight
from vouched.text import analyze

MULTILINGUAL = ("lighthouse keeper", "فانوس دریایی", "منارة", "маяк зимой", "灯塔看守人", "प्रकाशस्तंभ",
                "água naïve", "Leuchtturm", "tab\there", "new\nline", "back\\slash \"quote\" 'q'", "emoji 🚢", "")


def _field(b: bytes) -> tuple[int, bytes]:
    (n,) = struct.unpack(">i", b[:4])
    return n, b[4:]


def test_scalar_fields():
    assert pg_copy.SIGNATURE == b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
    assert pg_copy.TRAILER == b"\xff\xff"
    assert pg_copy.NULL == b"\xff\xff\xff\xff"
    assert pg_copy.int8(-2) == struct.pack(">iq", 8, -2)
    assert pg_copy.int4(7) == struct.pack(">ii", 4, 7) and pg_copy.int4(None) == pg_copy.NULL
    assert pg_copy.boolean(True) == struct.pack(">i", 1) + b"\x01" and pg_copy.boolean(False)[-1:] == b"\x00"
    assert pg_copy.float8(0.1) == struct.pack(">id", 8, 0.1)
    assert pg_copy.day(date(2000, 1, 1)) == struct.pack(">ii", 4, 0)
    assert pg_copy.day(date(1999, 12, 31)) == struct.pack(">ii", 4, -1)
    assert pg_copy.day(None) == pg_copy.NULL and pg_copy.text(None) == pg_copy.NULL
    assert _field(pg_copy.text("灯塔")) == (6, "灯塔".encode())  # the length is in bytes, not characters
    assert _field(pg_copy.jsonb(["a"])) == (6, b'\x01["a"]')
    assert pg_copy.row_head(3) == b"\x00\x03"


def test_arrays_and_vectors():
    n, body = _field(pg_copy.text_array([]))
    assert n == 12 and body == struct.pack(">iii", 0, 0, 25)
    n, body = _field(pg_copy.text_array(["ab", "ج"]))
    assert body == struct.pack(">iiiii", 1, 0, 25, 2, 1) + struct.pack(">i", 2) + b"ab" + struct.pack(">i", 2) + "ج".encode()
    assert n == len(body)
    n, body = _field(pg_copy.int4_array([3, -1]))
    assert body == struct.pack(">iiiiiiiii", 1, 0, 23, 2, 1, 4, 3, 4, -1)
    assert _field(pg_copy.int4_array([]))[1] == struct.pack(">iii", 0, 0, 23)
    m = np.array([[0.5, -1.25, 3.0], [1e-8, 0.0, -0.0]], dtype=np.float32)
    for row, f in zip(m, pg_copy.vector_fields(m)):
        n, body = _field(f)
        assert n == 4 + 12 and struct.unpack(">hh", body[:4]) == (3, 0)
        assert np.array_equal(np.frombuffer(body[4:], dtype=">f4"), row)


@pytest.fixture(scope="module")
def conn(postgres_dsn):
    with psycopg.connect(postgres_dsn, autocommit=True) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield c


rows_strategy = st.lists(st.tuples(
    st.integers(-2**63, 2**63 - 1),
    st.one_of(st.none(), st.integers(-2**31, 2**31 - 1)),
    st.one_of(st.none(), st.sampled_from(MULTILINGUAL), st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))),
    st.one_of(st.none(), st.dates(date(1, 1, 1), date(9999, 12, 31))),
    st.booleans(),
    st.lists(st.sampled_from(MULTILINGUAL[:9] + ("x",)), max_size=4),
    st.lists(st.one_of(st.sampled_from(MULTILINGUAL), st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))), max_size=5),
    st.lists(st.integers(-2**31, 2**31 - 1), max_size=6),
    st.lists(st.floats(-2.0**100, 2.0**100, width=32), min_size=3, max_size=3),
    st.floats(allow_nan=False),
), max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows_strategy)
def test_binary_copy_round_trips_through_postgres(conn, rows):
    table = "copy_" + uuid.uuid4().hex[:10]
    conn.execute(f"CREATE TEMP TABLE {table} (a bigint, b integer, c text, d date, e boolean, f jsonb, g text[], "
                 "h integer[], v vector(3), x float8)")
    vecs = pg_copy.vector_fields(np.array([r[8] for r in rows], dtype=np.float32).reshape(len(rows), 3))
    data = pg_copy.rows(
        (pg_copy.int8(a), pg_copy.int4(b), pg_copy.text(c), pg_copy.day(d), pg_copy.boolean(e), pg_copy.jsonb(f),
         pg_copy.text_array(g), pg_copy.int4_array(h), vec, pg_copy.float8(x))
        for (a, b, c, d, e, f, g, h, _v, x), vec in zip(rows, vecs))
    with conn.cursor().copy(f"COPY {table} FROM STDIN (FORMAT BINARY)") as cp:
        cp.write(pg_copy.SIGNATURE + data + pg_copy.TRAILER)
    got = conn.execute(f"SELECT a, b, c, d, e, f, g, h, v::text, x FROM {table} ORDER BY ctid").fetchall()
    conn.execute(f"DROP TABLE {table}")
    assert len(got) == len(rows)
    for (a, b, c, d, e, f, g, h, v, x), r in zip(got, rows):
        assert (a, b, c, d, e, f, g, h) == r[:8]
        assert np.array_equal(np.array(v.strip("[]").split(","), dtype=np.float32), np.array(r[8], dtype=np.float32))
        assert x == r[9]


def test_written_postings_carry_python_bm25_weights_exactly(postgres_dsn, monkeypatch):
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    texts = ["the lighthouse keeper keeps the lighthouse lamp", "فانوس دریایی در زمستان روشن است", "灯塔看守人在冬天点灯",
             "маяк светит зимой, маяк светит", "a b c d e f g lighthouse"]
    chunks = [ck(f"d{i}#0", t, lang=lang) for i, (t, lang) in enumerate(zip(texts, ["en", "fa", "zh", "ru", "en"]))]
    s = PostgresStore(postgres_dsn, schema="t_" + uuid.uuid4().hex[:12], pool_size=2)
    try:
        write(s, chunks)
        lex = {c.id: Counter(x for t in analyze(c.embed_text, c.lang) for x in fts_tokens(t)) for c in chunks}
        total = sum(sum(v.values()) for v in lex.values())
        avgdl = total / len(chunks)
        want = {(cid, t): (n, bm25_weight(n, sum(cnt.values()), avgdl)) for cid, cnt in lex.items() for t, n in cnt.items()}
        with s._conn() as c:
            got = {(cid, t): (tf, w) for cid, t, tf, w in c.execute(
                "SELECT ch.chunk_id, p.term, p.tf, p.w FROM postings p JOIN chunks ch ON ch.rowid = p.chunk_row")}
            df = dict(c.execute("SELECT term, df FROM term_df").fetchall())
            stored = {r[0]: (r[1], r[2]) for r in c.execute("SELECT chunk_id, lexemes, lexeme_tf FROM chunks")}
            order = [r[0] for r in c.execute("SELECT term FROM postings ORDER BY ctid")]
        assert got == want  # the same doubles, not merely close ones
        assert df == Counter(t for cnt in lex.values() for t in cnt)
        assert stored == {cid: (sorted(cnt), [cnt[t] for t in sorted(cnt)]) for cid, cnt in lex.items()}
        assert order == sorted(order)  # written in term order (code points)
        assert s.current_version().chunk_count == len(chunks)
    finally:
        s.close()


def test_server_cpu_seconds_counts_the_servers_work(tmp_path):
    from vouched.store.pgserver import LocalPostgres, local_postgres, server_cpu_seconds

    assert server_cpu_seconds(LocalPostgres("", 0, tmp_path, tmp_path)) is None  # no postmaster.pid there
    with local_postgres() as pg:
        before = server_cpu_seconds(pg)
        with psycopg.connect(pg.dsn, autocommit=True) as c:
            c.execute("SELECT sum(sqrt(x)) FROM generate_series(1, 3000000) x").fetchone()
            live = server_cpu_seconds(pg)  # the backend is running: counted as the postmaster's child
        assert before is not None and live - before > 0.1
        # Once the backend exits and the postmaster reaps it, its time is in the postmaster's
        # cumulative children's times. Until the reap, an exited backend is a zombie whose times
        # read 0 (seen on a loaded machine: before 0.02, after 0.02), so the reap is waited for.
        deadline = time.monotonic() + 30
        while (after := server_cpu_seconds(pg)) < live - 0.02 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert after - before > 0.1
