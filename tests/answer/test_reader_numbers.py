"""The reader's source numbers start at 1 and follow the order of first citation (issue 19).

Before, the reader saw the prompt's numbers: an answer drawn only from the second passage
given showed "[2]" and a sources list starting at 2."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vouched.answer.events import CitedSource, DoneEvent, SentenceEvent
from vouched.answer.numbering import ReaderNumbers


def src(n: int) -> CitedSource:
    return CitedSource(number=n, id=f"c{n}", doc_id=f"d{n}", title=f"T{n}")


def test_second_passage_only_reads_as_one():
    r = ReaderNumbers()
    assert r.apply(SentenceEvent(text="A.", sources=(2,))).sources == (1,)
    done = r.apply(DoneEvent(outcome="answered", sources=(src(2),), trace_id="t"))
    assert [(s.number, s.id) for s in done.sources] == [(1, "c2")]


@given(st.lists(st.lists(st.integers(1, 8), max_size=3), max_size=8))
def test_numbers_are_contiguous_in_first_citation_order(cites):
    r = ReaderNumbers()
    shown = [r.apply(SentenceEvent(text="x.", sources=tuple(c))).sources for c in cites]
    cited = list(dict.fromkeys(n for c in cites for n in c))
    listed = sorted(set(cited) | {8})  # the prompt order of the done list, plus one never cited
    done = r.apply(DoneEvent(outcome="answered", sources=tuple(src(n) for n in listed), trace_id="t"))
    firsts = list(dict.fromkeys(n for s in shown for n in s))
    assert firsts == list(range(1, len(cited) + 1))
    assert [s.number for s in done.sources] == list(range(1, len(listed) + 1))
    for before, after in zip(cites, shown):  # the same source keeps one number everywhere
        assert [done.sources[m - 1].id for m in after] == [f"c{n}" for n in before]


def test_assistant_answers_number_sources_from_one(assistant):
    a, _ = assistant
    questions = ["What is pakneviss?", "Which languages does she speak?", "What tools does she use for evaluation?",
                 "Which open-source libraries does she maintain?", "Who funded the Tessera Health project?"]
    for q in questions:
        events = list(a.stream(q))
        done = events[-1]
        shown = [n for e in events if isinstance(e, SentenceEvent) for n in e.sources]
        if done.sources:
            assert [s.number for s in done.sources] == list(range(1, len(done.sources) + 1)), q
            assert shown and shown[0] == 1 and set(shown) <= {s.number for s in done.sources}, q
