"""Where a PostgreSQL ingest's time goes: wall, client CPU and server CPU per write phase.

    .venv/bin/python benchmarks/pg_ingest_phases.py 100000            # chunks (bench scale's synthetic rows)
    .venv/bin/python benchmarks/pg_ingest_phases.py 20000 --variants  # then rebuild the HNSW index several ways
    .venv/bin/python benchmarks/pg_ingest_phases.py 100000 --queries   # then where a hybrid query's time goes

--queries: 41 hybrid searches (the first dropped), each store call the retriever makes timed
(p50 per method and the calls a search makes), and EXPLAIN (ANALYZE, BUFFERS) of one dense and
one keyword statement as the store sends them (captured from the connection).

Phases are the store's own (`PostgresStore.on_write_phase`): prepare (hash, vectors encoded),
copy_chunks (text analysis + binary COPY, streamed), copy_postings (server-side INSERT ...
SELECT + term_df COPY), hnsw_build, commit, analyze. Server CPU is the private server's
postmaster and every child (`server_cpu_seconds`), so it does not depend on the machine's load
the way wall time does. Needs the test extra (a private PostgreSQL). Prints one JSON line.
"""
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from vouched.bench.scale import (
    AS_OF,
    DIM,
    load_sources,
    percentile,
    synth_corpus,
    synth_queries,
)
from vouched.store.pgserver import BENCH_SETTINGS, local_postgres, server_cpu_seconds
from vouched.store.postgres import PostgresStore

VARIANTS = {  # name: (SET statements before the build, index options)
    "default (2 parallel workers)": ([], ""),
    "serial": (["SET max_parallel_maintenance_workers = 0"], ""),
    "ef_construction 32": ([], " WITH (ef_construction = 32)"),
    "m 12": ([], " WITH (m = 12)"),
}


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int, help="chunks to ingest (bench scale's synthetic rows), e.g. 100000")
    ap.add_argument("--variants", action="store_true", help="then rebuild the HNSW index several ways, timing each")
    ap.add_argument("--queries", action="store_true", help="then time where a hybrid query's time goes")
    args = ap.parse_args(argv)
    n, variants = args.n, args.variants
    src = load_sources(Path(__file__).resolve().parents[3] / "shared" / "benchmarks")
    chunks, vecs, topics = synth_corpus(src, n)
    out: dict = {"n": n, "load_before": os.getloadavg(), "phases": {}}
    with local_postgres(settings=BENCH_SETTINGS) as pg:
        st = PostgresStore(pg.dsn, keep_versions=1)
        st.migrations()  # connect + migrate outside the measurement
        mark = {"t": 0.0, "c": 0.0, "s": 0.0}

        def snap() -> None:
            mark.update(t=time.perf_counter(), c=time.process_time(), s=server_cpu_seconds(pg) or 0.0)

        def on_phase(name: str) -> None:
            t, c, s = time.perf_counter(), time.process_time(), server_cpu_seconds(pg) or 0.0
            out["phases"][name] = {"wall_s": round(t - mark["t"], 2), "client_cpu_s": round(c - mark["c"], 2),
                                   "server_cpu_s": round(s - mark["s"], 2)}
            snap()

        st.on_write_phase = on_phase
        snap()
        t0, c0, s0 = time.perf_counter(), time.process_time(), server_cpu_seconds(pg) or 0.0
        with st.new_version(embedding_model="synthetic-384", dim=DIM) as w:
            w.add(chunks, vecs)
        wall = time.perf_counter() - t0
        out["total"] = {"wall_s": round(wall, 2), "client_cpu_s": round(time.process_time() - c0, 2),
                        "server_cpu_s": round((server_cpu_seconds(pg) or 0.0) - s0, 2),
                        "chunks_per_s": round(n / wall, 1),
                        "chunks_per_s_without_hnsw": round(n / (wall - out["phases"].get("hnsw_build", {}).get("wall_s", 0)), 1)}
        out["build_times"] = w.build_times
        if variants:
            vid = st.current_version().id
            out["variants"] = {}
            for name, (sets, opts) in VARIANTS.items():
                with st._conn() as conn, conn.transaction():
                    conn.execute(f"DROP INDEX IF EXISTS chunks_v{vid}_hnsw")
                    conn.execute(f"SET LOCAL maintenance_work_mem = '{st.maintenance_work_mem}'")
                    for s in sets:
                        conn.execute(s.replace("SET ", "SET LOCAL ", 1))
                    t, s = time.perf_counter(), server_cpu_seconds(pg) or 0.0
                    conn.execute(f"CREATE INDEX chunks_v{vid}_hnsw ON chunks USING hnsw ((vec::vector({DIM})) vector_cosine_ops)"
                                 f"{opts} WHERE version_id = {vid}")
                    out["variants"][name] = {"wall_s": round(time.perf_counter() - t, 2),
                                             "server_cpu_s": round((server_cpu_seconds(pg) or 0.0) - s, 2)}
                    print(name, out["variants"][name], file=sys.stderr, flush=True)
        if args.queries:
            out["queries"] = hybrid_profile(st, synth_queries(src, topics, 41))
        st.close()
    out["load_after"] = os.getloadavg()
    print(json.dumps(out))


def hybrid_profile(st: PostgresStore, qs) -> dict:
    """Per store method: p50 ms and calls per hybrid search; EXPLAIN of the dense and keyword statements."""
    from vouched.config import RetrievalSettings
    from vouched.retrieve.hybrid import HybridRetriever
    from vouched.types import SearchFilters

    spent: dict[str, list[float]] = {}
    calls: dict[str, int] = {}
    for name in ("dense_search", "keyword_search", "get_terms", "get_chunks", "score_dense", "doc_freq", "current_version"):
        orig = getattr(st, name)

        def timed(*a, _orig=orig, _name=name, **k):
            t = time.perf_counter()
            try:
                return _orig(*a, **k)
            finally:
                spent.setdefault(_name, []).append((time.perf_counter() - t) * 1000)
                calls[_name] = calls.get(_name, 0) + 1

        setattr(st, name, timed)
    r = HybridRetriever(st, None, RetrievalSettings(), languages=("en",))
    f = SearchFilters(as_of=AS_OF)
    lat = []
    for i, (q, v) in enumerate(qs):
        if i == 1:
            spent.clear()
            calls.clear()
        t = time.perf_counter()
        r.search(q, filters=f, query_vector=v, query_lang="en")
        lat.append((time.perf_counter() - t) * 1000)
    m = len(qs) - 1
    prof = {"hybrid_p50_ms": round(percentile(lat[1:], 50), 2),
            "per_call": {k: {"p50_ms": round(percentile(v, 50), 2), "calls_per_search": round(calls[k] / m, 2),
                             "ms_per_search": round(sum(v) / m, 2)} for k, v in spent.items()}}
    # the statements as the store sends them, explained on the same connection settings
    import psycopg

    sent: list[tuple[str, object]] = []
    orig_execute = psycopg.Connection.execute

    def capture(self, query, params=None, **kw):
        sent.append((query, params))
        return orig_execute(self, query, params, **kw)

    psycopg.Connection.execute = capture
    try:
        q, v = qs[3]
        from vouched.text import analyze

        st.dense_search(v, f, 100)
        dense_sql = sent[-1]
        st.keyword_search(analyze(q, "en", unique=True), f, 100)
        kw_sql = sent[-1]
    finally:
        psycopg.Connection.execute = orig_execute
    plans = {}
    with st._conn() as conn:
        st._set_ef_search(conn, 400)
        for name, (sql, params) in (("dense", dense_sql), ("keyword", kw_sql)):
            rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params).fetchall()
            text = "\n".join(r[0] for r in rows)
            import re

            plans[name] = re.sub(r"'\[[-0-9.e,]+\]'", "'[...]'", text)  # the query vector, elided
    prof["explain"] = plans
    return prof


if __name__ == "__main__":
    main()
