"""Anchors of a question (vouched.text.anchors): examples per kind and language, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.text.anchors import Anchors, question_anchors

EXEMPT = ("Leila Navid", "Leila", "Navid", "لیلا نوید", "لیلا")


def kinds(q: str, lang: str, **kw) -> set[tuple[str, str]]:
    return {(a.kind, a.text) for a in question_anchors(q, lang, exempt_names=EXEMPT, **kw).items}


@pytest.mark.parametrize("q, lang, want", [
    ("Which OCR engine does the Royal Society use for Welsh ledgers?", "en",
     {("code", "OCR"), ("name", "Royal Society"), ("name", "Welsh")}),
    ("How do I roll back pg-core-2 after a SEV1 on v2.3?", "en",
     {("code", "pg-core-2"), ("code", "SEV1"), ("code", "v2.3")}),
    ("What is the GIL?", "en", {("code", "GIL")}),
    ("Did PostgreSQL 15 ship in 2022?", "en", {("code", "PostgreSQL"), ("number", "15"), ("number", "2022")}),
    ("What does max_connections default to in config.toml?", "en", {("code", "max_connections"), ("code", "config.toml")}),
    ("What did the report «Quiet Shelves» say?", "en", {("quoted", "Quiet Shelves")}),
    ("Who runs the Bank of Portugal archive?", "en", {("name", "Bank of Portugal")}),
    ("Tessera Health chose which database?", "en", {("name", "Tessera Health")}),
    ("¿Qué hizo en el Museo del Prado en 2019?", "es", {("name", "Museo del Prado"), ("number", "2019")}),
    ("Qu'a-t-elle présenté à la Bibliothèque nationale ?", "fr", {("name", "Bibliothèque")}),
    ("Что она делала в Яндексе?", "ru", {("name", "Яндексе")}),
    ("پروژه Tessera در سال ۲۰۲۳ چه بود؟", "fa", {("name", "Tessera"), ("number", "2023")}),
    ("她在 Mar Azul 做了什么？", "zh", {("name", "Mar Azul")}),
    ("उन्होंने Python में क्या बनाया?", "hi", {("name", "Python")}),
])
def test_required_anchors(q, lang, want):
    assert kinds(q, lang) == want


@pytest.mark.parametrize("q, lang", [
    ("What does Leila Navid do now?", "en"),  # the subject is exempt
    ("What are Leila's day rates?", "en"),
    ("Describe her open-source work.", "en"),  # a sentence-initial imperative is not a name
    ("Explain the failover runbook", "en"),
    ("Wie hoch ist der Stundensatz?", "de"),  # German nouns are capitalised: not names
    ("لیلا نوید در حال حاضر چه کار می‌کند؟", "fa"),
    ("WHAT DOES SHE DO NOW?", "en"),  # shouting is not a row of acronyms
    ("I need the runbook", "en"),  # "I" is not a name
])
def test_no_required_anchors(q, lang):
    assert not question_anchors(q, lang, exempt_names=EXEMPT).required


def test_script_free_flags():
    a = question_anchors("پروژه Tessera در سال ۲۰۲۳ با pg-core-2 چه بود؟", "fa")
    assert all(x.script_free for x in a.required)
    ru = question_anchors("Что она делала в Яндексе?", "ru")
    assert not ru.required[0].script_free


def test_rare_words_need_the_corpus_document_frequencies():
    q = "Which fencing step comes before the promotion?"
    df = {"fenc": 2, "step": 40, "promot": 3, "come": 60}
    got = question_anchors(q, "en", doc_freq=df, n_docs=100, rare_cut=0.05)
    assert {a.text for a in got.rare} == {"fenc", "promot"}  # in fewer than 5% of the chunks
    assert all(a.df is not None for a in got.rare)
    assert not question_anchors(q, "en").rare  # without frequencies no word is rare
    assert not question_anchors(q, "en", doc_freq=df, n_docs=100, rare_cut=0.0).rare
    # a word in no chunk is not an anchor (ordinary vocabulary on a small corpus)
    assert "befor" not in {a.text for a in got.rare}


def test_quantity_compound_is_a_soft_anchor():
    got = question_anchors("Is on-call moving to 12-hour shifts?", "en")
    assert [(a.kind, a.text) for a in got.items] == [("rare", "12-hour")] and not got.required


_WORDS = st.sampled_from(["search", "Tessera", "Health", "the", "of", "pg-core-2", "2023", "Leila", "«Deep Search»",
                          "SEV1", "what", "and", "Bank", "which", "v2.3", "Lisbon", "¿qué", "کتابخانه", "北京工作",
                          "Яндекс", "OCR", "café", "it's", "Navid's", "—", "?", "\"quoted words\""])


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, min_size=0, max_size=14), st.sampled_from(["en", "es", "fa", "zh", "ru", "de", "fr", "hi"]))
def test_properties(parts, lang):
    q = " ".join(parts)
    a = question_anchors(q, lang, exempt_names=EXEMPT)
    assert isinstance(a, Anchors) and a.lang == lang
    assert a == question_anchors(q, lang, exempt_names=EXEMPT)  # pure
    for x in a.items:
        assert x.words and x.terms
        assert not set(x.words) <= {"leila", "navid"}  # the subject is never an anchor
        if x.kind in ("code", "number"):
            assert x.script_free
    # anchors never invent text: each anchor's words are words of the question
    from vouched.text import words

    qwords = set(words(q.replace("’", "'")))
    for x in a.required:
        assert set(x.words) <= qwords | {w[:-2] for w in qwords if w.endswith("'s")}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120), st.sampled_from(["en", "fa", "zh", "ar", "hi", "ru", "de", "es", "pt", "fr"]))
def test_never_raises_on_any_text(text, lang):
    question_anchors(text, lang, exempt_names=EXEMPT, doc_freq={}, n_docs=10)
