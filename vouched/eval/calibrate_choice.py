"""Calibration's data and its decision, pure: the cases, their scores, the threshold and rare-word cut chosen.

Part of vouched.eval.calibrate (which re-exports every name here); the decision itself is
described in that module's docstring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import Any, Iterable, Literal, Sequence

Label = Literal["answerable", "must_refuse"]
_KINDS: dict[str, Label] = {"answer": "answerable", "refuse_no_evidence": "must_refuse"}


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
