"""A leading citation: "[1]. The sentence." — the markers a model put before its sentence cite it.

The normalisation is pinned as a property: through the streaming gate, however the text is
chunked, a bare marker unit followed by a sentence gives that sentence exactly the verdict
``check_sentence`` gives it with the markers written in it; a sentence with markers of its own
keeps its own verdict; and the carry reaches one sentence only.
"""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.guard.gate import SentenceGate, check_sentence, leading_citation, with_leading_citation

SOURCES = {
    1: "The primary on-call acknowledges a page within 5 minutes. Escalate to pg-core-2 after 15 minutes.",
    2: "Damage must be reported within 7 days of delivery. Express delivery reaches mainland Spain only.",
    3: "Ana Costa wrote the 2021 migration guide for Lisbon.",
}
WORDS = ["the", "page", "within", "minutes", "damage", "reported", "days", "delivery", "Spain", "Lisbon",
         "Ana", "Costa", "guide", "5", "7", "15", "2021", "2024", "pg-core-2", "Madrid", "on-call", "must"]


def _run(text: str, cuts: list[int]) -> list:
    gate = SentenceGate(SOURCES, "en")
    out, at = [], 0
    for c in sorted(set(cuts)) + [len(text)]:
        if c > at:
            out += gate.feed(text[at:c])
            at = c
    return out + gate.finish()


sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(lambda ws: " ".join(ws).capitalize() + ".")
markers = st.lists(st.integers(1, 3), min_size=1, max_size=3, unique=True)


@settings(max_examples=300, deadline=None)
@given(markers, st.sampled_from([". ", ".\n", ": ", ".\n\n"]), sentence, st.lists(st.integers(0, 200), max_size=6))
def test_a_leading_citation_gives_the_sentence_the_verdict_it_has_with_those_markers(cited, sep, text, cuts):
    bare = "".join(f"[{i}]" for i in cited)
    stream = bare + sep + text
    verdicts = _run(stream, cuts)
    expected = check_sentence(bare + " " + text, SOURCES, "en")
    if sep == ": ":  # no sentence boundary: one sentence that starts with its markers
        assert len(verdicts) == 1 and verdicts[0].ok == check_sentence(stream, SOURCES, "en").ok
        return
    assert verdicts[0].ok and verdicts[0].cited == tuple(cited) and leading_citation(verdicts[0]) == bare
    last = verdicts[-1]
    assert (last.ok, last.rule, last.cited, last.released) == (expected.ok, expected.rule, expected.cited, expected.released)


@settings(max_examples=200, deadline=None)
@given(markers, sentence, st.integers(1, 3))
def test_a_sentence_with_its_own_marker_keeps_its_own_sources(cited, text, own):
    bare = "".join(f"[{i}]" for i in cited)
    marked = text[:-1] + f" [{own}]."
    verdicts = _run(f"{bare}. {marked}", [])
    expected = check_sentence(marked, SOURCES, "en")
    assert (verdicts[-1].ok, verdicts[-1].rule, verdicts[-1].cited) == (expected.ok, expected.rule, expected.cited)


@settings(max_examples=200, deadline=None)
@given(markers, sentence, sentence)
def test_the_carry_reaches_one_sentence_only(cited, first, second):
    bare = "".join(f"[{i}]" for i in cited)
    verdicts = _run(f"{bare}. {first} {second}", [])
    if len(verdicts) == 3 and verdicts[1].ok:  # the second sentence was reached
        # the verdict it has alone (a carried marker would show in its `sentence`)
        assert verdicts[2] == _run(second, [])[0] and not verdicts[2].sentence.startswith("[")


def test_with_leading_citation_leaves_marked_and_uncarried_pieces_alone():
    assert with_leading_citation(None, "Plain.") == "Plain."
    assert with_leading_citation("[1]", "Plain.") == "[1] Plain."
    assert with_leading_citation("[1]", "Own [2].") == "Own [2]."


def test_only_bare_ok_units_are_leading_citations():
    assert leading_citation(check_sentence("[1][3].", SOURCES)) == "[1][3]"
    assert leading_citation(check_sentence("[2]:", SOURCES)) == "[2]"
    assert leading_citation(check_sentence("Damage within 7 days [2].", SOURCES)) is None
    assert leading_citation(check_sentence("[9].", SOURCES)) is None  # out of range: held, nothing carried
    assert leading_citation(check_sentence(".", SOURCES)) is None
    assert re.fullmatch(r"(\[\d\])+", leading_citation(check_sentence("[1-3].", SOURCES)))
