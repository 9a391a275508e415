"""L2's out-of-force check (guard/threshold.out_of_force_winner): pure, on passages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from vouched.guard.threshold import out_of_force_reason, out_of_force_winner, same_lineage
from vouched.types import Chunk

DAY = date(2025, 6, 1)


@dataclass(frozen=True)
class P:
    chunk: Chunk
    evidence: float


def c(doc, **kw) -> Chunk:
    return Chunk(id=f"{doc}#0", doc_id=doc, text="x", **kw)


GLOSSARY = c("glossary")
DRAFT = c("rotation-draft", draft=True, supersedes="rotation")
ROTATION = c("rotation")
FUTURE = c("claims", effective_from=date(2025, 10, 1))
EXPIRED = c("sev-v1", effective_from=date(2023, 1, 1), effective_to=date(2024, 6, 30))
SEV_V2 = c("sev-v2", effective_from=date(2024, 7, 1), supersedes="sev-v1")


def test_reasons():
    assert out_of_force_reason(DRAFT, DAY) == "draft"
    assert out_of_force_reason(FUTURE, DAY).startswith("not yet in force on 2025-06-01")
    assert out_of_force_reason(EXPIRED, DAY).startswith("no longer in force on 2025-06-01")
    assert out_of_force_reason(ROTATION, DAY) is None
    assert out_of_force_reason(FUTURE, date(2025, 10, 1)) is None  # the first day counts
    assert out_of_force_reason(EXPIRED, date(2024, 6, 30)) is None  # so does the last


def test_a_draft_about_another_thing_refuses():
    got = out_of_force_winner([P(GLOSSARY, 0.85)], [P(DRAFT, 0.90), P(GLOSSARY, 0.85)], DAY)
    assert got is not None and got.doc_id == "rotation-draft" and got.why == "draft"
    assert got.in_force_doc_id == "glossary" and got.evidence == 0.90


def test_a_not_yet_effective_page_refuses():
    got = out_of_force_winner([P(GLOSSARY, 0.876)], [P(FUTURE, 0.92), P(GLOSSARY, 0.876)], DAY)
    assert got is not None and got.why.startswith("not yet in force")


def test_a_newer_version_of_the_in_force_document_does_not_refuse():
    # the 2023 question answered by v1 while v2 (not yet in force then) matches better
    assert out_of_force_winner([P(EXPIRED, 0.86)], [P(SEV_V2, 0.95), P(EXPIRED, 0.86)], date(2023, 6, 1)) is None
    # a draft of the in-force document
    assert out_of_force_winner([P(ROTATION, 0.86)], [P(DRAFT, 0.99)], DAY) is None


def test_no_refusal_when_the_in_force_best_is_as_good_or_the_winner_is_in_force():
    assert out_of_force_winner([P(GLOSSARY, 0.90)], [P(DRAFT, 0.90)], DAY) is None  # a tie is not "beats"
    assert out_of_force_winner([P(GLOSSARY, 0.80)], [P(ROTATION, 0.95)], DAY) is None
    assert out_of_force_winner([], [P(DRAFT, 0.95)], DAY) is None
    assert out_of_force_winner([P(GLOSSARY, 0.8)], [], DAY) is None


def test_lineage_is_symmetric_on_supersedes():
    assert same_lineage(DRAFT, ROTATION) and same_lineage(ROTATION, DRAFT)
    assert same_lineage(SEV_V2, EXPIRED) and same_lineage(EXPIRED, SEV_V2)
    sibling = c("rotation-v5", supersedes="rotation")
    assert same_lineage(DRAFT, sibling)  # two versions replacing the same document
    assert not same_lineage(GLOSSARY, DRAFT) and not same_lineage(DRAFT, GLOSSARY)


_chunks = st.sampled_from([GLOSSARY, DRAFT, ROTATION, FUTURE, EXPIRED, SEV_V2])
_ev = st.floats(0.0, 1.0, allow_nan=False)


@given(st.lists(st.tuples(_chunks, _ev), min_size=1, max_size=6), st.lists(st.tuples(_chunks, _ev), min_size=1, max_size=6))
def test_refuses_only_when_every_condition_holds(in_force, everywhere):
    a = [P(ch, e) for ch, e in in_force]
    b = [P(ch, e) for ch, e in everywhere]
    got = out_of_force_winner(a, b, DAY)
    best = max(a, key=lambda p: p.evidence)
    top = max(b, key=lambda p: p.evidence)
    expected = top.evidence > best.evidence and out_of_force_reason(top.chunk, DAY) is not None \
        and not same_lineage(top.chunk, best.chunk)
    assert (got is not None) == expected
    if got is not None:
        assert got.evidence > got.in_force_evidence
