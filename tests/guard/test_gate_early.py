"""SentenceGate(early_stop=True): a value or name in none of the sources stops the stream as
soon as the word is complete, and never changes what the full check would release."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.guard.gate import SentenceGate

SOURCES = {
    1: "Vouched was started in 2023 by four engineers in Lisbon and serves 12,000 readers.",
    2: "Das Team wurde 2016 in Berlin gegründet und nutzt GitHub.",
    3: "该项目于2021年启动，使用GitHub和Kraken。",
    4: "Компания основана в Москве в 2015 году.",
}

GOOD = [
    ("Vouched was started in 2023 by four engineers [1]. ", "en"),
    ("It serves 12,000 readers from its office in Lisbon [1]. ", "en"),
    ("[1] In Lisbon the team of four grew steadily. ", "en"),
    ("Here is what the sources say. ", "en"),
    ("Das Team wurde 2016 in Berlin gegründet [2]. ", "de"),
    ("该项目于2021年启动，使用Kraken[3]。", "zh"),
    ("Компания основана в Москве в 2015 году [4]. ", "ru"),
    ("It serves readers [1, 2] and more of them every year since 2023 [1]. ", "en"),
]
BAD = [
    ("It serves 13,500 readers in many places [1]. ", "en", "13,500"),
    ("Its second office opened in Lisburn last spring [1]. ", "en", "Lisburn"),
    ("Das Team wurde in Hamburg gegründet [2]. ", "de", "Hamburg"),
    ("该项目使用GitLab托管[3]。", "zh", "GitLab"),
    ("Компания основана в Казани [4]. ", "ru", "Казани"),
    ("The team runs QXR drills [1]. ", "en", "QXR"),
]


def _run(gate: SentenceGate, chunks: list[str]) -> list:
    out = []
    for c in chunks:
        out += gate.feed(c)
        if gate.closed:
            return out
    return out + gate.finish()


def _chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:]) if b > a]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(GOOD), st.sampled_from(BAD)), min_size=1, max_size=5),
       st.lists(st.integers(min_value=0, max_value=10_000), max_size=40))
def test_early_stop_never_changes_what_is_released(picks, cuts) -> None:
    lang = picks[0][1]
    text = "".join(p[0] for p in picks if p[1] == lang)
    chunks = _chunks(text, cuts)
    full = _run(SentenceGate(SOURCES, lang), chunks)
    early = _run(SentenceGate(SOURCES, lang, early_stop=True), chunks)
    ok_full = [v for v in full if v.ok]
    ok_early = [v for v in early if v.ok]
    if all(v.ok for v in full):
        assert early == full
        return
    # The same sentences released, then a stop on the same sentence.
    assert ok_early == ok_full
    assert not early[-1].ok
    assert early[-1].rule in (full[-1].rule, "unsupported_value", "unsupported_name")


@pytest.mark.parametrize(("sentence", "lang", "value"), [(b[0], b[1], b[2]) for b in BAD])
def test_decided_on_the_word_after_the_foreign_one(sentence: str, lang: str, value: str) -> None:
    """Fed a word (or, for Chinese, a character) at a time, as a model streams tokens."""
    if lang == "zh":
        tokens = list(sentence)
    else:
        words = sentence.split(" ")
        tokens = [words[0]] + [" " + w for w in words[1:]]
    gate = SentenceGate(SOURCES, lang, early_stop=True)
    at = next(i for i in range(len(tokens)) if value in "".join(tokens[: i + 1]))  # the value's last token
    for i, t in enumerate(tokens):
        out = gate.feed(t)
        if gate.closed:
            assert out[-1].value == value and not out[-1].ok
            assert i - at <= 1, (i, at)
            return
    raise AssertionError("not stopped early")


def test_a_value_in_another_source_waits_for_the_marker() -> None:
    """In some source, so a marker could still support it: only the full check decides."""
    gate = SentenceGate(SOURCES, "en", early_stop=True)
    assert gate.feed("The team was founded in 2016 and grew ") == []
    assert not gate.closed
    out = gate.feed("fast [2]. ") + gate.finish()
    assert [v.rule for v in out] == [None]


def test_markers_and_unfinished_markers_are_not_values() -> None:
    gate = SentenceGate(SOURCES, "en", early_stop=True)
    for t in ["Vouched", " serves", " readers", " [1,", " 2]", " and", " more", " [3-4]", " of", " them", "."]:
        assert gate.feed(t) == [] or all(v.ok for v in gate.feed(""))
    assert not gate.closed
