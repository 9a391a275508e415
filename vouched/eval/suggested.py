"""Suggested questions in calibration: the chat page offers them, so the assistant must answer them.

A deployment lists suggested questions per language (``[server.suggested_questions]``); the
chat page shows them as buttons. `vouched calibrate` scores them as answerable cases
(`suggested_cases`) and then checks each against the threshold (`refused_suggestions`, a
pure function of the calibration): a suggested question scoring below it, or one that L1
refuses outright, is an error naming the question and its score against the threshold —
a reader clicking it would get a refusal.

Which thresholds are checked (`thresholds_to_check`): the one calibration chooses (what
``--write`` records); and, when the run does not write, also the config's current value —
but only when that value was calibrated for the embedder and corpus version in use (else it
already carries a calibration warning and its scale says nothing about these scores).
A suggested question the records route answers never reaches L2: it cannot be refused by
the threshold and is not checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from vouched.errors import EXIT_NO

__all__ = [
    "CALIBRATE_EXIT_SUGGESTED",
    "RefusedSuggestion",
    "print_refused_suggestions",
    "refused_suggestions",
    "suggested_cases",
    "thresholds_to_check",
]

CALIBRATE_EXIT_SUGGESTED = EXIT_NO  # a check failed (was 3; 3 is an ingest error in the one table, vouched.errors)
PREFIX = "suggested"


def _key(question: str) -> str:
    return " ".join(question.split())


def suggested_cases(suggested: Mapping[str, Sequence[str]], existing: Iterable[Any] = ()) -> list[Any]:
    """One answerable CalibrationCase per suggested question (id ``suggested:<lang>:<n>``, n from 1),
    except those already among the ``existing`` answerable golden cases (same text: scored once)."""
    from vouched.eval.calibrate import CalibrationCase

    have = {_key(c.question) for c in existing
            if getattr(getattr(c, "expect", None), "kind", getattr(c, "label", None)) in ("answer", "answerable")}
    out, seen = [], set(have)
    for lang, questions in suggested.items():
        for n, q in enumerate(questions, 1):
            if not q.strip() or _key(q) in seen:
                continue
            seen.add(_key(q))
            out.append(CalibrationCase(f"{PREFIX}:{lang}:{n}", q, "answerable"))
    return out


@dataclass(frozen=True)
class RefusedSuggestion:
    lang: str
    question: str
    case_id: str  # the scored case (a suggested:… id, or the golden case with the same text)
    evidence: float | None  # None: L1 refuses it before any score
    threshold: float | None
    which: str  # "chosen" | "config" | "L1"
    reason: str

    def message(self) -> str:
        # the question as written, not repr(): a Persian question keeps its ZWNJ readable
        if self.evidence is None:
            return f"suggested question ({self.lang}) '{self.question}': {self.reason}"
        return (f"suggested question ({self.lang}) '{self.question}' scores {self.evidence:.4f} < "
                f"{'the chosen' if self.which == 'chosen' else 'the config'} threshold {self.threshold:.4f}: "
                "the chat page offers it and the assistant would refuse it")


def thresholds_to_check(chosen: float | None, config_value: float, *, write: bool, config_calibrated: bool) -> dict[str, float]:
    """{"chosen": …, "config": …} — the thresholds a suggested question must clear (see the module doc)."""
    out: dict[str, float] = {}
    if chosen is not None:
        out["chosen"] = chosen
    if not (write and chosen is not None) and config_calibrated and config_value != chosen:
        out["config"] = config_value
    return out


def refused_suggestions(scored: Sequence[Any], suggested: Mapping[str, Sequence[str]],
                        thresholds: Mapping[str, float]) -> list[RefusedSuggestion]:
    """Every suggested question that L1 refuses or that scores below one of ``thresholds``.

    ``scored``: the calibration's ScoredCases (answerable ones are looked up by question text).
    """
    by_text = {_key(s.case.question): s for s in scored if s.case.label == "answerable"}
    out = []
    for lang, questions in suggested.items():
        for q in questions:
            s = by_text.get(_key(q))
            if s is None:
                continue
            if s.evidence is None:
                if s.skipped and s.skipped.startswith("L1"):
                    out.append(RefusedSuggestion(lang, q, s.case.id, None, None, "L1", s.skipped))
                continue
            for which, t in thresholds.items():
                if s.evidence < t:
                    out.append(RefusedSuggestion(lang, q, s.case.id, s.evidence, t, which, "below the threshold"))
    return out


def print_refused_suggestions(problems: Sequence[RefusedSuggestion], console: Any) -> None:
    from rich.text import Text

    for p in problems:
        console.print(Text("error: ", style="bold red") + Text(p.message()))
