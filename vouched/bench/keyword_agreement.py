"""The in-memory BM25 keyword index against FTS5 on the same SQLite file.

Builds `vouched bench scale`'s synthetic corpus (SciFact + SQuAD sentences) of N chunks with
the keyword index, then asks 200 SQuAD questions through both keyword searches and sorts each
query's top 10 into: the same set; different only among chunks tied on FTS5's tenth score;
or different otherwise. The known cause of the last kind: FTS5 splits stored terms such as
"100,000" or "3.5" into tokens, so its document frequency of a query term like "100" counts
them too; the index matches whole terms. Exits 1 when fewer than 95% of the queries agree
(same set, or differing only by ties), the target `vouched bench scale` applies.

    .venv/bin/python benchmarks/keyword_agreement.py 100000 [../shared/benchmarks]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from vouched.bench.scale import AS_OF, load_sources, synth_corpus, synth_queries
from vouched.store import SQLiteStore
from vouched.text import analyze
from vouched.types import SearchFilters


def agreement(n: int, bench: Path) -> int:
    src = load_sources(bench)
    chunks, vecs, topics = synth_corpus(src, n)
    qs = synth_queries(src, topics, 200)
    d = Path(tempfile.mkdtemp(prefix="kw-agree-"))
    try:
        idx = SQLiteStore(d / "s.sqlite", keep_versions=1, ann_min_chunks=0, keyword_index_min_chunks=1)
        with idx.new_version(dim=vecs.shape[1]) as w:
            for s in range(0, n, 10_000):
                w.add(chunks[s : s + 10_000], vecs[s : s + 10_000])
        fts = SQLiteStore(d / "s.sqlite", keep_versions=1, ann_min_chunks=0, keyword_index_min_chunks=0)
        f = SearchFilters(as_of=AS_OF)
        same = ties = other = 0
        for q, _ in qs:
            terms = analyze(q, "en", unique=True)
            a, b = fts.keyword_search(terms, f, 10), idx.keyword_search(terms, f, 10)
            if {x for x, _ in a} == {x for x, _ in b}:
                same += 1
                continue
            tenth = min(s for _, s in a)
            da, db = dict(a), dict(b)
            diff = [s for c, s in b if c not in da] + [s for c, s in a if c not in db]
            if all(abs(s - tenth) <= 1e-4 * abs(tenth) for s in diff):
                ties += 1
            else:
                other += 1
                print(f"differs: {terms}: index {b[-3:]} / FTS5 {a[-3:]}")
        print(f"{n} chunks, {len(qs)} queries: same top-10 set {same}, differ only by ties at the tenth score {ties}, "
              f"differ otherwise {other}")
        idx.close()
        fts.close()
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return 1 if (same + ties) < 0.95 * len(qs) else 0


def main(argv: list[str] | None = None) -> int:
    """`[N] [BENCH_DIR]` from the command line (100000 and ../shared/benchmarks by default)."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int, nargs="?", default=100_000, help="chunks in the synthetic corpus (default 100000)")
    ap.add_argument("bench_dir", type=Path, nargs="?",
                    default=Path(__file__).resolve().parents[2].parent / "shared" / "benchmarks",
                    help="the shared benchmark data (default ../shared/benchmarks)")
    args = ap.parse_args(argv)
    return agreement(args.n, args.bench_dir)


if __name__ == "__main__":
    sys.exit(main())
