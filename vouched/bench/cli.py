"""`vouched bench retrieval`: pick the conditions, check inputs, run, print, return an exit code.

(`vouched bench run benchmarks/retrieval/FILE.yaml` runs one of these conditions too, beside the
other benchmarks' condition files in benchmarks/conditions/: vouched.bench.run.)

Exit codes: 0 every target met, 1 a target missed (returned); 2 bad input (raised as
BenchInputError, mapped by the CLI's one table) (dataset missing or malformed, a checksum or count differing from the
condition file, an unknown mode). Inputs are verified before any search runs.

Which conditions run: `--condition FILE` runs that one. Otherwise every condition file in
`benchmarks/retrieval/` whose dataset folder has the same name as `--dataset` runs, in file
name order — so `--dataset ../shared/benchmarks/xquad` runs xquad-es-en and xquad-es-es. A
dataset with no condition file runs unchecked (no targets, exit 0), with a warning.

JSON output: one condition prints its report object; several print
`{"dataset": <folder>, "passed": bool, "conditions": {<condition name>: <report>, ...}}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vouched.errors import EXIT_INPUT, EXIT_NO, EXIT_OK
from vouched.bench.conditions import MODES, Condition, load_condition, verify_inputs
from vouched.eval.datasets import BenchInputError, detect_format, load_dataset

BENCH_EXIT_OK, BENCH_EXIT_MISS, BENCH_EXIT_BAD_INPUT = EXIT_OK, EXIT_NO, EXIT_INPUT  # the one table (vouched.errors)

# Conditions run when a dataset has no condition file (e.g. outside the repository).
_ADHOC_XQUAD = (("xquad-es-es", "es", "es"), ("xquad-es-en", "es", "en"))


def repo_root() -> Path:
    """The checkout holding `benchmarks/` (editable install), else the working directory."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "benchmarks").is_dir() else Path.cwd()


def default_dataset_dir(name: str) -> Path:
    """Where the shared datasets live: `../shared/benchmarks/<name>` next to the repository."""
    return (repo_root() / ".." / "shared" / "benchmarks" / name).resolve()


def default_store_dir() -> Path:
    return repo_root() / ".vouched" / "bench"


@dataclass(frozen=True)
class Plan:
    name: str
    loader: str
    params: dict[str, str]
    condition: Condition | None


def find_conditions(dataset_dir: Path, root: Path | None = None) -> list[Path]:
    """Condition files whose dataset folder name matches `dataset_dir`'s."""
    folder = (root or repo_root()) / "benchmarks" / "retrieval"
    found = []
    for path in sorted(folder.glob("*.yaml")):
        if Path(load_condition(path).dataset.path).name == Path(dataset_dir).resolve().name:
            found.append(path)
    return found


def plan_conditions(dataset_dir: Path, condition: Path | None) -> tuple[list[Plan], list[str]]:
    if condition is not None:
        c = load_condition(condition)
        return [Plan(c.name, c.dataset.loader, c.dataset.params(), c)], []
    kind = detect_format(dataset_dir)
    files = find_conditions(dataset_dir)
    if files:
        conds = [load_condition(p) for p in files]
        return [Plan(c.name, c.dataset.loader, c.dataset.params(), c) for c in conds], []
    note = f"no condition file in benchmarks/retrieval/ for {dataset_dir.name}: inputs and targets are not checked"
    if kind == "beir":
        return [Plan(dataset_dir.name, "beir", {"split": "test"}, None)], [note]
    return [Plan(n, "xquad", {"query_lang": q, "doc_lang": d}, None) for n, q, d in _ADHOC_XQUAD], [note]


def bench_retrieval_command(
    dataset: Path,
    mode: str,
    as_json: bool,
    runs: int,
    condition: Path | None,
    *,
    store_dir: Path | None = None,
    progress: bool = True,
    embedder: Any = None,
    sample: int | None = None,
) -> int:
    """Run the retrieval benchmark as the CLI does: 0 every target met, 1 one missed.

    Input that cannot be used — an unknown mode, a dataset missing or differing from its
    condition file — raises BenchInputError (exit 2) before any search runs.
    """
    from vouched.bench.retrieval import run_retrieval_bench

    dataset = Path(dataset)
    modes = MODES if mode == "all" else (mode,)
    if mode != "all" and mode not in MODES:
        raise BenchInputError(f"--mode {mode!r} is not known; use keyword, dense, hybrid, hybrid+rerank or all")
    if runs < 1:
        raise BenchInputError(f"--runs must be >= 1, got {runs}")
    if sample is not None and sample < 1:
        raise BenchInputError(f"--sample must be >= 1, got {sample}")
    plans, notes = plan_conditions(dataset, condition)
    loaded = []
    for plan in plans:  # every input is verified before the first search runs
        ds = load_dataset(dataset, plan.loader, **plan.params)
        if plan.condition is not None:
            problems = verify_inputs(ds, plan.condition)
            if problems:
                raise BenchInputError(
                    f"{plan.name}: the input differs from the condition file, so its figures do not apply:\n  "
                    + "\n  ".join(problems)
                )
        loaded.append((plan, ds))

    results: dict[str, dict[str, Any]] = {}
    for plan, ds in loaded:
        report = run_retrieval_bench(ds, modes, store_dir or default_store_dir(), runs=runs, progress=progress,
                                     embedder=embedder, condition=plan.condition, sample=sample)
        report["warnings"] = notes + report["warnings"]
        results[plan.name] = report
        if not as_json:
            print_report(report)
    passed = all(r.get("passed", True) for r in results.values())
    if as_json:
        out: Any = next(iter(results.values())) if len(results) == 1 else {
            "dataset": dataset.name, "passed": passed, "conditions": results}
        print(json.dumps(out, indent=2, ensure_ascii=False))
    return BENCH_EXIT_OK if passed else BENCH_EXIT_MISS


def print_report(report: dict[str, Any]) -> None:
    """The human view: hardware and runs first, figures per mode, embedding cost, targets."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    m = report["machine"]
    console.print(f"[bold]{report['condition']}[/bold]  {report['queries']} queries over {report['documents']} documents"
                  f"  ({report['date']})")
    console.print(f"machine: {m['cpu']}, {m['cores']} cores ({m['cores_usable']} usable), {m['ram_gb']} GB RAM, "
                  f"load {m['load_avg_1m']}, Python {m['python']}")
    console.print(f"runs: {report['runs']} (latency pooled over {report['searches_timed']} searches per mode; "
                  f"query embedding excluded)")
    metric_names = [k for k in next(iter(report["modes"].values())) if not k.endswith("_ms")]
    table = Table()
    table.add_column("mode")
    for name in metric_names:
        table.add_column(name, justify="right")
    for col in ("p50 ms", "p95 ms"):
        table.add_column(col, justify="right")
    for mode, fig in report["modes"].items():
        table.add_row(mode, *(f"{fig[n]:.4f}" for n in metric_names), f"{fig['p50_ms']:.2f}", f"{fig['p95_ms']:.2f}")
    console.print(table)
    plain, rr = report["modes"].get("hybrid"), report["modes"].get("hybrid+rerank")
    if plain and rr:
        console.print(f"reranking adds {rr['p50_ms'] - plain['p50_ms']:.2f} ms at p50 and {rr['p95_ms'] - plain['p95_ms']:.2f} ms "
                      f"at p95 (rerank stage alone: p50 {rr['stages_p50_ms'].get('rerank', float('nan')):.2f} ms)")
    e, s = report["embedding"], report["store"]
    console.print(f"embedding ({e['model']}): {e['passages']} passages embedded, {e['cached']} cached, "
                  f"{e['seconds']:.1f} s; {e['queries']} queries ({e['queries_cached']} cached) in "
                  f"{e['queries_seconds']:.2f} s")
    if "sentences" in e:
        rr = e.get("rerank", {})
        console.print(f"rerank ({rr.get('scorer')}, top {rr.get('candidates')}, weight {rr.get('weight')}, k {rr.get('rrf_k')}, "
                      f"min_score {rr.get('min_score')}): {e['sentences']} sentences, {e['sentences_embedded']} embedded by "
                      f"this run in {e['sentences_seconds']:.1f} s; latency above is with a warm sentence cache")
    console.print(f"store: {'reused' if s['reused'] else 'built'} {s['path']} ({s['seconds']:.1f} s)")
    for w in report.get("warnings", []):
        console.print(f"[yellow]warning:[/yellow] {w}")
    styles = {"pass": "[green]PASS[/green]", "fail": "[bold red]FAIL[/bold red]", "skipped": "[dim]skip[/dim]",
              "known_miss": "[yellow]known miss[/yellow]", "fixed": "[cyan]now passes (update the condition file)[/cyan]"}
    for t in report.get("targets", []):
        console.print(f"{styles[t['status']]} {t['target']}" + (f"  ({t['detail']})" if t.get("detail") else ""))
    if "passed" in report:
        console.print("[green]all targets met[/green]" if report["passed"] else "[bold red]target missed[/bold red]")
    console.print()
