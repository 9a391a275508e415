"""vouched.text.numwords and its use by the gate: a number a source states in words supports its digits, nothing more."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.guard.gate import check_sentence
from vouched.guard.values import source_values
from vouched.text.numwords import CARDINALS, EXCLUDED, spelled_numbers, spelled_numbers_by_words

PAIRS = sorted((lang, w, n) for lang, table in CARDINALS.items() for w, n in table.items())
FILLER = ["the", "team", "de", "la", "تیم", "در", "команда", "टीम", "und", "équipe", "2024", "12,000", "-", ";", "«", "»"]


@pytest.mark.parametrize("lang,word,n", PAIRS)
def test_each_word_gives_its_number(lang, word, n):
    assert spelled_numbers(f"x {word} y") == {str(n)}
    assert spelled_numbers(word.upper()) == {str(n)}


@pytest.mark.parametrize("word", EXCLUDED)
def test_excluded_words_give_nothing(word):
    assert spelled_numbers(f"the {word} thing") == frozenset()


def test_words_inside_longer_words_do_not_count():
    # "ten" in "often", "dos" in "todos", "سه" in "مدرسه", "two" in "network"
    assert spelled_numbers("often todos network مدرسه fourteen twentieth") == frozenset()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([w for _, w, _ in PAIRS] + list(EXCLUDED) + FILLER), max_size=12),
       st.sampled_from([" ", ", ", "\u200c", "\n", " - "]))
def test_fast_reading_equals_the_word_tokeniser(tokens, sep):
    text = sep.join(tokens)
    assert spelled_numbers(text) == spelled_numbers_by_words(text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PAIRS), st.text(alphabet="abc 0123456789.,", max_size=30))
def test_source_values_only_grow(pair, rest):
    lang, word, n = pair
    base = source_values(rest)
    with_word = source_values(f"{rest} {word} ")
    assert base <= with_word and str(n) in with_word


# --- the gate ------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PAIRS))
def test_gate_releases_the_digits_of_a_spelled_number(pair):
    lang, word, n = pair
    source = {1: f"Report: the project had {word} engineers in 2021."}
    ok = check_sentence(f"The project had {n} engineers in 2021 [1].", source, "en")
    assert ok.ok, ok


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PAIRS), st.integers(min_value=0, max_value=10_000))
def test_gate_still_holds_any_other_number(pair, m):
    lang, word, n = pair
    if str(m) in {str(n), "2021"}:
        return
    source = {1: f"Report: the project had {word} engineers in 2021."}
    v = check_sentence(f"The project had {m} engineers in 2021 [1].", source, "en")
    assert not v.ok and v.rule == "unsupported_value" and v.value == str(m)


def test_number_words_in_a_sentence_are_still_not_values():
    # unchanged behaviour: a sentence's words are not checked as values (only its digits)
    v = check_sentence("The project had four engineers [1].", {1: "The project had 5 engineers."}, "en")
    assert v.ok


def test_a_cited_source_must_hold_it():
    # the word is in source 2, the sentence cites 1: still held
    v = check_sentence("The team had 4 people [1].", {1: "The team was small.", 2: "A team of four."}, "en")
    assert not v.ok and v.rule == "unsupported_value"


def test_compounds_are_not_computed():
    v = check_sentence("It had 200 pages [1].", {1: "It had two hundred pages."}, "en")
    assert not v.ok and v.value == "200"


@pytest.mark.parametrize("source,sentence", [
    ("Leila dirigió un equipo de cuatro personas.", "Leila dirigió un equipo de 4 personas [1]."),
    ("Leila trabaja en cuatro idiomas.", "Leila trabaja en 4 idiomas [1]."),
    ("لیلا به چهار زبان کار می‌کند.", "لیلا به ۴ زبان کار می‌کند [1]."),
    ("Une équipe de trois ingénieurs.", "Une équipe de 3 ingénieurs [1]."),
    ("Команда из пяти инженеров.", "Команда из 5 инженеров [1]."),
    ("يعمل في الفريق ثلاثة مهندسين.", "يعمل في الفريق 3 مهندسين [1]."),
    ("टीम में पाँच लोग थे।", "टीम में 5 लोग थे [1]।"),
])
def test_languages_end_to_end(source, sentence):
    assert check_sentence(sentence, {1: source}, None).ok
