"""PostgreSQL (hnsw.ef_search 200 and 400; at 400 also with the dense and keyword searches run
one after the other instead of at once) against SQLite-HNSW: hybrid latency with the queries
interleaved, so a changing load hits every backend alike (at 400 also with the keyword side
from the SQL sum instead of the in-memory index), and each one's top-10 agreement with
SQLite-exact on the same rows (bench scale's synthetic corpus).

    .venv/bin/python benchmarks/pg_interleave.py 100000 101     # chunks, queries (the first is dropped)

ef_search is chosen by switching `vouched.store.postgres.EF_PER_RESULT` (2: 200 for the
retriever's 100 candidates, 4: 400) between queries. Needs the test extra (a private PostgreSQL).
"""
import os
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import vouched.store.postgres as pgmod
from vouched.config import RetrievalSettings
from vouched.bench.scale import (
    AS_OF,
    DIM,
    load_sources,
    percentile,
    recall_at,
    synth_corpus,
    synth_queries,
)
from vouched.retrieve.hybrid import HybridRetriever
from vouched.store import SQLiteStore
from vouched.store.pgserver import BENCH_SETTINGS, local_postgres
from vouched.types import SearchFilters

def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0].replace("\n", " "))
    ap.add_argument("chunks", type=int, help="synthetic rows in each store, e.g. 100000")
    ap.add_argument("queries", type=int, help="questions timed, interleaved across the backends; the first is dropped (warm-up)")
    a = ap.parse_args()
    n, nq = a.chunks, a.queries
    src = load_sources(Path(__file__).resolve().parents[3] / "shared" / "benchmarks")
    chunks, vecs, topics = synth_corpus(src, n)
    qs = synth_queries(src, topics, nq)
    work = Path(tempfile.mkdtemp(prefix="vouched-interleave-"))
    p = work / f"ann-{n}.sqlite"
    for x in work.glob(p.name + "*"): x.unlink()
    ann = SQLiteStore(p, keep_versions=1, ann_min_chunks=1, keyword_index_min_chunks=1)
    with ann.new_version(embedding_model="s", dim=DIM) as w:
        w.add(chunks, vecs)
    exact = SQLiteStore(p, keep_versions=1, ann_min_chunks=0, keyword_index_min_chunks=0)
    f = SearchFilters(as_of=AS_OF)
    print("sqlite-ann built", flush=True)
    with local_postgres(settings=BENCH_SETTINGS) as pg:
        st = pgmod.PostgresStore(pg.dsn, keep_versions=1)
        with st.new_version(embedding_model="s", dim=DIM) as w:
            w.add(chunks, vecs)
        del chunks, vecs
        print("pg built", w.build_times, flush=True)
        with st._conn() as conn:  # the in-memory keyword index's size and load time (a replica's first keyword query)
            t = time.perf_counter()
            idx = pgmod.pg_keyword.load(conn, st.current_version().id)
            print(f"keyword index: {len(idx.rows):,} postings, {len(idx.vocab):,} terms, {idx.nbytes / 2**20:.1f} MB, "
                  f"loaded in {time.perf_counter() - t:.2f} s", flush=True)
            del idx
        R = lambda s: HybridRetriever(s, None, RetrievalSettings(), languages=("en",))
        ra, rp, rx = R(ann), R(st), R(exact)
        # (retriever, EF_PER_RESULT, concurrent_reads): "-seq" runs the dense and keyword searches
        # one after the other, as before the retriever overlapped them.
        # "-sqlkw": the keyword side from the SQL sum over postings, as a version without an
        # in-memory keyword index (written before migration 5) is searched
        runs = {"sqlite-ann": (ra, None, None), "pg-ef200": (rp, 2, True), "pg-ef400": (rp, 4, True),
                "pg-ef400-seq": (rp, 4, False), "pg-ef400-sqlkw": (rp, 4, True)}
        lat = {k: [] for k in runs}; dense = {k: [] for k in runs}; kw = {k: [] for k in runs}; tops = {k: [] for k in runs}
        ref = []
        for qi, (q, v) in enumerate(qs):
            names = list(runs)[qi % len(runs):] + list(runs)[:qi % len(runs)]
            for k in names:
                r, per, together = runs[k]
                if per: pgmod.EF_PER_RESULT = per
                if together is not None: st.concurrent_reads = together
                if k.endswith("-sqlkw"): st._keyword_index = lambda conn, vid: None
                else: st.__dict__.pop("_keyword_index", None)
                t = time.perf_counter()
                res = r.search(q, filters=f, query_vector=v, query_lang="en")
                lat[k].append((time.perf_counter() - t) * 1000)
                dense[k].append(res.times.dense_ms); kw[k].append(res.times.keyword_ms)
                tops[k].append([x.chunk.id for x in res.passages[:10]])
            ref.append([x.chunk.id for x in rx.search(q, filters=f, query_vector=v, query_lang="en").passages[:10]])
        for k in runs:
            ag = np.mean([recall_at(g, r) for g, r in zip(tops[k][1:], ref[1:])])
            print(f"{k}: hybrid p50 {percentile(lat[k][1:], 50):.1f} p95 {percentile(lat[k][1:], 95):.1f} ms, dense p50 {percentile(dense[k][1:], 50):.1f}, "
                  f"keyword p50 {percentile(kw[k][1:], 50):.1f}; top-10 agreement with SQLite-exact {ag:.4f} ({len(qs)-1} queries)", flush=True)
        st.close()
    for x in work.glob(p.name + "*"): x.unlink()


if __name__ == "__main__":
    main()
