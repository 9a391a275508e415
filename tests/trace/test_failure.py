import pytest

from vouched.answer.pipeline import TraceRecord
from vouched.trace import FAILURE_CLASSES, classify_failure
from vouched.trace.failure import doc_id_of

REL = ("en/projects/search",)


def trace(outcome="answered", layer=None, category=None, route="retrieval", retrieved=(), source_ids=(), sentences=(),
          evidence=0.9, threshold=0.8):
    return {"outcome": outcome, "layer": layer, "category": category, "route": route, "evidence": evidence,
            "threshold": threshold, "retrieved": [{"id": c, "rank": i} for i, c in enumerate(retrieved, 1)],
            "source_ids": list(source_ids), "sentences": list(sentences)}


OTHER = [f"en/other-{i}#0" for i in range(7)]
HIT_TOP = ["en/projects/search#2", *OTHER]
HIT_LOW = [*OTHER[:6], "en/projects/search#1"]
OK = [{"text": "It ran on PostgreSQL 15 [1].", "ok": True, "rule": None, "value": None}]


@pytest.mark.parametrize("expected, t, kw, want", [
    # guards are not stages
    ("refuse_pattern", trace(), {}, None),
    ("answer", trace("refused", "L1", "fees", route="refusal"), {"relevant": REL}, None),
    ("records", trace(route="retrieval"), {}, None),
    # no-evidence cases
    ("refuse_no_evidence", trace("refused", "L2", "no_evidence"), {}, None),
    ("refuse_no_evidence", trace("refused", None, "no_answer"), {}, None),
    ("refuse_no_evidence", trace("answered", evidence=0.85), {}, "retrieval"),
    ("refuse_no_evidence", trace("records", route="records_summary", evidence=0.5), {}, "presentation"),
    # answerable cases, stage by stage
    ("answer", trace(), {"relevant": REL, "corpus_docs": {"en/about"}}, "corpus"),
    ("answer", trace(), {"relevant": REL, "corpus_docs": {"en/about"}, "failed_docs": REL}, "ingestion"),
    ("answer", trace("refused", "L2", "no_evidence", retrieved=HIT_TOP), {"relevant": REL}, "retrieval"),
    ("answer", trace("records", route="records_summary"), {"relevant": REL}, "retrieval"),
    ("answer", trace(retrieved=OTHER, source_ids=OTHER), {"relevant": REL}, "retrieval"),
    ("answer", trace(retrieved=HIT_LOW, source_ids=HIT_LOW), {"relevant": REL}, "ranking"),
    ("answer", trace(retrieved=HIT_TOP, source_ids=HIT_TOP[1:]), {"relevant": REL}, "context"),
    ("answer", trace("held", "L4", "unsupported_value", retrieved=HIT_TOP, source_ids=HIT_TOP), {"relevant": REL}, "generation"),
    ("answer", trace("refused", None, "no_answer", retrieved=HIT_TOP, source_ids=HIT_TOP), {"relevant": REL}, "generation"),
    ("answer", trace("truncated", retrieved=HIT_TOP, source_ids=HIT_TOP), {"relevant": REL}, "generation"),
    ("answer", trace(retrieved=HIT_TOP, source_ids=HIT_TOP, sentences=OK), {"relevant": REL, "must_contain": ["pgvector"]}, "generation"),
    ("answer", trace(retrieved=HIT_TOP, source_ids=HIT_TOP, sentences=OK), {"relevant": REL, "cited": ["en/other-0#0"]}, "generation"),
    ("answer", trace(retrieved=HIT_TOP, source_ids=HIT_TOP, sentences=OK), {"relevant": REL, "cited": ["en/nowhere#9"]}, "presentation"),
    ("answer", trace(retrieved=HIT_TOP, source_ids=HIT_TOP, sentences=OK),
     {"relevant": REL, "must_contain": ["PostgreSQL 15"], "text": "It ran on PostgreSQL."}, "presentation"),
    ("answer", trace("refused", None, "no_answer", retrieved=HIT_TOP, source_ids=HIT_TOP),
     {"relevant": REL, "must_contain": ["PostgreSQL 15"],
      "relevant_chunks": {"en/projects/search#1": "It ran on PostgreSQL", "en/projects/search#2": "15 with pgvector."}}, "chunking"),
    ("answer", trace(retrieved=HIT_TOP, source_ids=HIT_TOP, sentences=OK),
     {"relevant": REL, "must_contain": ["PostgreSQL"], "cited": ["en/projects/search#2"]}, None),
    # records route
    ("records", trace("refused", None, "no_answer", route="records"), {}, "corpus"),
    ("records", trace("records", route="records", source_ids=["record:cv-a"]), {"relevant": ["cv-b"]}, "context"),
    ("records", trace("held", "L4", "missing_marker", route="records", source_ids=["record:cv-b"]), {"relevant": ["cv-b"]}, "generation"),
    ("records", trace("records", route="records", source_ids=["record:cv-b"]), {"relevant": ["cv-b"], "cited": ["record:cv-b"]}, None),
    ("records", trace("records", route="records", source_ids=["record:cv-b"]), {"relevant": ["cv-b"], "cited": ["record:cv-x"]}, "presentation"),
    ("answer", trace("error"), {}, None),
])
def test_classify_failure(expected, t, kw, want):
    got = classify_failure(expected, t, **kw)
    assert got == want
    assert got is None or got in FAILURE_CLASSES


def test_classify_takes_a_trace_record_and_doc_ids_from_the_trace_or_a_mapping():
    rec = TraceRecord(id="x", question="q", outcome="answered", route="retrieval",
                      retrieved=[{"id": "c9", "rank": 1, "doc_id": "en/projects/search"}], source_ids=["c9"])
    assert classify_failure("answer", rec, relevant=REL) is None  # the source's doc id is read from `retrieved`
    bare = TraceRecord(id="x", question="q", outcome="answered", route="retrieval",
                       retrieved=[{"id": "c9", "rank": 1}], source_ids=["c9"])
    assert classify_failure("answer", bare, relevant=REL) == "retrieval"  # "c9" itself is no doc id of REL
    assert classify_failure("answer", bare, relevant=REL, doc_of={"c9": "en/projects/search"}) is None
    assert classify_failure("answer", bare, relevant=REL, doc_of=lambda c: "en/projects/search") is None


def test_doc_id_of():
    assert doc_id_of("en/about#3") == "en/about"
    assert doc_id_of("record:cv-1") == "record:cv-1"
    assert doc_id_of("plain") == "plain"
