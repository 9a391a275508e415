"""L2 on the path (answer/scoring.py) over a scripted retriever: which texts are searched, what
counts toward the threshold, and why a run that cleared it is refused all the same."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from vouched.answer.build import Lazy, build
from vouched.answer.front import Previous, Rules, build_question
from vouched.answer.scoring import Scoring, fuse, merge_for_order, own_words_found
from vouched.config import load_config
from vouched.guard.threshold import EvidenceDecision
from vouched.trace.record import TraceRecord
from vouched.types import Chunk, Passage, SearchFilters, SearchResult

ROOT = Path(__file__).resolve().parents[2]


def _p(cid: str, text: str, evidence: float, lang: str = "en") -> Passage:
    return Passage(Chunk(id=cid, doc_id=cid.split("#")[0], text=text, lang=lang), rank=1, dense=evidence, keyword=0.0,
                   evidence=evidence, fused=0.01)


class Scripted:
    """A retriever that answers each query from a table and records what it was asked."""

    def __init__(self, table: dict[str, list[Passage]]):
        self.table = table
        self.asked: list[str] = []

    def search(self, query: str, *, filters: SearchFilters, query_lang: str) -> SearchResult:
        self.asked.append(query)
        return SearchResult(passages=tuple(self.table.get(query, ())), query_lang=query_lang, modes_used=("dense",),
                            corpus_version="v1")


@pytest.fixture(scope="module")
def config():
    cfg = load_config(ROOT / "examples" / "portfolio" / "vouched.toml")
    th = cfg.threshold.model_copy(update={"value": 0.6, "coverage": False})
    guard = cfg.guard.model_copy(update={"out_of_force_check": False})
    return cfg.model_copy(update={"threshold": th, "guard": guard})


@pytest.fixture(scope="module")
def rules(config):
    return Rules.from_config(config, build(config).packs)


def _single(config, rules, table, text, previous=None):
    retriever = Scripted(table)
    q = build_question(text, rules, previous)
    trace = TraceRecord(id="t", question=text)
    s = asyncio.run(Scoring(config, rules, Lazy.of(retriever)).single(trace, q, SearchFilters()))
    return s, trace, retriever.asked


def test_a_question_that_clears_the_threshold_passes_on_its_own_run(config, rules):
    text = "Which index did the clinic search use?"
    s, trace, asked = _single(config, rules, {text: [_p("search#1", "The clinic search used an HNSW index.", 0.71)]},
                              text)
    assert not s.refuse and s.plan_question == text and asked == [text]
    assert (trace.threshold, trace.evidence, trace.evidence_run) == (0.6, 0.71, "question")
    assert [r["id"] for r in trace.retrieved] == ["search#1"] and s.best.corpus_version == "v1"


def test_below_the_threshold_is_refused_for_no_evidence(config, rules):
    text = "Which telescope did the observatory buy?"
    s, trace, _ = _single(config, rules, {text: [_p("search#1", "The clinic search used an index.", 0.41)]}, text)
    assert s.refuse and s.category == "no_evidence" and trace.evidence == 0.41


def test_the_subjects_ordering_run_never_counts_toward_the_threshold(config, rules):
    text = "Which libraries does she maintain?"  # about the subject, without her name
    aug = f"{text} {config.subject.name}"
    table = {text: [_p("oss#1", "Unrelated text.", 0.30)], aug: [_p("oss#2", "She maintains two libraries.", 0.95)]}
    s, trace, asked = _single(config, rules, table, text)
    assert asked == [text, aug]  # searched for order only
    assert s.refuse and s.about_subject and trace.evidence == 0.30
    named, _, asked_named = _single(config, rules, {}, f"Which libraries does {config.subject.name} maintain?")
    assert asked_named == [f"Which libraries does {config.subject.name} maintain?"] and named.about_subject


def test_a_joined_run_must_hold_a_word_of_the_question_own(config, rules):
    prev = Previous("Which database did the clinic search run on?", "PostgreSQL 15 [1].")
    text = "and the backup schedule?"
    q = build_question(text, rules, prev)
    joined = q.run_texts["joined"]
    carried = [_p("db#1", "The clinic search runs on PostgreSQL 15.", 0.9)]
    s, trace, asked = _single(config, rules, {joined: carried}, text, prev)
    assert set(asked) == {text, joined}
    assert s.refuse and any("none of the question's own words" in w for w in trace.warnings)
    held = [_p("db#2", "The clinic search database has a nightly backup schedule.", 0.9)]
    s2, _, _ = _single(config, rules, {joined: held}, text, prev)
    assert not s2.refuse and s2.plan_question == joined


def test_parts_are_scored_each_on_its_own(config, rules):
    parts = ("Which index did the clinic search use?", "what does a week of work cost?")
    table = {parts[0]: [_p("search#1", "The clinic search used an HNSW index.", 0.8)]}
    retriever = Scripted(table)
    trace = TraceRecord(id="t", question=" ".join(parts))
    ps = asyncio.run(Scoring(config, rules, Lazy.of(retriever)).parts(trace, parts, None, "en", SearchFilters()))
    assert ps.covered == parts[:1] and ps.uncovered == parts[1:]
    assert [p.chunk.id for p in ps.passages] == ["search#1"] and trace.evidence == 0.8
    assert any("part 2" in w and "not covered" in w for w in trace.warnings)


def test_own_words_found_fails_a_decision_whose_passages_miss_the_new_words():
    passed = EvidenceDecision(0.9, 0.6, True, "joined")
    res = SearchResult(passages=(_p("a#1", "Tessera runs PostgreSQL.", 0.9),), query_lang="en", modes_used=("dense",))
    assert not own_words_found("and its backups?", "Which database does Tessera run?", res, "en", passed).passed
    ok = SearchResult(passages=(_p("a#1", "Backups run nightly.", 0.9),), query_lang="en", modes_used=("dense",))
    assert own_words_found("and its backups?", "Which database does Tessera run?", ok, "en", passed) is passed
    # nothing new in the part: the decision stands
    assert own_words_found("Which database?", "Which database does Tessera run?", res, "en", passed) is passed


def test_ordering_help_and_part_fusion_keep_each_passage_once():
    a, b, c = _p("a#1", "a", 0.9), _p("b#1", "b", 0.8), _p("c#1", "c", 0.7)
    merged = merge_for_order([a, b], [c, a], k=60, top_k=3)
    assert sorted(p.chunk.id for p in merged) == ["a#1", "b#1", "c#1"] and merged[0].chunk.id == "a#1"
    assert merged[0] is a  # the primary run's passage wins over the ordering run's copy
    fused = fuse({"p0": [a, b], "p1": [c]}, k=60, top_k=2)
    assert len(fused) == 2 and len({p.chunk.id for p in fused}) == 2
