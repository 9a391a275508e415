"""The answer's own unit must say what was asked (vouched.answer.coverage.sentence_support,
vouched.answer.extractive.supports): anchors in the unit, the question's negation, no opposite."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.answer.coverage import negates, opposite_asked, sentence_support
from vouched.answer.extractive import ExtractiveGenerator, anchor_found, supports
from vouched.answer.units import Unit
from vouched.guard.prompt import NO_ANSWER, PromptSource


def sup(q, text, anchors=(), lang="en", context=""):
    return sentence_support(q, text, context, lang, list(anchors), found=lambda a, t: anchor_found(a, t, lang))


def test_another_entity_in_the_sentence_is_not_support():
    v = sup("How much grain did Ortega ship to the ports in 1974?", "Mendel shipped the ports their grain in 1974.",
            ["Ortega", "1974"])
    assert not v.passed and v.missing == ("Ortega",) and "Ortega" in v.reason
    assert sup("How much grain did Ortega ship in 1974?", "In 1974 Ortega shipped 40 tonnes.", ["Ortega", "1974"]).passed


def test_a_number_asked_must_be_the_sentence_s():
    assert sup("Who mapped the delta in 1911?", "The delta was mapped in 1908 by Ilse Brandt.", ["1911"]).missing == ("1911",)


def test_the_heading_and_title_count_as_the_unit_s_words():
    assert sup("When did the Varga Bridge open?", "It opened in 1931.", ["Varga Bridge"], context="Varga Bridge").passed


def test_the_question_negates_what_the_sentence_states():
    v = sup("Which two traders did not appeal the fine?", "Two traders, Kell and Ruiz, appealed the fine.")
    assert v.negation and not v.passed
    assert sup("Which two traders did not appeal?", "Kell and Ruiz did not appeal.").passed
    assert sup("Which traders didn't appeal?", "Kell never appealed.").passed


def test_a_sentence_that_negates_is_no_reason_to_refuse():
    # Answerable questions are often answered by a negated sentence ("not always practical").
    assert sup("Is a fast method always practical?", "A fast method is not always practical.").passed


def test_the_opposite_of_an_asked_word():
    v = sup("What is the softest stone in the quarry?", "Marble is the hardest stone in the quarry.")
    assert v.opposite == ("softest", "hardest") and not v.passed and "softest" in v.reason
    assert sup("What is the hardest stone?", "Marble is the hardest stone.").passed
    # both words in the sentence: it contrasts them, and may answer
    assert sup("Which is the last stop?", "The first stop is Alder and the last stop is Birch.").passed


@pytest.mark.parametrize("lang,question,sentence", [
    ("en", "Who did not sign?", "Ana signed."),
    ("es", "¿Quién no firmó el tratado?", "Ana firmó el tratado."),
    ("pt", "Quem não assinou o tratado?", "Ana assinou o tratado."),
    ("fr", "Qui n'a pas signé le traité ?", "Ana a signé le traité."),
    ("de", "Wer hat den Vertrag nicht unterschrieben?", "Ana hat den Vertrag unterschrieben."),
    ("ru", "Кто не подписал договор?", "Анна подписала договор."),
    ("fa", "چه کسی هرگز قرارداد را امضا کرد؟", "آنا قرارداد را امضا کرد."),
    ("ar", "من لم يوقع المعاهدة؟", "وقعت آنا المعاهدة."),
    ("hi", "किसने संधि पर हस्ताक्षर नहीं किए?", "अना ने संधि पर हस्ताक्षर किए।"),
    ("zh", "谁没签署条约？", "安娜签署了条约。"),
])
def test_negation_in_every_language(lang, question, sentence):
    assert negates(question, lang) and not negates(sentence, lang)
    assert sup(question, sentence, lang=lang).negation


def test_chinese_words_that_only_look_negated():
    assert not negates("这两个方法不同，未来会合并。", "zh")


@pytest.mark.parametrize("lang,question,sentence,pair", [
    ("es", "¿Cuál fue el último puerto?", "El primero puerto fue Vigo.", ("último", "primero")),
    ("de", "Was war die letzte Station?", "Die erste Station war Ulm.", ("letzte", "erste")),
    ("ru", "Какой был последний город?", "Первый город был Тверь.", ("последний", "первый")),
    ("zh", "最小的城市是哪个？", "最大的城市是上海。", None),  # Han bigrams: 最小/最大 are words here
])
def test_opposites_in_other_languages(lang, question, sentence, pair):
    got = opposite_asked(question, sentence, lang)
    if pair is None:
        assert got is not None
    else:
        from vouched.text import words

        assert got == (" ".join(words(pair[0])), " ".join(words(pair[1])))


_VOCAB = ["river", "bridge", "Orlan", "1911", "tower", "softest", "hardest", "not", "built", "the", "who", "when",
          "largest", "smallest", "Kestrel Bay", "mapped", "never", "first", "last"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=8))
def test_a_sentence_that_repeats_the_question_supports_it(ws):
    from vouched.answer.answer_type import question_anchors

    q = " ".join(ws) + "?"
    anchors = question_anchors(q, "en")
    assert sup(q, " ".join(ws) + ".", anchors).passed


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=8), st.lists(st.sampled_from(_VOCAB), max_size=8))
def test_adding_the_question_s_words_to_a_sentence_never_loses_support(qs, extra):
    # Monotone: a sentence that supports the question still does with more of the question's words.
    from vouched.answer.answer_type import question_anchors

    q = " ".join(qs) + "?"
    s = " ".join(extra) + "."
    anchors = question_anchors(q, "en")
    if sup(q, s, anchors).passed:
        assert sup(q, s[:-1] + " " + " ".join(qs) + ".", anchors).passed


def test_a_unit_in_another_language_is_held_only_to_its_figures():
    u = Unit(source=2, position=1, kind="sentence", parts=((2, "El puente se abrió en 1931."),), context="")
    assert supports("When did the Varga Bridge open in 1931?", u, "en", ["Varga Bridge", "1931"], {2: "es"})
    assert not supports("When did the Varga Bridge open in 1932?", u, "en", ["Varga Bridge", "1932"], {2: "es"})


def test_the_generator_refuses_when_no_unit_supports_the_question():
    src = [PromptSource(number=1, id="c1", doc_id="d1", title="Harbour history", section="", date=None,
                        url=None, text="In 1974 Mendel shipped forty tonnes of grain to the ports. The harbour was dredged in 1980.")]
    gen = ExtractiveGenerator(None)
    assert gen.plan("How much grain did Ortega ship to the ports in 1974?", src, "en") == [NO_ANSWER]
    out = gen.plan("How much grain did Mendel ship to the ports in 1974?", src, "en")
    assert out != [NO_ANSWER] and "forty tonnes" in out[0]
    assert gen.plan("Which harbour was not dredged?", src, "en") == [NO_ANSWER]


def _src(number, cid, text, doc="d1"):
    return PromptSource(number=number, id=cid, doc_id=doc, title="Archive work", section="", date=None, url=None,
                        text=text)


def test_a_name_the_document_introduced_earlier_counts():
    # The unit goes on about the archive the document named in an earlier chunk; a number must be its own.
    intro = _src(2, "d1#0", "The Orvel Archive had scanned nine thousand pages of letters.")
    later = _src(1, "d1#2", "Correcting every page of the collection took about 30 hours on one laptop.")
    gen = ExtractiveGenerator(None)
    out = gen.plan("How long did correcting the Orvel Archive collection take?", [later, intro], "en")
    assert any("30 hours" in s for s in out)
    # the same chunk from another document: the name is not introduced there
    other = _src(2, "d2#0", "The Orvel Archive had scanned nine thousand pages of letters.", doc="d2")
    assert gen.plan("How long did correcting the Orvel Archive collection take?", [later, other], "en") == [NO_ANSWER] \
        or all("30 hours" not in s for s in gen.plan("How long did correcting the Orvel Archive collection take?",
                                                      [later, other], "en"))


def test_a_joined_follow_up_is_supported_by_its_own_sentence():
    u = Unit(source=1, position=1, kind="sentence", parts=((1, "A SEV2 is answered within 1 hour."),), context="")
    q = "How quickly must the on-call engineer respond to a SEV1? And for a SEV2?"
    assert supports(q, u, "en", ["SEV1", "SEV2"])
    assert not supports("How quickly must the on-call engineer respond to a SEV1?", u, "en", ["SEV1"])


def test_a_number_joined_to_a_unit_word_describes_and_need_not_be_repeated():
    u = Unit(source=1, position=1, kind="sentence", parts=((1, "On-call rotates weekly between two teams."),), context="")
    assert supports("Is on-call moving to 12-hour shifts?", u, "en", ["12-hour"])
    assert not supports("Is on-call moving to shift 12?", u, "en", ["12"])


def test_a_unit_holding_too_little_of_the_question_is_not_quoted(monkeypatch):
    import vouched.answer.extractive as ex

    src = [_src(1, "d1#0", "The harbour office opens at dawn every weekday. Grain barges unload at the north pier.")]
    q = "Which pier do the grain barges unload at?"
    monkeypatch.setattr(ex, "MIN_KEYWORD", 0.5)
    assert "north pier" in ExtractiveGenerator(None).plan(q, src, "en")[0]
    assert ExtractiveGenerator(None).plan("What do the ferry crews do at the harbour office on weekday mornings?", src, "en") == [NO_ANSWER]
    monkeypatch.setattr(ex, "MIN_KEYWORD", 0.0)
    assert ExtractiveGenerator(None).plan("What do the ferry crews do at the harbour office on weekday mornings?", src, "en") != [NO_ANSWER]


def test_a_place_and_its_people_are_one_name():
    from vouched.answer.extractive_score import same_place

    # "the Yuan brought to China" is answered by "… enrich Chinese performing arts"
    assert sup("What did the Yuan bring to China?", "Western instruments enriched Chinese performing arts.", ["China"]).passed
    assert anchor_found("Georgia", "Georgian wine", "en") and anchor_found("Mongolia", "the Mongol court", "en")
    assert anchor_found("Italia", "la cucina italiana", "it") and anchor_found("Japan", "Japanese maps", "en")
    # but not another place that shares a beginning, nor a common word
    for a, b in [("austria", "australia"), ("iraq", "iran"), ("chur", "church"), ("tessera", "tesseract")]:
        assert not same_place(a, b) and not same_place(b, a)
    assert not sup("Who ruled Austria in 1900?", "Australia was ruled from London in 1900.", ["Austria", "1900"]).passed
    assert not anchor_found("china", "Chinese", "en")  # a lower-case word is no name: no demonym


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12),
       st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12))
@settings(max_examples=200, deadline=None)
def test_same_place_is_symmetric_and_reflexive(a, b):
    from vouched.answer.extractive_score import same_place

    assert same_place(a, a)
    assert same_place(a, b) == same_place(b, a)
