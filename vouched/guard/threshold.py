"""L2 — refuse for lack of evidence, on a bounded score, never on RRF.

Pure decisions only: which query texts a question is scored as, whether the best
bounded evidence among the returned passages clears the calibrated threshold, and whether
a question that cleared it is really about a document not in force (`out_of_force_winner`). The runs
that add the subject's name to a question help ordering but are never passed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Mapping, Sequence

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


# -- the out-of-force check ---------------------------------------------------------------
@dataclass(frozen=True)
class OutOfForce:
    """Why a question that cleared the threshold is refused all the same."""

    doc_id: str  # the out-of-force document that answers best
    why: str  # "draft" | "not yet in force on <date>" | "no longer in force on <date>"
    evidence: float  # its bounded evidence
    in_force_doc_id: str  # the in-force document that answered best
    in_force_evidence: float


def out_of_force_reason(chunk, day: date) -> str | None:
    """Why `chunk` is out of force on `day` (draft, or outside its validity dates), or None."""
    if chunk.draft:
        return "draft"
    if chunk.effective_from is not None and chunk.effective_from > day:
        return f"not yet in force on {day.isoformat()} (from {chunk.effective_from.isoformat()})"
    if chunk.effective_to is not None and chunk.effective_to < day:
        return f"no longer in force on {day.isoformat()} (until {chunk.effective_to.isoformat()})"
    return None


def same_lineage(a, b) -> bool:
    """Two chunks of one document, or of two versions of it (one supersedes the other, or both the same)."""
    if a.doc_id == b.doc_id:
        return True
    return (a.supersedes is not None and a.supersedes in (b.doc_id, b.supersedes)) or \
        (b.supersedes is not None and b.supersedes == a.doc_id)


def out_of_force_winner(in_force: Sequence, everywhere: Sequence, day: date) -> OutOfForce | None:
    """The refusal reason when the best passage over drafts and all validity periods is out of
    force on `day`, beats the best in-force passage on bounded evidence, and is not a version
    of the in-force best's document — the question is then about something the in-force
    sources do not cover, and a neighbour that cleared the threshold must not answer it.

    `in_force` and `everywhere` are passages (with `.chunk` and `.evidence`) of the same query,
    searched with the question's filters and with drafts and every date allowed.
    """
    if not in_force or not everywhere:
        return None
    best = max(in_force, key=lambda p: p.evidence)
    top = max(everywhere, key=lambda p: p.evidence)
    if top.evidence <= best.evidence:
        return None
    why = out_of_force_reason(top.chunk, day)
    if why is None or same_lineage(top.chunk, best.chunk):
        return None
    return OutOfForce(top.chunk.doc_id, why, float(top.evidence), best.chunk.doc_id, float(best.evidence))
