"""L2's pure decisions (guard/threshold.py): the texts a question is scored as, and the threshold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.guard.threshold import PREVIOUS_ANSWER_CHARS, EvidenceDecision, decide, scoring_queries

_SCORE = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
# the run sets scoring_queries gives: the question, and at most one of joined / ordinal
_RUNS = st.tuples(st.sampled_from([("question",), ("question", "joined"), ("question", "ordinal"), ("joined",)]),
                  st.lists(_SCORE, min_size=2, max_size=2)).map(lambda x: dict(zip(x[0], x[1])))
_THRESHOLD = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def test_no_run_passes_only_without_a_threshold():
    assert decide({}, 0.8) == EvidenceDecision(0.0, 0.8, False, "none")
    assert decide({}, 0.0).passed


def test_the_threshold_is_inclusive_and_the_best_run_decides():
    assert decide({"question": 0.80}, 0.80).passed
    assert not decide({"question": 0.7999}, 0.80).passed
    d = decide({"question": 0.61, "joined": 0.83}, 0.80)
    assert d.passed and d.run == "joined" and d.evidence == 0.83 and d.threshold == 0.80


def test_on_a_tie_the_question_as_asked_is_the_run():
    assert decide({"joined": 0.9, "question": 0.9}, 0.5).run == "question"
    assert decide({"question": 0.9, "ordinal": 0.9}, 0.5).run == "question"


@settings(max_examples=300, deadline=None)
@given(_RUNS, _THRESHOLD, _THRESHOLD)
def test_decide_is_the_best_evidence_against_the_threshold(runs, threshold, other):
    d = decide(runs, threshold)
    assert d.evidence == max(runs.values()) and runs[d.run] == d.evidence
    assert d.passed == (d.evidence >= threshold)
    # a higher threshold never lets more through; the decision does not depend on dict order
    if other >= threshold and decide(runs, other).passed:
        assert d.passed
    assert decide(dict(reversed(list(runs.items()))), threshold) == d


def test_a_question_alone_is_scored_as_asked():
    assert scoring_queries("Which index did the search use?") == {"question": "Which index did the search use?"}
    assert scoring_queries("她在哪里工作？", None, "She works at a lab.") == {"question": "她在哪里工作？"}


def test_a_follow_up_is_also_scored_joined_to_the_previous_question():
    runs = scoring_queries("و دومی؟", "پروژه‌های او کدام‌اند؟", "۱. الف\n۲. ب")
    assert runs == {"question": "و دومی؟", "joined": "پروژه‌های او کدام‌اند؟ و دومی؟"}


def test_an_ordinal_is_scored_as_its_item_or_joined_to_the_start_of_the_answer():
    answer = "1. Pakneviss, a handwriting cleaner\n2. The clinic search\n" + "x" * 600
    assert scoring_queries("the second one?", "Which projects?", answer, "  The clinic search ", True) == {
        "question": "the second one?", "ordinal": "The clinic search"}
    joined = scoring_queries("the ninth one?", "Which projects?", answer, None, True)
    assert set(joined) == {"question", "joined"} and "ordinal" not in joined
    assert joined["joined"] == f"the ninth one? {answer[:PREVIOUS_ANSWER_CHARS]}".strip()
    # nothing to join: the question alone
    assert scoring_queries("el segundo", "¿Qué proyectos?", "   ", " ", True) == {"question": "el segundo"}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.one_of(st.none(), st.text(max_size=60)), st.text(max_size=400),
       st.one_of(st.none(), st.text(max_size=40)), st.booleans())
def test_scoring_queries_always_scores_the_question_as_asked(question, prev_q, prev_a, item, ordinal):
    runs = scoring_queries(question, prev_q, prev_a, item, ordinal)
    assert runs["question"] == question and set(runs) <= {"question", "joined", "ordinal"}
    assert not ("ordinal" in runs and "joined" in runs)
    if not ordinal:
        assert ("joined" in runs) == bool(prev_q)  # any previous question: also scored joined to it
        if prev_q:
            assert runs["joined"] == f"{prev_q} {question}".strip()
