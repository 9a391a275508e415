"""vouched.guard.gate: check_sentence rule by rule, release, and SentenceGate streaming."""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.guard.gate import (
    DEFAULT_MIN_WORDS,
    LOOKAHEAD,
    RULES,
    GateVerdict,
    SentenceGate,
    check_sentence,
    strip_markers,
)

SOURCES = {
    1: "Vouched was started in 2023 by four engineers and serves 12,000 readers. "
    "Docs: https://vouched.dev/docs/ — contact: team@vouched.dev",
    2: "Revenue grew 18 % in 2024, to 3.5 million euros; the 2nd office opened in Lisbon.",
    3: "این پروژه در سال ۱۴۰۲ با ۳۵ نفر آغاز شد. 该项目于2021年启动，目前有250名用户。",
    4: "La empresa tiene 1.250 clientes y un margen de 0,52 desde 2019.",
}

# (sentence, lang, rule or None, offending value or None)
RULE_CASES = [
    # --- ok: markers of every shape, values in the cited source
    ("Vouched was started in 2023 [1].", "en", None, None),
    ("Vouched was started in 2023.[1]", "en", None, None),
    ("Vouched was started in 2023. [1]", "en", None, None),
    ("It serves 12.000 readers and grew 18% [1][2].", "en", None, None),
    ("It serves 12000 readers and grew 18% [1, 2].", "en", None, None),
    ("It serves 12,000 readers and grew 18% [1-2].", "en", None, None),
    ("The docs live at https://Vouched.dev/docs [1].", "en", None, None),
    ("Write to TEAM@vouched.dev for access [1].", "en", None, None),
    ("Revenue reached 3,5 million euros in 2024 [2].", "en", None, None),
    ("The 2nd office opened in Lisbon [2].", "en", None, None),
    ("La empresa tiene 1,250 clientes y un margen de 0.52 [4].", "es", None, None),
    ("این پروژه در سال ۱۴۰۲ با ۳۵ نفر آغاز شد [۳].", "fa", None, None),
    ("این پروژه در سال 1402 آغاز شد [3].", "fa", None, None),
    ("该项目于2021年启动，目前有250名用户[3]。", "zh", None, None),
    # short transitions without values pass unmarked
    ("In short:", "en", None, None),
    ("Here is what the sources say.", "en", None, None),
    ("En resumen, esto dicen las fuentes.", "es", None, None),
    ("以下是来源中的信息。", "zh", None, None),
    # --- marker_range
    ("Vouched was started in 2023 [5].", "en", "marker_range", "[5]"),
    ("Vouched was started in 2023 [0].", "en", "marker_range", "[0]"),
    ("Vouched was started in 2023 [1][9].", "en", "marker_range", "[9]"),
    ("Vouched was started in 2023 [1, 9].", "en", "marker_range", "[1, 9]"),
    ("Vouched was started in 2023 [2-1].", "en", "marker_range", "[2-1]"),
    ("Vouched was started in 2023 [1-7].", "en", "marker_range", "[1-7]"),
    ("این پروژه در سال ۱۴۰۲ آغاز شد [۹].", "fa", "marker_range", "[۹]"),
    ("I was started in 2099 [8].", "en", "marker_range", "[8]"),  # checked first
    # --- missing_marker
    ("Vouched was started by four engineers in Lisbon.", "en", "missing_marker", None),
    ("It began in 2023.", "en", "missing_marker", "2023"),
    ("See https://vouched.dev/docs.", "en", "missing_marker", "https://vouched.dev/docs"),
    ("La empresa tiene muchos clientes en toda España.", "es", "missing_marker", None),
    ("این پروژه با گروهی کوچک از مهندسان آغاز شد.", "fa", "missing_marker", None),
    ("在۱۴۰۲年。", "zh", "missing_marker", "۱۴۰۲"),
    ("该项目目前有很多用户和合作伙伴。", "zh", "missing_marker", None),  # 14 Han ≈ 9 words
    # --- unsupported_value: in no cited source, or only in a source not cited
    ("It serves 13,000 readers [1].", "en", "unsupported_value", "13,000"),
    ("Revenue grew 18% in 2024 [1].", "en", "unsupported_value", "18"),
    ("Revenue grew 18% in 2024 [2].", "en", None, None),
    ("It was started in 202 [1].", "en", "unsupported_value", "202"),
    ("It has 3 offices [1].", "en", "unsupported_value", "3"),
    ("Docs: https://vouched.dev/api [1].", "en", "unsupported_value", "https://vouched.dev/api"),
    ("Write to ana@vouched.dev [1].", "en", "unsupported_value", "ana@vouched.dev"),
    ("این پروژه در سال ۱۴۰۳ آغاز شد [۳].", "fa", "unsupported_value", "۱۴۰۳"),
    ("该项目于2022年启动[3]。", "zh", "unsupported_value", "2022"),
    ("La empresa tiene 1.350 clientes [4].", "es", "unsupported_value", "1.350"),
    # --- first_person
    ("I started Vouched in 2023 [1].", "en", "first_person", "i"),
    ("We serve 12,000 readers [1].", "en", "first_person", "we"),
    ("Tengo 1.250 clientes [4].", "es", "first_person", "tengo"),
    ("من این پروژه را در سال ۱۴۰۲ آغاز کردم [۳].", "fa", "first_person", "من"),
    ("این پروژه را در سال ۱۴۰۲ آغاز کردم [۳].", "fa", "first_person", "کردم"),
    ("我们于2021年启动了该项目[3]。", "zh", "first_person", "我"),
    ("他于2021年做了自我介绍[3]。", "zh", None, None),
    # --- no_answer
    ("NO_ANSWER", "en", "no_answer", "NO_ANSWER"),
    ("  NO_ANSWER.  ", "en", "no_answer", "NO_ANSWER"),
    ("(NO_ANSWER)", "fa", "no_answer", "NO_ANSWER"),
    ("No answer here.", "en", None, None),
    ("xNO_ANSWER", "en", "no_answer", "NO_ANSWER"),  # never shown to the reader
    # a misspelt token (a real model wrote "No_ANSWER"): in any case, with its underscore
    ("no_answer", "en", "no_answer", "NO_ANSWER"),
    ("No_ANSWER.", "en", "no_answer", "NO_ANSWER"),
    ("No_Answer [1].", "es", "no_answer", "NO_ANSWER"),
    ("The sources give no answer to the second question of the form [1].", "en", None, None),
    ("The field no_answer_flag is set to true [1].", "en", None, None),  # inside an identifier: not the token
]


@pytest.mark.parametrize(("sentence", "lang", "rule", "value"), RULE_CASES)
def test_rules(sentence: str, lang: str, rule: str | None, value: str | None) -> None:
    verdict = check_sentence(sentence, SOURCES, lang)
    assert (verdict.rule, verdict.value) == (rule, value)
    assert verdict.ok is (rule is None)
    assert verdict.sentence == sentence
    if rule is None:
        assert verdict.released
    else:
        assert verdict.released == "" and rule in RULES


@pytest.mark.parametrize(
    ("sentence", "released", "cited"),
    [
        ("Vouched was started in 2023 [1].", "Vouched was started in 2023.", (1,)),
        ("Vouched was started in 2023.[1]", "Vouched was started in 2023.", (1,)),
        ("Vouched was started in 2023. [1][2]", "Vouched was started in 2023.", (1, 2)),
        ("It began in 2023 [1] and grew 18% [2].", "It began in 2023 and grew 18%.", (1, 2)),
        ("[2] Revenue grew 18%.", "Revenue grew 18%.", (2,)),
        ("It grew [2][1][2] fast.", "It grew fast.", (2, 1)),
        ("Range [1-3] and [2, 4].", "Range and.", (1, 2, 3, 4)),
        ("این پروژه در سال ۱۴۰۲ آغاز شد [۳].", "این پروژه در سال ۱۴۰۲ آغاز شد.", (3,)),
        ("该项目于2021年启动[3]。", "该项目于2021年启动。", (3,)),
        ("Here is what the sources say.", "Here is what the sources say.", ()),
    ],
)
def test_release_strips_markers(sentence: str, released: str, cited: tuple[int, ...]) -> None:
    verdict = check_sentence(sentence, SOURCES, "en")
    assert verdict.ok, verdict
    assert (verdict.released, verdict.cited) == (released, cited)


def test_contentful_threshold() -> None:
    six = "one two three four five six."
    seven = "one two three four five six seven."
    assert DEFAULT_MIN_WORDS == 7
    assert check_sentence(six, SOURCES).ok
    assert check_sentence(seven, SOURCES).rule == "missing_marker"
    assert check_sentence(seven, SOURCES, min_words_for_marker=8).ok
    assert check_sentence("one — two — three — four — five — six.", SOURCES).ok  # dashes are not words
    # Chinese: 2 words per 3 Han characters; 10 characters ≈ 6.7 words, 11 ≈ 7.3
    assert check_sentence("一二三四五六七八九十", SOURCES, "zh").ok
    assert check_sentence("一二三四五六七八九十百", SOURCES, "zh").rule == "missing_marker"


def test_verdict_is_frozen() -> None:
    verdict = check_sentence("In short:", SOURCES)
    assert isinstance(verdict, GateVerdict)
    with pytest.raises(AttributeError):
        verdict.ok = False  # type: ignore[misc]


def test_check_sentence_is_pure() -> None:
    sources = dict(SOURCES)
    a = check_sentence("It serves 12,000 readers [1].", sources)
    b = check_sentence("It serves 12,000 readers [1].", sources)
    assert a == b and sources == SOURCES


# --- streaming --------------------------------------------------------------------------


def feed_all(gate: SentenceGate, chunks: list[str]) -> list[list[GateVerdict]]:
    return [gate.feed(c) for c in chunks]


def test_marker_after_the_full_stop_in_the_next_chunk() -> None:
    gate = SentenceGate(SOURCES, "en")
    assert gate.feed("Vouched was started in 2023.") == []
    assert gate.feed(" ") == []
    assert gate.feed("[") == []
    assert gate.feed("1") == []
    assert gate.feed("]") == []
    out = gate.feed(" Revenue grew 18% in 2024 [2]. And then more text follows here, unmarked.")
    assert [v.sentence for v in out] == ["Vouched was started in 2023. [1]", "Revenue grew 18% in 2024 [2]."]
    assert all(v.ok for v in out)
    assert gate.pending == " And then more text follows here, unmarked."
    rest = gate.finish()
    assert [v.rule for v in rest] == ["missing_marker"]


def test_marker_split_over_three_chunks() -> None:
    gate = SentenceGate(SOURCES, "en")
    chunks = ["It began in 2023 ", "[", "1", "]", ".", " Then it grew 18% in 2024 [2]."]
    assert sum(feed_all(gate, chunks[:5]), []) == []
    out = gate.feed(chunks[5]) + gate.finish()
    assert [(v.ok, v.released) for v in out] == [
        (True, "It began in 2023."),
        (True, "Then it grew 18% in 2024."),
    ]


def test_decimal_point_does_not_end_a_sentence() -> None:
    gate = SentenceGate(SOURCES, "en")
    for c in ["Revenue reached 3.", "5 million euros in 2024 [2]. ", "X" * (LOOKAHEAD + 1)]:
        out = gate.feed(c)
    assert [v.released for v in out] == ["Revenue reached 3.5 million euros in 2024."]


def test_release_needs_only_a_short_look_ahead() -> None:
    gate = SentenceGate(SOURCES, "en")
    assert gate.feed("It began in 2023 [1]. Then") == []
    out = gate.feed(" it grew and grew over")
    assert [v.sentence for v in out] == ["It began in 2023 [1]."]
    assert gate.pending == " Then it grew and grew over"


def test_several_sentences_in_one_chunk_and_the_stop() -> None:
    gate = SentenceGate(SOURCES, "en")
    text = "It began in 2023 [1]. It has 3 offices [1]. It grew 18% [2]. Later text."
    out = gate.feed(text)
    assert [(v.ok, v.rule) for v in out] == [(True, None), (False, "unsupported_value")]
    assert gate.closed and gate.failed == out[-1]
    assert gate.feed("More [1].") == [] and gate.finish() == []


def test_finish_checks_the_rest_and_closes() -> None:
    gate = SentenceGate(SOURCES, "en")
    assert gate.feed("Here is what the sources say.  ") == []
    out = gate.finish()
    assert [v.released for v in out] == ["Here is what the sources say."]
    assert gate.closed and gate.failed is None
    assert gate.feed("More.") == [] and gate.finish() == []


def test_no_answer_in_stream() -> None:
    gate = SentenceGate(SOURCES, "en")
    gate.feed("NO_")
    gate.feed("ANSWER")
    out = gate.finish()
    assert [(v.rule, v.value) for v in out] == [("no_answer", "NO_ANSWER")]


def test_empty_and_whitespace_streams() -> None:
    gate = SentenceGate(SOURCES)
    assert gate.feed("") == [] and gate.feed("  \n ") == []
    assert gate.finish() == [] and gate.pending == ""


def test_persian_and_chinese_streams() -> None:
    gate = SentenceGate(SOURCES, "fa")
    text = "این پروژه در سال ۱۴۰۲ آغاز شد.[۳] این پروژه را آغاز کردم [۳]."
    out = [v for c in text for v in gate.feed(c)] + gate.finish()
    assert [(v.ok, v.rule) for v in out] == [(True, None), (False, "first_person")]
    gate = SentenceGate(SOURCES, "zh")
    text = "该项目于2021年启动[3]。目前有250名用户[3]。我们很高兴[3]。"
    out = [v for c in text for v in gate.feed(c)] + gate.finish()
    assert [(v.ok, v.released) for v in out] == [
        (True, "该项目于2021年启动。"),
        (True, "目前有250名用户。"),
        (False, ""),
    ]


def test_gate_options() -> None:
    with pytest.raises(ValueError):
        SentenceGate(SOURCES, min_words_for_marker=0)
    gate = SentenceGate(SOURCES, "en", min_words_for_marker=100)
    gate.feed("A long sentence with many words but no marker at all.")
    assert [v.ok for v in gate.finish()] == [True]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["It", "grew", "in", "2023", "[1]", "[2]", "[1, 2]", " ", "  ", "\t", ",", "."]),
        min_size=1,
        max_size=20,
    ).map(" ".join)
)
def test_released_is_strip_markers(sentence: str) -> None:
    verdict = check_sentence(sentence, SOURCES, "en")
    if verdict.ok:
        assert verdict.released == strip_markers(sentence)


def test_pending_tracks_the_held_text() -> None:
    gate = SentenceGate(SOURCES, "en")
    gate.feed("It began in 2023 [1]. Then it grew")
    assert gate.pending == "It began in 2023 [1]. Then it grew"
    gate.feed(" and grew over the years.")
    assert gate.pending == " Then it grew and grew over the years."


# A citation marker is a citation: code such as r[0] or a[1], and anything inside a code
# span, is not a marker (no marker_range hold) and stays in the released text.
CODE_SOURCES = {1: "Use r[0] for the first row and a[1] for the second; rows_by_id[2] and f()[3] too.",
                2: "Vouched serves 12,000 readers."}


@pytest.mark.parametrize(("sentence", "rule", "released", "cited"), [
    ("Use r[0] for the first row [1].", None, "Use r[0] for the first row.", (1,)),
    ("The second row is a[1] in the loop [1].", None, "The second row is a[1] in the loop.", (1,)),
    ("Call `r[0]` or `a[1]` to read it [1].", None, "Call `r[0]` or `a[1]` to read it.", (1,)),
    ("Call `y[7]` to read it [1].", "unsupported_value", "", (1,)),  # code keeps its values
    ("Take rows_by_id[2] then f()[3] [1].", None, "Take rows_by_id[2] then f()[3].", (1,)),
    ("Then a[1][2] is read [1].", None, "Then a[1][2] is read.", (1,)),
    ("It serves 12,000 readers[2].", None, "It serves 12,000 readers.", (2,)),  # glued to a word: a citation
    ("It serves 12,000 readers [9].", "marker_range", "", ()),  # still checked
    ("The second row is a[1] in the loop.", "missing_marker", "", ()),  # code is no citation
])
def test_code_brackets_are_not_markers(sentence: str, rule: str | None, released: str, cited: tuple) -> None:
    v = check_sentence(sentence, CODE_SOURCES, "en")
    assert (v.rule, v.released, v.cited) == (rule, released, cited)
    if rule is None:
        assert strip_markers(sentence) == released


# --- what the model was shown: title and section count (vouched.guard.prompt.gate_text) -------------


def test_gate_text_holds_title_and_section_not_date():
    from vouched.guard.prompt import PromptSource, gate_text

    s = PromptSource(1, "p#3", "p", "Multilingual search for Tessera Health", "How it was measured", "2024-10-01",
                     None, "The team built a judged set of 1,200 queries.")
    t = gate_text(s)
    assert t.startswith("Multilingual search for Tessera Health\nHow it was measured\n") and t.endswith(s.text)
    assert "2024-10-01" not in t
    bare = PromptSource(2, "q", "q", "", "", None, None, "Text only.")
    assert gate_text(bare) == "Text only."
    # a name that only the title states is supported once the gate sees the title; the date still is not
    sentence = "The judged query set built for Tessera Health had 1,200 queries [1]."
    assert not check_sentence(sentence, {1: s.text}, "en").ok
    assert check_sentence(sentence, {1: gate_text(s)}, "en").ok
    dated = check_sentence("The page was updated on 2024-10-01 [1].", {1: gate_text(s)}, "en")
    assert not dated.ok and dated.rule == "unsupported_value"


@pytest.mark.parametrize("sentence,released", [
    ("[conflict]", ""),
    ("[current]", ""),
    ("She advises Mar Azul [current] [1].", "She advises Mar Azul."),
    ("She advises Mar Azul [1] [Current].", "She advises Mar Azul."),
    ("Use `x[current]` here [1].", "Use `x[current]` here."),
])
def test_header_flags_echoed_by_a_model_are_not_released(sentence, released):
    # seen with a real model: the whole answer was the source header's "[conflict]"
    v = check_sentence(sentence, {1: "She advises Mar Azul. Use `x[current]` here."}, "en")
    assert v.ok and v.released == released
