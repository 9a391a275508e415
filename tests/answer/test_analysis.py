"""Query analysis and question parts: pure functions, every language."""

import pytest
from hypothesis import given, strategies as st

from vouched.answer.analysis import InputError, check_input, clarification, smalltalk, unsupported_language
from vouched.answer.parts import split_question


@pytest.mark.parametrize("text,kind", [
    ("hi", "greeting"), ("Hello!", "greeting"), ("good morning :)", "greeting"), ("hi Leila", "greeting"),
    ("thanks a lot!", "thanks"), ("Thank you, Leila.", "thanks"), ("hello, thank you!", "thanks"),
    ("¡Hola!", "greeting"), ("muchas gracias", "thanks"), ("obrigada!", "thanks"), ("Bonjour", "greeting"),
    ("merci beaucoup", "thanks"), ("Vielen Dank!", "thanks"), ("سلام", "greeting"), ("ممنون!", "thanks"),
    ("خیلی ممنون", "thanks"), ("مرحبا", "greeting"), ("شكرا جزيلا", "thanks"), ("Привет!", "greeting"),
    ("спасибо", "thanks"), ("你好", "greeting"), ("谢谢！", "thanks"), ("नमस्ते", "greeting"), ("धन्यवाद", "thanks"),
])
def test_smalltalk_recognised_in_every_language(text, kind):
    assert smalltalk(text, ("Leila Navid", "Leila")) == kind


@pytest.mark.parametrize("text", [
    "hi, what does she do?", "thanks, and what are her rates?", "Hola, ¿dónde estudió?",
    "سلام، لیلا کجا درس خوانده؟", "hello world program", "thanksgiving", "谢谢你的回答，她在哪里工作？",
])
def test_a_question_after_a_greeting_is_a_question(text):
    assert smalltalk(text) is None


def test_input_errors_are_clear():
    with pytest.raises(InputError, match="empty"):
        check_input("   \n", max_bytes=100)
    with pytest.raises(InputError, match="limit is 10"):
        check_input("x" * 11, max_bytes=10)
    with pytest.raises(InputError, match="limit is 10"):
        check_input("س" * 6, max_bytes=10)  # 12 UTF-8 bytes: the limit is in bytes
    assert check_input("  ok?  ", max_bytes=10) == "ok?"


@given(st.text(max_size=300))
def test_check_input_never_passes_empty_or_oversized(text):
    try:
        out = check_input(text, max_bytes=120)
    except InputError:
        assert not text.strip() or len(text.strip().encode()) > 120
    else:
        assert out.strip() and len(out.encode()) <= 120


@pytest.mark.parametrize("text,served,found", [
    ("안녕하세요 가격은 어떻게 되나요?", ("en", "es", "fa"), "hangul"),
    ("料金はいくらですか？", ("en",), "kana"),
    ("Что она делает сейчас в своей работе?", ("en", "es", "fa"), "ru"),
    ("她现在做什么工作？", ("en", "fa"), "zh"),
    ("ما هو عملها الحالي في الشركة؟", ("en", "es", "fa"), "ar"),
    ("Qual é o trabalho atual dela na empresa?", ("en", "es", "fa"), "pt"),
    ("Τι δουλειά κάνει τώρα;", ("en",), "greek"),
])
def test_unserved_languages_are_recognised(text, served, found):
    assert unsupported_language(text, served) == found


@pytest.mark.parametrize("text,served", [
    ("¿Cuál es su trabajo actual en la empresa?", ("en", "es", "fa")),
    ("What does she do now at work?", ("en", "es", "fa")),
    ("کار فعلی او در شرکت چیست؟", ("en", "es", "fa")),
    ("Что она делает?", ("en", "ru")),
    ("Kubernetes?", ("en",)),  # too short to judge: benefit of the doubt
    ("2024", ("en",)),
    ("Was Postgres used?", ("en", "es")),
])
def test_served_or_undecidable_questions_pass(text, served):
    assert unsupported_language(text, served) is None


@pytest.mark.parametrize("text,why", [
    ("and the other one?", "followup_without_context"),
    ("the other one?", "followup_without_context"),
    ("¿y el segundo?", "followup_without_context"),
    ("و دومی؟", "followup_without_context"),
    ("what about pricing?", "followup_without_context"),
    ("pricing", "too_vague"),
    ("Kubernetes?", "too_vague"),
    ("precios", "too_vague"),
    ("what?", "no_content"),
    ("why?", "no_content"),
])
def test_clarification_without_a_previous_turn(text, why):
    assert clarification(text, has_previous=False) == why


@pytest.mark.parametrize("text", [
    "Which database did the Tessera Health search run on?",
    "How many severity levels are there?",
    "Why did she leave Acme?",
    "Where is the refund policy?",
    "لیلا ساکن کدام شهر است؟",
    "什么是事故等级？",
])
def test_real_questions_need_no_clarification(text):
    assert clarification(text, has_previous=False) is None


def test_a_previous_turn_resolves_followups_and_single_words():
    assert clarification("and the other one?", has_previous=True) is None
    assert clarification("pricing", has_previous=True) is None
    assert clarification("pricing", has_previous=False, min_content_words=1) is None


@pytest.mark.parametrize("question,parts", [
    ("What did she build at Acme and what did it cost?", ["What did she build at Acme", "what did it cost?"]),
    ("What did she build? Where does she live?", ["What did she build?", "Where does she live?"]),
    ("¿Qué construyó en Acme y cuánto costó?", ["¿Qué construyó en Acme", "cuánto costó?"]),
    ("لیلا در کجا درس خواند و چقدر هزینه دارد؟", ["لیلا در کجا درس خواند", "چقدر هزینه دارد؟"]),
    ("Was hat sie gebaut und wie viel hat es gekostet?", ["Was hat sie gebaut", "wie viel hat es gekostet?"]),
    ("Qual é o projeto dela e quanto custa?", ["Qual é o projeto dela", "quanto custa?"]),
    ("她在哪里工作，多少钱？", ["她在哪里工作", "多少钱？"]),
    ("Research and teaching?", ["Research and teaching?"]),
    ("What is the refund policy for damaged and lost parcels?", ["What is the refund policy for damaged and lost parcels?"]),
])
def test_split_question(question, parts):
    assert split_question(question) == parts


@given(st.text(max_size=200))
def test_parts_are_substrings_and_lose_no_question(text):
    parts = split_question(text)
    assert parts
    if len(parts) == 1:
        assert parts[0] == text.strip()
    else:
        pos = 0
        for p in parts:
            at = text.find(p, pos)
            assert at >= 0  # in order, verbatim
            pos = at + len(p)


@pytest.mark.parametrize("question", [
    "¿Cuándo y dónde dio la charla «Refusing well»?",
    "When and where did she give the talk?",
])
def test_a_bare_question_word_is_not_a_part(question):
    assert split_question(question) == [question]


@pytest.mark.parametrize("question", [  # SQuAD 2.0 dev questions the detector alone read as de/fr
    "What article of the Grundgesetz grants the right to make private schools?",
    "Who is a descendant of General Hermann von Francois?",
    "In what year did Rene Goulaine de Laudonniere leave his position as a lieutenant for Jean Ribault?",
    "Halford Mackinder and Friedrich Ratzel where what kind of philosophers?",
    "Who runs the Sonderungsverbot?",
])
def test_foreign_names_do_not_make_an_english_question_foreign(question):
    assert unsupported_language(question, ("en",)) is None
