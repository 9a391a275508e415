"""A lead phrase whose only object is a marker ("According to [2], …") is not released as
"According to, …": only those words go, in every language the project serves."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vouched.guard.gate import check_sentence
from vouched.guard.gate_markers import drop_citation_lead

SRC = {1: "pg-core-1 is rebuilt as a replica with pg_rewind on the next business day.",
       2: "Rebuild pg-core-1 with pg_rewind; la réplica se reconstruye al día siguiente."}


def _released(sentence: str, lang: str = "en") -> str:
    v = check_sentence(sentence, SRC, lang)
    assert v.ok, v
    return drop_citation_lead(v.sentence, v.released)


@pytest.mark.parametrize("sentence,lang,expected", [
    ("According to [2], pg-core-1 is rebuilt with pg_rewind.", "en", "pg-core-1 is rebuilt with pg_rewind."),
    ("According to [1][2], it is rebuilt on the next business day.", "en", "It is rebuilt on the next business day."),
    ("Based on [1]: rebuild it the next business day.", "en", "Rebuild it the next business day."),
    ("Según [2], la réplica se reconstruye al día siguiente.", "es", "La réplica se reconstruye al día siguiente."),
    ("Segundo [2], a réplica é reconstruída no dia seguinte.", "pt", "A réplica é reconstruída no dia seguinte."),
    ("Selon [2], la réplique est reconstruite le lendemain.", "fr", "La réplique est reconstruite le lendemain."),
    ("Laut [2], wird das Replikat am nächsten Tag neu aufgebaut.", "de", "Wird das Replikat am nächsten Tag neu aufgebaut."),
    ("Согласно [2], реплика восстанавливается на следующий день.", "ru", "Реплика восстанавливается на следующий день."),
    ("بر اساس [2]، رپلیکا روز بعد بازسازی می‌شود.", "fa", "رپلیکا روز بعد بازسازی می‌شود."),
    ("根据[2]，副本在第二天重建。", "zh", "副本在第二天重建。"),
    ("स्रोत [2] के अनुसार, प्रतिकृति अगले दिन फिर से बनाई जाती है।", "hi", "प्रतिकृति अगले दिन फिर से बनाई जाती है।"),
])
def test_the_lead_phrase_goes_with_its_marker(sentence, lang, expected):
    assert _released(sentence, lang) == expected


@pytest.mark.parametrize("sentence", [
    "pg-core-1 is rebuilt according to the runbook [1].",  # the phrase has its own object
    "According to the runbook, pg-core-1 is rebuilt [1].",
    "It is rebuilt with pg_rewind [1], according to the team.",
    "In short, it is rebuilt on the next business day [1].",
])
def test_other_sentences_are_released_as_they_were(sentence):
    v = check_sentence(sentence, SRC, "en")
    assert drop_citation_lead(v.sentence, v.released) == v.released


@given(st.text(min_size=0, max_size=60))
def test_only_words_before_the_first_marker_ever_go(text):
    sentence = "According to [1], " + text
    released = check_sentence(sentence, SRC, "en").released or text
    out = drop_citation_lead(sentence, released)
    assert out == released or released.endswith(out[1:]) and len(out) <= len(released)
