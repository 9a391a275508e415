"""Calibrate the L2 threshold on a golden set: retrieval only, the deployed embedder, no generation.

`vouched calibrate GOLDEN.jsonl [--max-answerable-loss 0.05] [--write] [--plot FILE.svg]`
calls `calibrate_command`. The pieces:

* `calibration_cases` — golden cases → the two sets: ``answer`` cases are *answerable*,
  ``refuse_no_evidence`` cases *must refuse*; pattern refusals and records cases are left
  out (L1 and the records route run before L2, so the threshold never sees them).
* `calibrate` — score every case exactly as the pipeline does (L1 and the overview route
  first: a case either of them takes never reaches L2 and is reported as skipped; then the
  scoring runs of `vouched.guard.threshold.scoring_queries` — the question as phrased and,
  for a follow-up, joined to its context — each through `HybridRetriever.search`, and the
  best ``SearchResult.evidence`` over the runs, chosen by `guard.threshold.decide`).
* `choose_threshold` — the decision, a pure function of the two score lists.
* `print_calibration`, `calibration_svg` — the two distributions, as text and as a picture.
* `write_threshold` — rewrite only the ``[threshold]`` table of a vouched.toml.

The decision. L2 passes a question when ``evidence >= threshold``, so a threshold stops
every must-refuse case only when it is STRICTLY above the highest must-refuse score ``m``.
The lowest such threshold loses the fewest answerable cases: those scoring ``<= m``. It is
chosen when that loss is within ``max_loss`` (a share of the answerable cases); the value
written is the smallest multiple of 0.0001 above ``m`` when that loses no more answerable
cases than ``nextafter(m, +inf)`` would (a readable number, at most 1e-4 above ``m``),
else ``nextafter(m, +inf)`` itself. A must-refuse case scoring 1.0 can be stopped by no
threshold (values are at most 1). When no safe threshold is within the allowed loss, none
is claimed (exit 1, nothing written) and `Closest` says how close it gets: the loss at the
lowest safe threshold, and how many must-refuse cases the best threshold within the
allowed loss would let through.

The config's suggested questions (``[server.suggested_questions]``) are scored as answerable
too, and one the threshold would refuse is an error (`vouched.eval.suggested`).

Exit codes: 0 a threshold was found (and written with ``--write``); 1 no safe threshold
within the allowed loss; 2 bad input (golden file, config, store, a set with no cases,
an embedder that failed, a plot path that is not .svg); 3 a suggested question would be
refused (by L1, or scoring below the threshold; see `vouched.eval.suggested`).
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence
from xml.sax.saxutils import escape

from vouched.errors import EXIT_INPUT, EXIT_NO, EXIT_OK

__all__ = [
    "CALIBRATE_EXIT_BAD_INPUT",
    "CALIBRATE_EXIT_NONE",
    "CALIBRATE_EXIT_OK",
    "Calibration",
    "CalibrationCase",
    "CalibrationError",
    "Closest",
    "ScoredCase",
    "ThresholdChoice",
    "allowed_losses",
    "calibrate",
    "calibrate_command",
    "calibration_cases",
    "calibration_svg",
    "calibration_warnings",
    "choose_rare_cut",
    "choose_threshold",
    "lowest_safe_threshold",
    "print_calibration",
    "rewrite_threshold",
    "write_threshold",
]

CALIBRATE_EXIT_OK, CALIBRATE_EXIT_NONE, CALIBRATE_EXIT_BAD_INPUT = EXIT_OK, EXIT_NO, EXIT_INPUT  # the one table
Label = Literal["answerable", "must_refuse"]
_KINDS: dict[str, Label] = {"answer": "answerable", "refuse_no_evidence": "must_refuse"}


from vouched.errors import CalibrationError  # noqa: E402  (drawn in the one error tree; re-exported here)


# -- the decision (pure) -----------------------------------------------------------------------
@dataclass(frozen=True)
class Closest:
    """How close calibration gets when no safe threshold is within the allowed loss."""

    safe_value: float | None  # the lowest threshold that stops every must-refuse case (None: none <= 1.0)
    safe_lost: int  # answerable cases lost at safe_value (at 1.0, the highest value, when it is None)
    budget_value: float  # the highest threshold losing at most the allowed share of answerable cases
    budget_lost: int
    let_through: int  # must-refuse cases that budget_value lets through (evidence >= it)


@dataclass(frozen=True)
class ThresholdChoice:
    value: float | None  # None: no threshold stops every must-refuse case within the allowed loss
    answerable_lost: int  # at value (when None: at the lowest safe threshold, see Closest)
    answerable_total: int
    refused_stopped: int  # at value (when None: at the lowest safe threshold, or at 1.0)
    refused_total: int
    max_loss: float
    closest: Closest | None = None

    @property
    def loss(self) -> float:
        return self.answerable_lost / self.answerable_total if self.answerable_total else 0.0


def allowed_losses(max_loss: float, n: int) -> int:
    """How many of n answerable cases a share max_loss allows (tolerant of float error: 0.29*100)."""
    return min(n, max(0, math.floor(max_loss * n + 1e-9)))


def _lost(answerable: Sequence[float], t: float) -> int:
    return sum(a < t for a in answerable)


def lowest_safe_threshold(refuse_scores: Sequence[float], answerable_scores: Sequence[float] = ()) -> float | None:
    """The threshold strictly above every must-refuse score that loses the fewest answerable
    cases, as a readable number when possible; None when a must-refuse score is 1.0 (or more)."""
    if not refuse_scores:
        return 0.0
    m = float(max(refuse_scores))
    exact = math.nextafter(m, math.inf)
    if exact > 1.0:
        return None
    readable = round(math.floor(m * 10_000 + 1) / 10_000, 4)
    if readable <= m:
        readable = round(readable + 0.0001, 4)
    if readable <= 1.0 and _lost(answerable_scores, readable) == _lost(answerable_scores, exact):
        return readable
    return exact


def choose_threshold(answerable_scores: Sequence[float], refuse_scores: Sequence[float], max_loss: float) -> ThresholdChoice:
    """The lowest threshold above every must-refuse score, if it loses at most ``max_loss``
    (a share, 0–1) of the answerable cases; else value None and how close it gets.

    With no must-refuse scores every threshold is safe and 0.0 is returned (the command
    refuses to calibrate without both sets).
    """
    if not 0.0 <= max_loss <= 1.0:
        raise ValueError(f"max_loss is a share between 0 and 1, got {max_loss}")
    a = sorted(float(x) for x in answerable_scores)
    r = [float(x) for x in refuse_scores]
    n = len(a)
    k = allowed_losses(max_loss, n)
    safe = lowest_safe_threshold(r, a)
    safe_lost = _lost(a, safe) if safe is not None else _lost(a, 1.0)
    if safe is not None and safe_lost <= k:
        return ThresholdChoice(safe, safe_lost, n, len(r), len(r), max_loss)
    # The highest threshold losing at most k: the (k+1)-th smallest answerable score (ties kept).
    budget = a[k] if k < n else 1.0
    closest = Closest(safe, safe_lost, budget, _lost(a, budget), sum(x >= budget for x in r))
    stopped = len(r) if safe is not None else sum(x < 1.0 for x in r)
    return ThresholdChoice(None, safe_lost, n, stopped, len(r), max_loss, closest)


# -- the cases ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CalibrationCase:
    id: str
    question: str
    label: Label
    tenant: str | None = None
    as_of: date | None = None
    previous: tuple[str, str] | None = None  # (question, answer)


@dataclass(frozen=True)
class ScoredCase:
    case: CalibrationCase
    evidence: float | None  # None when the case never reaches L2 (skipped says why); 0.0 when L2 coverage refuses it
    run: str = ""  # the scoring run that gave the best evidence
    skipped: str | None = None
    covered: tuple[tuple[float, bool], ...] = ()  # (rare-word cut, L2 coverage passes) for each candidate cut
    raw_evidence: float | None = None  # the bounded evidence before L2 coverage
    uncovered: str = ""  # why L2 coverage refuses it at the chosen cut

    def at_cut(self, cut: float) -> "ScoredCase":
        """This case as L2 decides it with rare-word cut ``cut``: evidence 0 when coverage refuses it."""
        import dataclasses

        raw = self.evidence if self.raw_evidence is None else self.raw_evidence
        ok = dict(self.covered).get(cut, True)
        return dataclasses.replace(self, evidence=raw if ok or raw is None else 0.0, raw_evidence=raw,
                                   uncovered="" if ok else f"L2 coverage refuses it at rare cut {cut}")


# Candidate rare-word cuts (share of the corpus's chunks) learnt together with the threshold.
RARE_CUTS: tuple[float, ...] = (0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2)


def choose_rare_cut(scored: Sequence[ScoredCase], max_loss: float) -> tuple[float, ThresholdChoice, tuple[float, float]]:
    """The rare-word cut and the threshold chosen at it, and the range of cuts that decide every
    case alike (the cut's margin). At each cut L2 coverage turns a case it refuses into evidence
    0; the threshold is then chosen by ``choose_threshold``, unchanged. Preferred: a safe
    threshold, then the fewest answerable lost, then the widest threshold margin, then the
    strictest (largest) cut."""
    best = None
    for cut in RARE_CUTS:
        at = [s.at_cut(cut) for s in scored if s.evidence is not None]
        ans = [s.evidence for s in at if s.case.label == "answerable"]
        ref = [s.evidence for s in at if s.case.label == "must_refuse"]
        c = choose_threshold(ans, ref, max_loss)
        kept = [a for a in ans if c.value is not None and a >= c.value]
        margin = (min(kept) - max(ref)) if kept and ref else 0.0
        key = (c.value is None, c.answerable_lost, c.closest.let_through if c.closest else 0, -margin, -cut)
        if best is None or key < best[0]:
            best = (key, cut, c)
    assert best is not None
    cut = best[1]
    pattern = lambda k: tuple(dict(s.covered).get(k, True) for s in scored)  # noqa: E731
    same = [k for k in RARE_CUTS if pattern(k) == pattern(cut)]
    return cut, best[2], (min(same), max(same))


def calibration_cases(cases: Iterable[Any]) -> list[CalibrationCase]:
    """Golden cases (or CalibrationCases) → the answerable and must-refuse cases; others dropped."""
    out = []
    for c in cases:
        if isinstance(c, CalibrationCase):
            out.append(c)
            continue
        label = _KINDS.get(c.expect.kind)
        if label is None:
            continue
        prev = (c.previous.question, c.previous.answer) if c.previous else None
        out.append(CalibrationCase(c.id, c.question, label, c.tenant, c.as_of, prev))
    return out


@dataclass(frozen=True)
class Calibration:
    scored: tuple[ScoredCase, ...]
    choice: ThresholdChoice
    embedding_model: str
    corpus_version: str | None
    store_embedding_model: str = ""
    warnings: tuple[str, ...] = ()
    left_out: int = 0  # golden cases of other kinds (pattern refusals, records)
    rare_cut: float | None = None  # the rare-word cut learnt with the threshold (None: L2 coverage off)
    rare_cut_range: tuple[float, float] | None = None  # cuts that decide every case as rare_cut does

    def scores(self, label: Label) -> list[ScoredCase]:
        return sorted((s for s in self.scored if s.case.label == label and s.evidence is not None),
                      key=lambda s: (s.evidence, s.case.id))

    @property
    def skipped(self) -> list[ScoredCase]:
        return [s for s in self.scored if s.evidence is None]


class _Scorer:
    """The pipeline's path up to L2, nothing after it."""

    def __init__(self, target: Any) -> None:
        from vouched.engine import Engine

        engine = target if isinstance(target, Engine) else getattr(target, "engine", None)
        if engine is None:
            raise TypeError("calibrate needs an Assistant or an Engine")
        self.config = engine.config
        self.engine = engine
        pipeline = getattr(target, "pipeline", None)
        if pipeline is None:
            from vouched.answer.build import build
            from vouched.answer.pipeline import Pipeline

            # the path up to L2 only: no provider, no spend gate, no cache, no traces
            cfg = self.config.model_copy(update={"answer": self.config.answer.model_copy(update={"provider": "extractive"})})
            pipeline = Pipeline(build(cfg, engine=engine, spend=None, cache=None))
        self.pipeline = pipeline
        self.packs, self.subject_names = pipeline.packs, pipeline.subject_names

    def score(self, case: CalibrationCase) -> tuple[ScoredCase, set[str], set[str]]:
        """The case as the pipeline sees it: the front's route (answer.front), then L2's runs.

        A case the front routes away from L2 (L1, small talk, an unserved language, the
        records, clarify) is skipped; a multi-part question is scored part by part, as the
        pipeline scores it: an answerable case by its weakest part (every part must pass),
        a must-refuse case by its strongest (any part that passes is answered)."""
        from vouched.answer.front import Previous, build_question, route, skip_reason
        from vouched.errors import InputError
        from vouched.types import SearchFilters

        cfg, rules = self.config, self.pipeline.rules
        prev_q, prev_a = case.previous if case.previous else (None, None)
        previous = Previous(prev_q or "", prev_a or "") if case.previous is not None else None
        try:
            q = build_question(case.question, rules, previous)
        except InputError as exc:
            return ScoredCase(case, None, skipped=f"not a question the pipeline takes: {exc}"), set(), set()
        r = route(q, rules)
        why = skip_reason(r)
        if why is not None:
            return ScoredCase(case, None, skipped=why), set(), set()
        filters = SearchFilters(tenant=case.tenant or cfg.corpus.tenant, as_of=case.as_of)
        if r.kind == "partial":
            if not r.parts:
                return ScoredCase(case, None, skipped="L1 refuses every part"), set(), set()
            scored = [self._one(part, previous if i == 0 or previous is not None else Previous(r.parts[0]), q.lang,
                                filters) for i, part in enumerate(r.parts)]
            pick = min if case.label == "answerable" else max
            (d, covered), warnings, versions = pick(scored, key=lambda x: x[0][0].evidence)
            if case.label == "answerable" and covered:  # every part must pass coverage too
                covered = tuple((cut, all(dict(x[0][1]).get(cut, True) for x in scored)) for cut, _ in covered)
            warnings = {w for x in scored for w in x[1]}
            versions = {v for x in scored for v in x[2]}
        else:
            (d, covered), warnings, versions = self._one(q.text, previous, q.lang, filters, runs=q.run_texts)
        return ScoredCase(case, d.evidence, d.run, covered=covered, raw_evidence=d.evidence), warnings, versions

    def _one(self, text: str, previous, lang: str, filters, runs=None):
        """((L2 decision, (rare cut, coverage passes) per candidate cut), warnings, versions) of one text."""
        from vouched.answer.front import scoring_runs

        scoring = self.pipeline.scoring
        runs = runs if runs is not None else scoring_runs(text, previous, lang, self.pipeline.rules)[0]
        d, results = scoring.score_runs(runs, lang, filters)
        warnings = {w for r in results.values() for w in r.warnings}
        versions = {r.corpus_version for r in results.values()}
        covered: tuple[tuple[float, bool], ...] = ()
        if self.config.threshold.coverage and d.run in results:
            passages = results[d.run].passages
            covered = tuple((cut, scoring.coverage_verdict(text, lang, results, d.run, passages, rare_cut=cut).passed)
                            for cut in RARE_CUTS)
        return (d, covered), warnings, versions


def calibrate(assistant_or_engine: Any, cases: Iterable[Any], max_answerable_loss: float = 0.05) -> Calibration:
    """Score every answerable and must-refuse case with the deployed embedder; choose a threshold.

    Raises CalibrationError when the embedder fails (keyword-only evidence is on another
    scale: a threshold calibrated on it would be wrong) or the corpus version changes
    during the run.
    """
    all_cases = list(cases)
    chosen = calibration_cases(all_cases)
    scorer = _Scorer(assistant_or_engine)
    engine = scorer.engine
    version = engine.store.current_version()
    if version is None:
        raise CalibrationError(f"the store {scorer.config.store_label} has no corpus version: run `vouched ingest` first")
    model_id = engine.embedder.model_id
    scored, notes, seen = [], [], {version.hash}
    for c in chosen:
        s, warnings, versions = scorer.score(c)
        if any("embedder" in w or "keyword search only" in w for w in warnings):
            raise CalibrationError(f"case {c.id}: {sorted(warnings)[0]}; calibrate only with the deployed embedder working")
        seen |= {v for v in versions if v}
        scored.append(s)
    if len(seen) > 1:
        raise CalibrationError("the corpus version changed during calibration (an ingest ran): run it again")
    if version.embedding_model and version.embedding_model != model_id:
        notes.append(f"the store was embedded with {version.embedding_model!r} but the config's embedder is {model_id!r}: "
                     "re-ingest before trusting this threshold")
    if scorer.config.threshold.coverage:
        cut, choice, cut_range = choose_rare_cut(scored, max_answerable_loss)
        scored = [s.at_cut(cut) if s.evidence is not None else s for s in scored]
        return Calibration(tuple(scored), choice, model_id, version.hash, version.embedding_model, tuple(notes),
                           left_out=len(all_cases) - len(chosen), rare_cut=cut, rare_cut_range=cut_range)
    ans = [s.evidence for s in scored if s.case.label == "answerable" and s.evidence is not None]
    ref = [s.evidence for s in scored if s.case.label == "must_refuse" and s.evidence is not None]
    choice = choose_threshold(ans, ref, max_answerable_loss)
    return Calibration(tuple(scored), choice, model_id, version.hash, version.embedding_model, tuple(notes),
                       left_out=len(all_cases) - len(chosen))


def calibration_warnings(config: Any, engine: Any) -> list[str]:
    """``Config.check_calibration`` for the embedder and corpus version an engine serves (cheap:
    no model loads). For `vouched ask`, `search`, `eval` and the service to print at start."""
    version = engine.store.current_version()
    return config.check_calibration(engine.embedder.model_id, version.hash if version else None)


# -- showing it ------------------------------------------------------------------------------------
def _fmt_t(t: float | None) -> str:
    return "none" if t is None else (f"{t:.4f}" if round(t, 4) == t else repr(t))


def histogram(values: Sequence[float], lo: float, width: float, bins: int) -> list[int]:
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int((v - lo) / width + 1e-9)))] += 1
    return counts


def _bins(cal: Calibration, width: float = 0.05) -> tuple[float, int]:
    vals = [s.evidence for s in cal.scored if s.evidence is not None]
    lo = math.floor(min(vals, default=0.0) / width) * width
    return lo, max(1, math.ceil((1.0 - lo) / width - 1e-9))


def shown_threshold(c: ThresholdChoice) -> float | None:
    """The line drawn and the verdicts printed: the choice, else the lowest safe threshold,
    else the best threshold within the allowed loss."""
    if c.value is not None or c.closest is None:
        return c.value
    return c.closest.safe_value if c.closest.safe_value is not None else c.closest.budget_value


def decision_lines(cal: Calibration) -> list[str]:
    c = cal.choice
    allowed = allowed_losses(c.max_loss, c.answerable_total)
    if c.value is not None:
        line = (f"threshold {_fmt_t(c.value)}: stops {c.refused_stopped}/{c.refused_total} must-refuse cases, "
                f"loses {c.answerable_lost}/{c.answerable_total} answerable ({c.loss:.1%}; allowed {c.max_loss:.1%} = {allowed})")
        ref = cal.scores("must_refuse")
        kept = [s.evidence for s in cal.scores("answerable") if s.evidence >= c.value]
        if ref and kept:
            line += f"; margin {kept[0] - ref[-1].evidence:.4f} between the highest must-refuse and the lowest kept answerable score"
        return [line, *_rare_cut_lines(cal)]
    k = c.closest
    assert k is not None
    lines = [f"NO SAFE THRESHOLD within {c.max_loss:.1%} answerable loss (at most {allowed} of {c.answerable_total}):"]
    if k.safe_value is None:
        lines.append("  a must-refuse case scores 1.0: no threshold (at most 1.0) stops it")
    else:
        lines.append(f"  the lowest threshold that stops every must-refuse case, {_fmt_t(k.safe_value)}, loses "
                     f"{k.safe_lost}/{c.answerable_total} answerable ({k.safe_lost / max(1, c.answerable_total):.1%})")
    lines.append(f"  the best threshold within the allowed loss, {_fmt_t(k.budget_value)}, lets {k.let_through}/"
                 f"{c.refused_total} must-refuse case(s) through")
    return lines + _rare_cut_lines(cal)


def _rare_cut_lines(cal: Calibration) -> list[str]:
    if cal.rare_cut is None:
        return []
    lo, hi = cal.rare_cut_range or (cal.rare_cut, cal.rare_cut)
    refused = [s.case.id for s in cal.scored if s.uncovered]
    return [f"rare-word cut {cal.rare_cut} (L2 coverage; learnt with the threshold): cuts {lo}–{hi} of "
            f"{', '.join(map(str, RARE_CUTS))} decide every case alike (its margin); L2 coverage refuses "
            f"{len(refused)} case(s) at it" + (f": {', '.join(refused[:8])}" + (", …" if len(refused) > 8 else "") if refused else "")]


def print_calibration(cal: Calibration, console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    con = console or Console()
    t = shown_threshold(cal.choice)
    ans, ref = cal.scores("answerable"), cal.scores("must_refuse")
    con.print(f"[bold]calibration[/]: embedding model {cal.embedding_model}, corpus version {(cal.corpus_version or '?')[:12]}; "
              f"{len(ans)} answerable, {len(ref)} must-refuse scored (best bounded evidence, retrieval only)", highlight=False)
    if cal.left_out:
        con.print(f"[dim]{cal.left_out} golden case(s) of other kinds left out (pattern refusals, records)[/]")
    for w in cal.warnings:
        con.print(f"[yellow]warning:[/] {w}", highlight=False)
    lo, n = _bins(cal)
    ha, hr = histogram([s.evidence for s in ans], lo, 0.05, n), histogram([s.evidence for s in ref], lo, 0.05, n)
    h = Table(title="distributions (bins of 0.05)", title_justify="left")
    for col in ("evidence", "answerable", "", "must-refuse", ""):
        h.add_column(col)
    t_bin = None if t is None else min(n - 1, max(0, int((t - lo) / 0.05 + 1e-9)))
    i = 0
    while i < n:
        run_end = i
        while run_end < n and not ha[run_end] and not hr[run_end] and run_end != t_bin:
            run_end += 1
        if run_end - i >= 3:  # a long run of empty bins is one row
            h.add_row(f"{lo + i * 0.05:.2f}–{lo + run_end * 0.05:.2f}", "", Text("·"), "", Text("·"))
            i = run_end
            continue
        a0 = lo + i * 0.05
        h.add_row(f"{a0:.2f}–{a0 + 0.05:.2f}" + (" ◀ threshold" if i == t_bin else ""), str(ha[i] or ""),
                  Text("█" * ha[i], style="blue"), str(hr[i] or ""), Text("█" * hr[i], style="red"))
        i += 1
    con.print(h)
    for label, rows, title in (("answerable", ans, "answerable (lowest first)"), ("must_refuse", ref, "must-refuse (highest last)")):
        tab = Table(title=title, title_justify="left")
        for col in ("evidence", "run", "case", "at the threshold", "question"):
            tab.add_column(col, overflow="fold")
        for s in rows:
            passes = t is not None and s.evidence >= t
            verdict = ("kept" if passes else "LOST") if label == "answerable" else ("LETS THROUGH" if passes else "stopped")
            style = "red" if verdict in ("LOST", "LETS THROUGH") else "green"
            q = s.case.question
            tab.add_row(f"{s.evidence:.4f}", s.run, Text(s.case.id), Text(verdict if t is not None else "", style=style),
                        Text(q if len(q) <= 60 else q[:59] + "…"))
        con.print(tab)
    for s in cal.skipped:
        con.print(f"[dim]skipped {s.case.id} ({s.case.label}): {s.skipped}[/]", highlight=False)
    for line in decision_lines(cal):
        con.print(Text(line, style="bold green" if cal.choice.value is not None else "bold red"))


def calibration_svg(cal: Calibration, width: int = 760) -> str:
    """Both distributions as one SVG: answerable bars above the axis, must-refuse below, one
    tick per case (hover: id and score), and the threshold as a vertical line."""
    lo, n = _bins(cal)
    bw = 0.05
    ans, ref = cal.scores("answerable"), cal.scores("must_refuse")
    ha, hr = histogram([s.evidence for s in ans], lo, bw, n), histogram([s.evidence for s in ref], lo, bw, n)
    left, right, top, mid_h = 60, 20, 70, 130
    plot_w = width - left - right
    axis_y = top + mid_h
    height = axis_y + mid_h + 70
    peak = max([*ha, *hr, 1])
    x = lambda v: left + (v - lo) / (n * bw) * plot_w  # noqa: E731
    bar_h = lambda c: (mid_h - 20) * c / peak  # noqa: E731
    c = cal.choice
    t = shown_threshold(c)
    title = f"L2 calibration — {cal.embedding_model}, corpus {(cal.corpus_version or '?')[:12]}"
    sub = decision_lines(cal)[0].split("; margin")[0]
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
         'font-family="sans-serif" font-size="12">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="{left}" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
         f'<text x="{left}" y="42" fill="{"#1a7f37" if c.value is not None else "#c62828"}">{escape(sub)}</text>']
    for i in range(n):
        x0, x1 = x(lo + i * bw) + 1, x(lo + (i + 1) * bw) - 1
        for count, sign, colour, label in ((ha[i], -1, "#3b6fd4", "answerable"), (hr[i], 1, "#d64545", "must-refuse")):
            if count:
                hgt = bar_h(count)
                y = axis_y - hgt if sign < 0 else axis_y
                o.append(f'<rect x="{x0:.1f}" y="{y:.1f}" width="{x1 - x0:.1f}" height="{hgt:.1f}" fill="{colour}" '
                         f'fill-opacity="0.35"><title>{label}: {count} in {lo + i * bw:.2f}–{lo + (i + 1) * bw:.2f}</title></rect>')
    for rows, sign, colour in ((ans, -1, "#3b6fd4"), (ref, 1, "#d64545")):
        for s in rows:
            xs = x(s.evidence)
            y0, y1 = (axis_y - 14, axis_y - 2) if sign < 0 else (axis_y + 2, axis_y + 14)
            o.append(f'<line x1="{xs:.1f}" y1="{y0}" x2="{xs:.1f}" y2="{y1}" stroke="{colour}" stroke-width="2">'
                     f'<title>{escape(s.case.id)}: {s.evidence:.4f}</title></line>')
    o.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="black"/>')
    for i in range(n + 1):
        v = lo + i * bw
        o.append(f'<line x1="{x(v):.1f}" y1="{axis_y}" x2="{x(v):.1f}" y2="{axis_y + 4}" stroke="black"/>')
        if i % 2 == 0 or n <= 10:
            o.append(f'<text x="{x(v):.1f}" y="{height - 38}" text-anchor="middle">{v:.2f}</text>')
    o.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 14}" text-anchor="middle">best bounded evidence score</text>')
    o.append(f'<text x="{left + 4}" y="{top + 12}" fill="#3b6fd4">answerable ({len(ans)})</text>')
    o.append(f'<text x="{left + 4}" y="{axis_y + mid_h - 4}" fill="#d64545">must refuse ({len(ref)})</text>')
    if t is not None:
        style = "" if c.value is not None else ' stroke-dasharray="6 4"'
        o.append(f'<line x1="{x(t):.1f}" y1="{top - 6}" x2="{x(t):.1f}" y2="{axis_y + mid_h}" stroke="black" stroke-width="1.5"{style}/>')
        if c.value is not None:
            label = f"threshold {_fmt_t(t)}"
        elif c.closest is not None and c.closest.safe_value is not None:
            label = f"lowest safe threshold {_fmt_t(t)}: loses more than allowed"
        else:
            label = f"best within the allowed loss {_fmt_t(t)}: lets must-refuse cases through"
        o.append(f'<text x="{x(t) + 4:.1f}" y="{top + 4}">{escape(label)}</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


# -- writing the config ----------------------------------------------------------------------------
_HEADER = re.compile(r'^[ \t]*\[[ \t]*(?:threshold|"threshold"|\'threshold\')[ \t]*\][ \t]*(?:#.*)?$')
_ANY_HEADER = re.compile(r"^[ \t]*\[")


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def threshold_block(value: float, embedding_model: str, corpus_version: str, comment: Sequence[str] = (),
                    rare_cut: float | None = None) -> list[str]:
    """The body of the [threshold] table (without its header), one string per line."""
    return [*(f"# {c}".rstrip() for c in comment), f"value = {value!r}", f"embedding_model = {_toml_str(embedding_model)}",
            f"corpus_version = {_toml_str(corpus_version)}", *([f"rare_cut = {rare_cut!r}"] if rare_cut is not None else [])]


def rewrite_threshold(text: str, value: float, embedding_model: str, corpus_version: str, comment: Sequence[str] = (),
                      rare_cut: float | None = None) -> str:
    """``text`` with only its [threshold] table replaced (header line kept as written); every
    byte outside the table is kept. A table absent is appended. Pure; raises CalibrationError
    when the threshold is written in a form this cannot replace safely (dotted keys, inline)."""
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _HEADER.match(line.rstrip("\r\n"))), None)
    body = [ln + nl for ln in threshold_block(value, embedding_model, corpus_version, comment, rare_cut)]
    if start is None:
        if "threshold" in tomllib.loads(text):
            raise CalibrationError("the threshold is set with dotted keys or an inline table; move it into a "
                                   "[threshold] table so `vouched calibrate --write` can replace it")
        sep = "" if not text or text.endswith(("\n", "\r")) else nl
        return text + sep + (nl if text.strip() else "") + "[threshold]" + nl + "".join(body)
    end = next((i for i in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
    # What follows the table's last key after a blank line (blank lines, a comment about the
    # next table) belongs to the gap, not to the table: keep it.
    last_key = max((i for i in range(start + 1, end) if lines[i].strip() and not lines[i].lstrip().startswith("#")), default=start)
    keep_from = next((i for i in range(last_key + 1, end) if not lines[i].strip()), end)
    head = lines[start]
    if not head.endswith(("\n", "\r")):
        head += nl
    return "".join(lines[:start]) + head + "".join(body) + "".join(lines[keep_from:])


def write_threshold(config_file: Path, value: float, embedding_model: str, corpus_version: str,
                    comment: Sequence[str] = (), rare_cut: float | None = None) -> None:
    """Rewrite the [threshold] table of a vouched.toml in place (atomically), after checking that
    the new file parses, changes nothing else, and is a valid config."""
    from vouched.config import Config

    p = Path(config_file)
    raw = p.read_bytes()
    text = raw.decode("utf-8")
    new = rewrite_threshold(text, value, embedding_model, corpus_version, comment, rare_cut)
    old_data, new_data = tomllib.loads(text), tomllib.loads(new)
    want = {"value": value, "embedding_model": embedding_model, "corpus_version": corpus_version,
            **({"rare_cut": rare_cut} if rare_cut is not None else {})}
    if {k: v for k, v in old_data.items() if k != "threshold"} != {k: v for k, v in new_data.items() if k != "threshold"} \
            or new_data.get("threshold") != want:
        raise CalibrationError(f"{p}: could not replace the [threshold] table without touching the rest; edit it by hand: "
                               f"value = {value!r}, embedding_model = {embedding_model!r}, corpus_version = {corpus_version!r}")
    Config.model_validate({**new_data, "base_dir": p.resolve().parent})
    tmp = p.with_name(f".{p.name}.calibrate.tmp")
    tmp.write_bytes(new.encode("utf-8"))
    os.chmod(tmp, p.stat().st_mode & 0o7777)
    os.replace(tmp, p)


# -- the command ----------------------------------------------------------------------------------
def _config_file(golden: Path, config: Path | None) -> Path | None:
    """--config (a file or its folder), else $VOUCHED_CONFIG, else vouched.toml beside the golden file, else ./vouched.toml."""
    if config:
        p = Path(config)
        return p / "vouched.toml" if p.is_dir() else p
    if os.environ.get("VOUCHED_CONFIG"):
        return Path(os.environ["VOUCHED_CONFIG"])
    for cand in (Path(golden).resolve().parent / "vouched.toml", Path("vouched.toml")):
        if cand.exists():
            return cand
    return None


def _prepare(golden_path: Path, config_path: Path | None, max_loss: float, plot_path: Path | None):
    from vouched.config import load_config
    from vouched.engine import Engine
    from vouched.eval.golden import load_golden

    if not 0.0 <= max_loss <= 1.0:
        raise CalibrationError(f"--max-answerable-loss is a share between 0 and 1 (0.05 = 5%), got {max_loss}")
    if plot_path is not None and Path(plot_path).suffix.lower() != ".svg":
        raise CalibrationError(f"--plot {plot_path}: the picture is written as SVG; give a path ending in .svg")
    cases = load_golden(golden_path)
    cfile = _config_file(Path(golden_path), config_path)
    if cfile is None:
        raise CalibrationError("no vouched.toml found: pass --config")
    cfg = load_config(cfile)
    chosen = calibration_cases(cases)
    for label, kind in (("answerable", "answer"), ("must_refuse", "refuse_no_evidence")):
        if not any(c.label == label for c in chosen):
            raise CalibrationError(f"{golden_path} has no `{kind}` case: calibration needs both answerable and must-refuse cases")
    if cfg.missing_store():
        raise CalibrationError(f"no store at {cfg.store_path}: run `vouched ingest -c {cfile}` first")
    return cases, cfile, cfg, Engine(cfg)


def calibrate_command(golden_path: Path, config_path: Path | None = None, max_answerable_loss: float = 0.05,
                      write: bool = False, plot_path: Path | None = None, *, console: Any = None) -> int:
    """`vouched calibrate`: print both distributions, draw them, choose (and with write=True record) a threshold.

    Returns 0, or 1 when no threshold value exists or a suggested question would be refused;
    what cannot be read, scored or written raises (vouched.errors.EXIT_CODES maps it).
    """
    from rich.console import Console

    from vouched.eval.suggested import (
        CALIBRATE_EXIT_SUGGESTED, print_refused_suggestions, refused_suggestions, suggested_cases, thresholds_to_check,
    )

    con = console or Console()
    try:
        cases, cfile, cfg, eng = _prepare(Path(golden_path), config_path, max_answerable_loss, plot_path)
    except OSError as exc:
        raise CalibrationError(str(exc)) from exc
    notes = calibration_warnings(cfg, eng)
    for note in notes:
        con.print(f"[yellow]warning (current config):[/] {note}", highlight=False)
    suggested = cfg.server.suggested_questions
    extra = suggested_cases(suggested, cases)  # the chat page offers them: answerable by definition
    cal = calibrate(eng, [*cases, *extra], max_answerable_loss)
    print_calibration(cal, con)
    svg = Path(plot_path) if plot_path else cfg.store_path.parent / "calibration.svg"  # beside the SQLite file, or .vouched/ for PostgreSQL
    svg.parent.mkdir(parents=True, exist_ok=True)
    svg.write_text(calibration_svg(cal), encoding="utf-8")
    con.print(f"picture: {svg}", highlight=False)
    c = cal.choice
    if extra:
        con.print(f"[dim]{len(extra)} suggested question(s) from the config scored as answerable[/]")
    refused = refused_suggestions(cal.scored, suggested, thresholds_to_check(
        c.value, cfg.threshold.value, write=write, config_calibrated=not notes))
    print_refused_suggestions(refused, con)
    if c.value is None:
        if write:
            con.print(f"[bold red]not written:[/] {cfile} keeps threshold.value = {cfg.threshold.value}", highlight=False)
        return CALIBRATE_EXIT_NONE
    if write:
        try:
            write_threshold(cfile, c.value, cal.embedding_model, cal.corpus_version or "", _provenance(cal, golden_path),
                            rare_cut=cal.rare_cut)
        except (OSError, ValueError) as exc:
            raise CalibrationError(f"cannot write {cfile}: {exc}") from exc
        con.print(f"written: {cfile} [threshold] value = {c.value!r}, embedding_model = {cal.embedding_model}, "
                  f"corpus_version = {(cal.corpus_version or '')[:12]}…", highlight=False)
    else:
        con.print("[dim]not written (pass --write to record it in the config)[/]")
    return CALIBRATE_EXIT_SUGGESTED if refused else CALIBRATE_EXIT_OK


def _provenance(cal: Calibration, golden_path: Path) -> list[str]:
    c = cal.choice
    ref = cal.scores("must_refuse")
    lost = [s for s in cal.scores("answerable") if s.evidence < (c.value or 0)]
    top = ref[-1] if ref else None
    lines = [f"Calibrated by `vouched calibrate {Path(golden_path).name}` on {date.today().isoformat()}: "
             f"{c.answerable_total} answerable, {c.refused_total} must-refuse questions (retrieval only).",
             f"Highest must-refuse evidence {top.evidence:.4f} ({top.case.id}); answerable lost: "
             f"{c.answerable_lost} of {c.answerable_total} (allowed {c.max_loss:.1%})"
             + (": " + ", ".join(f"{s.case.id} {s.evidence:.4f}" for s in lost[:5]) + (", …" if len(lost) > 5 else "") if lost else ".")
             if top else "No must-refuse case.",
             "Tied to the embedding model and corpus version below: re-run after re-ingesting."]
    return lines
