"""The subject's name in other grammatical forms (packs._text: Russian case endings,
Arabic/Persian proclitics) reads as the placeholder, and nothing longer does."""

from __future__ import annotations

import pytest

from vouched.guard.packs import PLACEHOLDER, subject_texts

NAMES = ("Мара Квинт", "Мара", "Квинт", "مارا", "Leila")


@pytest.mark.parametrize(
    "question",
    [
        "Сколько лет Маре?",
        "Работа с Марой дорогая?",
        "У Мары есть дети?",
        "Позвонить Квинту?",
        "كيف نستعين بمارا؟",
        "ومارا هل تعمل؟",
    ],
)
def test_inflected_or_prefixed_name_is_the_subject(question):
    assert PLACEHOLDER in subject_texts(question, NAMES)[0]


@pytest.mark.parametrize(
    "question",
    [
        "Что делает Марат?",
        "Марина здесь?",
        "Квинтет играл?",
        "مارال کجاست؟",
        "Leilani?",
    ],
)
def test_a_longer_word_is_not_the_subject(question):
    assert PLACEHOLDER not in subject_texts(question, NAMES)[0]
