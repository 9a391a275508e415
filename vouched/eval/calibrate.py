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

The code: `calibrate_choice` (the cases and the decision, pure), `calibrate_show` (text and
SVG), `calibrate_write` (the ``[threshold]`` table); this module scores the cases and runs the
command, and re-exports every name of those three.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Any, Iterable

from vouched.errors import EXIT_INPUT, EXIT_NO, EXIT_OK
from vouched.errors import CalibrationError  # drawn in the one error tree; re-exported here
from vouched.eval.calibrate_choice import (  # noqa: F401  (re-exported: this module's names before the split)
    _KINDS, RARE_CUTS, Calibration, CalibrationCase, Closest, Label, ScoredCase, ThresholdChoice, _lost, allowed_losses,
    calibration_cases, choose_rare_cut, choose_threshold, lowest_safe_threshold,
)
from vouched.eval.calibrate_show import (  # noqa: F401  (re-exported)
    _bins, _fmt_t, _rare_cut_lines, calibration_svg, decision_lines, histogram, print_calibration, shown_threshold,
)
from vouched.eval.calibrate_write import (  # noqa: F401  (re-exported)
    _ANY_HEADER, _HEADER, _toml_str, rewrite_threshold, threshold_block, write_threshold,
)

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
