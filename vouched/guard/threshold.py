"""L2 — refuse for lack of evidence, on a bounded score, never on RRF.

Pure decisions only: which query texts a question is scored as, and whether the best
bounded evidence among the returned passages clears the calibrated threshold. The runs
that add the subject's name to a question help ordering but are never passed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

PREVIOUS_ANSWER_CHARS = 300


@dataclass(frozen=True)
class ScoredRun:
    """One retrieval run that may count toward the threshold."""

    name: str  # "question" | "joined" | "ordinal"
    query: str
    evidence: float


@dataclass(frozen=True)
class EvidenceDecision:
    evidence: float
    threshold: float
    passed: bool
    run: str  # the run that gave the best evidence


def scoring_queries(
    question: str,
    previous_question: str | None = None,
    previous_answer: str | None = None,
    ordinal_item: str | None = None,
    is_ordinal: bool = False,
) -> dict[str, str]:
    """The texts a question is scored as: as phrased, and for a follow-up joined to context.

    An ordinal follow-up ("the second one") is scored as the item it points to when that
    could be read unambiguously from the previous answer; otherwise joined to the start of
    the previous answer. Any other follow-up is joined to the previous question.
    """
    runs = {"question": question}
    if is_ordinal:
        if ordinal_item and ordinal_item.strip():
            # "the third one" names that item and nothing else: the item is the query (the
            # bare "and the third one?" would only dilute it).
            runs["ordinal"] = ordinal_item.strip()
        else:
            context = (previous_answer or "")[:PREVIOUS_ANSWER_CHARS]
            if context.strip():
                runs["joined"] = f"{question} {context}".strip()
    elif previous_question:
        runs["joined"] = f"{previous_question} {question}".strip()
    return runs


def decide(runs: Mapping[str, float], threshold: float) -> EvidenceDecision:
    """Pass when the best bounded evidence of any counted run reaches the threshold."""
    if not runs:
        return EvidenceDecision(0.0, threshold, threshold <= 0.0, "none")
    name = max(runs, key=lambda k: (runs[k], k == "question"))
    best = float(runs[name])
    return EvidenceDecision(best, threshold, best >= threshold, name)
