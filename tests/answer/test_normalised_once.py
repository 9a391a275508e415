"""The question is normalised once (answer.front.build_question); every later check on the
whole question reads the `Question`'s forms, and gets exactly what it got from the raw text."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vouched.answer.analysis import clarification, smalltalk, unsupported_language
from vouched.answer.build import build
from vouched.answer.followup import followup_reason
from vouched.answer.front import Previous, Rules, build_question, route
from vouched.answer.parts import split_question
from vouched.guard.packs import comparable, matching_text, subject_texts
from vouched.guard.route import is_followup, is_ordinal, resolve_ordinal
from vouched.text import content_words, normalize, words
from vouched.text.anchors import question_anchors
from vouched.text.normalize import normalize as _normalize_fn

# My own wording: each served language, follow-ups, a multi-part question, mixed scripts.
CASES = [
    ("Which index did the clinic's search use?", None),
    ("¿Cuánto cobra por una semana de trabajo?", None),
    ("Quais bibliotecas ela mantém hoje?", None),
    ("Quelles conférences a-t-elle données en 2023 ?", None),
    ("Welche Datenbank lief unter der Suche?", None),
    ("ما هي المشاريع التي عملت عليها مؤخرا؟", None),
    ("او الان روی چه پروژه‌ای کار می‌کند؟", None),
    ("Чем она занимается сейчас?", None),
    ("她最近在做什么项目？", None),
    ("वह अभी क्या काम करती है?", None),
    ("ＷＨＡＴ does Leila do ﬁrst?", None),
    ("hi Leila!", None),
    ("And the second one?", Previous("Which projects did she lead?", "1. Pakneviss\n2. Tessera search")),
    ("what about in Spanish?", Previous("Which talks did she give?", "Two talks.")),
    ("Where did she study, and which languages does she write code in?", None),
    ("我想hire她做一个项目", None),
]

NAMES = ("Leila Navid", "Leila", "Navid", "لیلا نوید", "لیلا")


@pytest.fixture(scope="module")
def rules(site_config):
    return Rules.from_config(site_config, build(site_config).packs)


def _in_langid(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.endswith("langid.py"):
            return True
        frame = frame.f_back
    return False


def _normalize_calls(fn, forms: set[str]) -> int:
    """How many times `vouched.text.normalize` is called on one of ``forms`` while ``fn`` runs.

    Language identification (vouched/text/langid.py) is not counted: it reads the text as
    written (Arabic ي/ك tell Arabic from Persian; normalize folds them) and counts stop words
    in its own sample."""
    code = _normalize_fn.__code__
    count = 0

    def prof(frame, event, arg):
        nonlocal count
        if (event == "call" and frame.f_code is code and frame.f_locals.get("text") in forms
                and not _in_langid(frame)):
            count += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("text,previous", CASES)
def test_the_front_normalises_the_question_once(rules, text, previous):
    q = build_question(text, rules, previous)
    forms = {text, q.text, q.normalized, q.match_text}
    assert _normalize_calls(lambda: route(build_question(text, rules, previous), rules), forms) == 1
    assert q.normalized == normalize(text) and q.match_text == matching_text(text)
    assert q.matching == subject_texts(text, rules.subject_names)


_PIECES = st.sampled_from([
    "Leila", "LEILA", "Navid's", "and", "the", "second", "one", "what", "about", "her", "she", "rates",
    "¿y", "el", "segundo?", "Qué", "cobra", "et", "après", "Straße", "ﬁle", "ＡＢＣ", "دومی", "او", "لیلا",
    "می\u200cخواهم", "كتاب", "ي", "ة", "什么", "她", "第二个", "还有", "что", "она", "дальше", "क्या", "वह",
    "۳٫۵٪", "2024", "?", "!", "،", "？", "  ", "\u200f", "é", "e\u0301", "ä",
    "best", "restaurant", "which", "ＢＥＳＴ", "mejor", "بهترین", "أفضل", "最好的", "餐厅", "哪家", "лучший", "۱۲",
])
_TEXT = st.one_of(st.lists(_PIECES, min_size=1, max_size=10).map(" ".join),
                  st.lists(_PIECES, min_size=1, max_size=6).map("".join),
                  st.text(max_size=40))
_LANGS = st.sampled_from(["en", "es", "pt", "fr", "de", "ar", "fa", "ru", "zh", "hi", None])
_CHECK = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_CHECK
@given(_TEXT, _LANGS)
def test_the_given_forms_give_what_the_raw_text_gives(text, lang):
    norm, match = normalize(text), matching_text(text)
    assert comparable(norm, normalized=True) == comparable(text)
    assert matching_text(norm, normalized=True) == match
    assert subject_texts(text, NAMES, matching=match) == subject_texts(text, NAMES)
    assert words(norm, normalized=True) == words(text)
    assert content_words(norm, lang, normalized=True) == content_words(text, lang)
    assert smalltalk(text, NAMES, normalized=norm) == smalltalk(text, NAMES)
    for served in (["en"], ["en", "es", "fa"], ["ru", "zh"]):
        assert unsupported_language(text, served, normalized=norm) == unsupported_language(text, served)
    for has_previous in (False, True):
        assert (clarification(text, has_previous=has_previous, lang=lang, matching=match)
                == clarification(text, has_previous=has_previous, lang=lang))
    assert is_ordinal(text, matching=match) == is_ordinal(text)
    assert is_followup(text, matching=match) == is_followup(text)
    answer = "1. Pakneviss\n2. Tessera search\n3. «Notes»"
    assert resolve_ordinal(text, answer, matching=match) == resolve_ordinal(text, answer)
    anchors = question_anchors(text, lang or "en", exempt_names=NAMES)
    assert question_anchors(text, lang or "en", exempt_names=NAMES, normalized=norm) == anchors
    assert followup_reason(text, anchors, matching=match, normalized=norm) == followup_reason(text, anchors)


def _split_reference(question: str) -> list[str]:
    """answer.parts.split_question as it was before its one-piece shortcut (the oracle)."""
    from vouched.answer import parts as P

    spans: list[tuple[int, int]] = []
    for a, b in P._cuts(question, P._QMARK, keep=True):
        for c, d in P._cuts(question, P._JOIN_RE, a, b):
            spans.extend(P._cuts(question, P._ZH_JOIN, c, d))
    merged: list[tuple[int, int]] = []
    carry = None
    for a, b in spans:
        start = a if carry is None else carry
        if not content_words(question[a:b]):
            carry = start
            continue
        merged.append((start, b))
        carry = None
    if carry is not None and merged:
        merged[-1] = (merged[-1][0], len(question))
    out = [question[a:b].strip(P._TRIM) for a, b in merged]
    out = [p for p in out if re.search(r"[^\W_]", p)]
    return out if len(out) > 1 else [question.strip()]


@_CHECK
@given(st.one_of(_TEXT, st.lists(st.sampled_from(["When", "and", "where", "was", "the talk", "?", "¿", "，", "还有",
                                                   "什么", "y", "cuánto", "cobra", "؟", " ", "what", "rates"]),
                                 max_size=12).map(" ".join)))
def test_split_question_is_unchanged_by_its_shortcut(text):
    assert split_question(text) == _split_reference(text)
