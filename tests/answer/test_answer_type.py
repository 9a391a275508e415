import pytest
from hypothesis import given, strategies as st

from vouched.answer.answer_type import question_type, satisfies


@pytest.mark.parametrize("question, kind", [
    ("How quickly must the on-call engineer respond to a SEV1 incident?", "duration"),
    ("How long do I have to claim for a lost parcel?", "duration"),
    ("¿Cuánto tiempo tengo para reclamar?", "duration"),
    ("چه مدت طول می‌کشد؟", "duration"),
    ("When did she speak at the Search Practitioners Summit?", "date"),
    ("¿Cuándo y dónde dio la charla?", "date"),
    ("در چه تاریخی منتشر شد؟", "date"),
    ("How much did the search reduce zero-result searches?", "quantity"),
    ("¿Cuánto mejoró el nDCG@10?", "quantity"),
    ("پاک‌نویس نرخ خطای نویسه را چقدر کاهش داد؟", "quantity"),
    ("Сколько страниц обработали?", "quantity"),
    ("有多少页?", "quantity"),
    ("Which database did the search run on?", None),
    ("What does she do?", None),
    ("Who won the 2018 World Cup?", None),
])
def test_question_type(question, kind):
    assert question_type(question) == kind


@pytest.mark.parametrize("sentence, kind, ok", [
    ("A SEV1 must be acknowledged within 15 minutes.", "duration", True),
    ("Claims are accepted within 30 days.", "duration", True),
    ("Las reclamaciones se aceptan en un plazo de 30 días.", "duration", True),
    ("SEV1 is the most severe incident level.", "duration", False),
    ("SEV1 is the most severe incident level.", "quantity", False),  # the 1 of SEV1 is not a figure
    ("nDCG@10 rose from 0.52 to 0.68.", "quantity", True),
    ("She finished her PhD in 2019.", "date", True),
    ("She finished her PhD in Porto.", "date", False),
    ("از ۱۱.۴ درصد به ۴.۲ درصد رسید.", "quantity", True),  # Persian digits count
    ("Anything at all.", None, True),
])
def test_satisfies(sentence, kind, ok):
    assert satisfies(sentence, kind) is ok


@given(st.text(max_size=80))
def test_a_sentence_without_digits_never_satisfies_a_typed_question(s):
    from vouched.text import normalize

    if not any(ch.isdigit() for ch in normalize(s)):
        for kind in ("duration", "date", "quantity"):
            assert not satisfies(s, kind)
