"""Fixed texts: every key in every language, fallbacks, overrides, and the voice rules."""

from __future__ import annotations

import re

import pytest

from vouched.guard.packs import load_packs
from vouched.guard.texts import TEXT_KEYS, fixed_text, texts_for
from vouched.guard.refusal import match_refusal
from vouched.text import LANGS

SCRIPTS = {
    "fa": r"[\u0600-\u06ff]",
    "ar": r"[\u0600-\u06ff]",
    "ru": r"[\u0400-\u04ff]",
    "hi": r"[\u0900-\u097f]",
    "zh": r"[\u4e00-\u9fff]",
}

# First-person words the L5 voice check looks for; fixed texts speak about the site.
FIRST_PERSON = {
    "en": r"\b(?:i|me|my|mine|we|us|our)\b",
    "es": r"\b(?:yo|me|mi|mis|nosotros|nuestro|nuestra)\b",
    "pt": r"\b(?:eu|me|meu|minha|nós|nosso|nossa)\b",
    "fr": r"\b(?:je|j'|moi|mon|ma|mes|nous|notre)\b",
    "de": r"\b(?:ich|mich|mir|mein|meine|wir|uns|unser)\b",
    "ru": r"(?<!\w)(?:я|меня|мне|мой|моя|мы|нас|наш)(?!\w)",
    "fa": r"(?<!\S)(?:من|ما|م(?:ی|ي)\s?خواهم|هستم)(?!\S)",
    "ar": r"(?<!\S)(?:أنا|نحن|لدي|لدينا)(?!\S)",
    "hi": r"(?<!\S)(?:मैं|मुझे|मेरा|मेरी|हम|हमारा)(?!\S)",
    "zh": r"我",
}


@pytest.mark.parametrize("lang", LANGS)
def test_every_key_in_every_language(lang):
    texts = texts_for(lang)
    assert set(texts) == set(TEXT_KEYS), (lang, set(TEXT_KEYS) ^ set(texts))
    for key in TEXT_KEYS:
        assert fixed_text(key, lang) == texts[key] and texts[key].strip()


@pytest.mark.parametrize("lang", sorted(SCRIPTS))
def test_texts_are_in_the_language_script(lang):
    for key, text in texts_for(lang).items():
        assert re.search(SCRIPTS[lang], text), (lang, key)
    if lang == "fa":
        assert not re.search("[يك]", "".join(texts_for(lang).values())), "Persian texts use ی and ک"
    if lang == "zh":
        assert not re.search("[們說這個網頁資與]", "".join(texts_for(lang).values())), "simplified Chinese"


@pytest.mark.parametrize("lang", LANGS)
def test_no_first_person(lang):
    for key, text in texts_for(lang).items():
        assert not re.search(FIRST_PERSON[lang], text.lower()), (lang, key, text)


@pytest.mark.parametrize("lang", LANGS)
def test_commercial_refusals_point_to_the_contact_form(lang):
    form = {"en": "contact form", "es": "formulario", "pt": "formulário", "fr": "formulaire", "de": "kontaktformular",
            "ru": "форм", "fa": "فرم تماس", "ar": "نموذج التواصل", "zh": "联系表单", "hi": "संपर्क फ़ॉर्म"}[lang]
    for key in ("refusal.fees", "refusal.availability", "refusal.hiring", "notice.limit"):
        assert form in fixed_text(key, lang).lower(), (lang, key)


def test_every_l1_category_has_a_text():
    for category in load_packs().categories():
        for lang in LANGS:
            assert fixed_text(f"refusal.{category}", lang) != fixed_text("refusal.default", lang), (category, lang)


def test_refusal_for_a_match_end_to_end():
    m = match_refusal("¿Cuánto cobra?", load_packs())
    assert fixed_text(f"refusal.{m.category}", "es").startswith("Las tarifas")


def test_fallbacks():
    assert fixed_text("refusal.legal", "fa") == fixed_text("refusal.default", "fa")  # category-less default
    assert fixed_text("notice.held", "it") == fixed_text("notice.held", "en")  # unknown language
    assert fixed_text("notice.held", "it", default_lang="de") == fixed_text("notice.held", "de")
    assert fixed_text("refusal.fees", "fa-IR") == fixed_text("refusal.fees", "fa")
    with pytest.raises(KeyError, match="reply.nope"):
        fixed_text("reply.nope", "en")


def test_overrides():
    overrides = {"en": {"refusal.fees": "See the pricing page.", "refusal.default": "Not here."}, "fa": {"reply.thanks": "ممنون"}}
    assert fixed_text("refusal.fees", "en", overrides) == "See the pricing page."
    assert fixed_text("refusal.legal", "en", overrides) == "Not here."
    assert fixed_text("reply.thanks", "fa", overrides) == "ممنون"
    assert fixed_text("refusal.fees", "fa", overrides) == fixed_text("refusal.fees", "fa")
    assert fixed_text("refusal.fees", "it", overrides) == "See the pricing page."  # default_lang override
