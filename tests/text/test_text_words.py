"""words(), content_words() and the stop-word lists."""

from __future__ import annotations

import pytest

from vouched.text import LANGS, content_words, is_han, normalize, stopwords, words


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hello, World!", ["hello", "world"]),
        ("Don't stop", ["don't", "stop"]),
        ("Don’t stop", ["don't", "stop"]),
        ("the students' work", ["the", "students", "work"]),
        ("It grew 3.5 percent, not 3,5", ["it", "grew", "3.5", "percent", "not", "3,5"]),
        ("v2.1.3 released", ["v2.1.3", "released"]),
        ("ana.lopez@example.org", ["ana", "lopez", "example", "org"]),
        ("snake_case-word", ["snake", "case", "word"]),
        ("l'équipe d'Ana qu'il", ["l", "équipe", "d", "ana", "qu", "il"]),
        ("ＡＢＣ ｄｅｆ", ["abc", "def"]),
        ("Straße", ["strasse"]),
        ("Привет, мир!", ["привет", "мир"]),
        ("عليّ و كتابُها", ["علی", "و", "کتابها"]),
        ("۳٫۵ درصد", ["3.5", "درصد"]),
        ("می‌خواهم", ["می", "خواهم"]),
        ("", []),
        ("... !!! ???", []),
    ],
)
def test_words(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_chinese_bigrams() -> None:
    assert words("我在北京工作") == ["我在", "在北", "北京", "京工", "工作"]
    assert words("书") == ["书"]
    assert words("北京") == ["北京"]
    # runs are split by other scripts and punctuation
    assert words("我在Google工作，很好。") == ["我在", "google", "工作", "很好"]
    assert words("2020年") == ["2020", "年"]


@pytest.mark.parametrize("word", ["किताब", "हिन्दी", "हिंदी", "पढ़ाई", "विश्वविद्यालय", "क्या", "प्रोफ़ेसर"])
def test_hindi_whole_words(word: str) -> None:
    assert words(word) == [normalize(word)]
    assert words(f"यह {word} है।") == ["यह", normalize(word), "है"]


def test_bengali_and_other_marks_stay_inside_words() -> None:
    assert words("বাংলা ভাষা") == ["বাংলা", "ভাষা"]
    assert words("cafe\u0301") == ["café"]


def test_is_han() -> None:
    assert all(is_han(c) for c in "我在北京工作書")
    assert is_han("\U00020000")
    assert not any(is_han(c) for c in "aк۱हの한。、")
    assert not is_han("")


# --- stop words ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lang, minimum",
    [("en", 150), ("es", 100), ("pt", 100), ("fr", 100), ("de", 100), ("ru", 100), ("fa", 100), ("ar", 100), ("hi", 80), ("zh", 40)],
)
def test_stopword_lists_are_reasonably_complete(lang: str, minimum: int) -> None:
    assert len(stopwords(lang)) >= minimum


def test_stopwords_are_normalised_and_unioned() -> None:
    ar = stopwords("ar")
    assert "فی" in ar and "الی" in ar and "علی" in ar  # في / إلى / على in normalised form
    assert "ان" in stopwords("fa")  # آن
    assert "don't" in stopwords("en")
    assert "dass" in stopwords("de")  # daß and dass both fold to dass
    union = stopwords(None)
    for lang in LANGS:
        assert stopwords(lang) <= union
    assert stopwords("EN") == stopwords("en-US") == stopwords("en")
    assert stopwords("it") == frozenset()
    assert all(w == normalize(w) for lang in LANGS for w in stopwords(lang))


@pytest.mark.parametrize("q", ["what does she do", "What does she do?", "Who is he?", "How did they do it?", "Which one is it?"])
def test_english_question_words_have_no_content(q: str) -> None:
    assert content_words(q, "en") == []
    assert content_words(q) == []


@pytest.mark.parametrize(
    "text, lang, expected",
    [
        ("What does she do at Acme Labs now?", "en", ["acme", "labs"]),
        ("Which projects has she worked on? Projects, projects!", "en", ["projects", "worked"]),
        ("¿Qué hace ella en la universidad de Madrid?", "es", ["universidad", "madrid"]),
        ("Onde ela estudou engenharia?", "pt", ["estudou", "engenharia"]),
        ("Sur quels projets a-t-elle travaillé à l'université ?", "fr", ["projets", "travaillé", "université"]),
        ("An welchen Projekten hat sie gearbeitet?", "de", ["projekten", "gearbeitet"]),
        ("Где она работает сейчас?", "ru", ["работает"]),
        ("او در کدام دانشگاه تدریس می‌کند؟", "fa", ["دانشگاه", "تدریس"]),
        ("او در كدام دانشگاه تدريس مي‌كند؟", "fa", ["دانشگاه", "تدریس"]),
        ("ما هي الجامعة التي تعمل فيها؟", "ar", ["الجامعه", "تعمل"]),
        ("वह किस विश्वविद्यालय में पढ़ाती है?", "hi", ["विश्वविद्यालय", "पढ़ाती"]),
        ("她的工作是什么？", "zh", ["工作"]),
        ("她在北京大学做什么研究？", "zh", ["在北", "北京", "京大", "大学", "学做", "研究"]),
        ("He wrote 12 books in 2021.", "en", ["wrote", "books", "2021"]),
    ],
)
def test_content_words(text: str, lang: str, expected: list[str]) -> None:
    assert content_words(text, lang) == expected


def test_content_words_none_uses_union_of_stopwords() -> None:
    assert content_words("¿Qué hace ella en la universidad?") == ["universidad"]
    assert content_words("Was macht sie an der Universität?") == ["universität"]
    assert content_words("她的工作是什么") == ["工作"]


def test_content_words_order_and_dedup() -> None:
    assert content_words("zeta alpha zeta beta alpha", "en") == ["zeta", "alpha", "beta"]
