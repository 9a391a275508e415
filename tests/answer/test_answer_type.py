import pytest
from hypothesis import given, settings, strategies as st

from vouched.answer.answer_type import (
    is_list_question, names_someone, plain_form, question_anchors, question_type, satisfies)


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
    ("Who won the 2018 World Cup?", "person"),  # "who" asks for someone (was untyped)
    ("¿Quién dirige el equipo de bases de datos?", "person"),
    ("Кто отвечает за дежурство?", "person"),
    ("Which port does the admin console listen on?", "quantity"),
    ("¿Qué versión de PostgreSQL usa el clúster?", "quantity"),
    ("What is the default protocol?", None),
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


@settings(deadline=None)  # the shared CI machine is slow; the property, not the speed, is tested
@given(st.text(max_size=80))
def test_a_sentence_without_digits_never_satisfies_a_typed_question(s):
    from vouched.text import normalize

    if not any(ch.isdigit() for ch in normalize(s)):
        for kind in ("duration", "date", "quantity"):
            assert not satisfies(s, kind)


@pytest.mark.parametrize("sentence, ok", [
    ("The rotation is run by Dana Okafor.", True),
    ("Dana Okafor runs the rotation.", True),  # two capitalised words open it
    ("The rotation is run by the platform team.", False),
    ("Mostly remotely, with workshops in person.", False),
    ("دانا اوکافور این چرخه را اداره می‌کند.", True),  # no case: cannot tell, so it can
    ("该轮值由平台团队负责。", True),
])
def test_person_type_needs_a_name(sentence, ok):
    assert names_someone(sentence) is ok
    assert satisfies(sentence, "person") is ok


@pytest.mark.parametrize("question, is_list", [
    ("What kinds of work does the studio accept?", True),
    ("Which plugins does the editor ship with?", True),
    ("Which tracking statuses are there?", True),
    ("What are the steps of a restore?", True),
    ("¿Qué tipos de encargos acepta?", True),
    ("¿Cuáles son los pasos de una restauración?", True),
    ("Quels sont les formats acceptés ?", True),
    ("Какие форматы поддерживаются?", True),
    ("支持哪些格式?", True),
    ("Which database does the search run on?", False),
    ("Which process does the team follow?", False),
    ("What is the default port?", False),
    ("How long does a restore take?", False),
])
def test_list_questions(question, is_list):
    assert is_list_question(question) is is_list


@pytest.mark.parametrize("question, exclude, anchors", [
    ("How much did the Orbis Clinic search cut empty results?", (), ["Orbis Clinic"]),
    ("Does pg-main-3 page at SEV2 in v4.1?", (), ["pg-main-3", "SEV2", "v4.1"]),
    ('What does the status "Awaiting pickup" mean?', (), ["Awaiting pickup"]),
    ("¿Cuándo dio Ana Ruiz la charla «Saber callar»?", (), ["Saber callar", "Ana Ruiz"]),
    ("Who won the 1998 final?", (), ["1998"]),
    ("What does Harbor Freight Co. charge per crate?", ("Harbor Freight Co.", "Harbor"), []),
    ("What is the GIL?", (), ["GIL"]),
    ("چرا کتابخانه‌ی OCR کند است؟", (), ["OCR"]),
    ("What does she do now?", (), []),
])
def test_question_anchors(question, exclude, anchors):
    assert question_anchors(question, "en", exclude) == anchors


@settings(deadline=None)
@given(st.text(max_size=60))
def test_anchors_are_substrings_of_the_question_and_never_excluded_names(q):
    got = question_anchors(q, "en", ("Zed Quill",))
    from vouched.text import words
    for a in got:
        assert a in q
        assert not set(words(a)) <= {"zed", "quill"}


def test_plain_form_of_a_duration():
    assert plain_form("Restore within 30 minutes of the alert.", "duration")
    assert plain_form("La restauración debe hacerse en un plazo de 30 minutos.", "duration")
    assert not plain_form("After 30 minutes the alert escalates.", "duration")
    assert not plain_form("Restore within 30 minutes of the alert.", "quantity")


def test_a_number_inside_an_address_is_no_figure():
    from vouched.answer.answer_type import satisfies

    assert not satisfies("Slides: https://example.org/talks/2025-euroir-slides.pdf.", "date")
    assert not satisfies("Write to ops2024@example.org for the rota.", "quantity")
    assert satisfies("EuroIR Industry Day, Porto · 15 May 2025 (slides at https://example.org/s.pdf)", "date")
