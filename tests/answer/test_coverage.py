"""L2 coverage (vouched.answer.coverage): a question's anchors against the passages that would be given."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.answer.coverage import MIN_RARE, check_coverage, passage_keys
from vouched.text.anchors import question_anchors

EXEMPT = ("Leila Navid", "Leila")
P_EN = passage_keys("Multilingual search for Tessera Health — Leila led the project. It ran on PostgreSQL 15 "
                    "with pgvector; zero-result searches fell from 18% to 6%. Failover promotes pg-core-2.", "en")
P_ES = passage_keys("Búsqueda multilingüe para Tessera Health: el índice usa PostgreSQL y las búsquedas sin "
                    "resultados bajaron al 6 %. Envíos a Canarias.", "es")
P_EN2 = passage_keys("Standard delivery to the Canary Islands takes 5–7 working days.", "en")


def cov(q, lang, passages, **kw):
    return check_coverage(question_anchors(q, lang, exempt_names=EXEMPT, **kw), passages)


def test_names_codes_numbers_found_whole_word():
    v = cov("Which PostgreSQL version did Tessera Health use, 15?", "en", [P_EN])
    assert v.passed and set(v.found) == {"code:PostgreSQL", "name:Tessera Health", "number:15"} and not v.missing
    assert cov("Did the failover promote pg-core-2?", "en", [P_EN]).passed


def test_an_other_entity_is_refused_and_named():
    v = cov("Which database did the Mayo Clinic search run on?", "en", [P_EN])
    assert not v.passed and v.missing == ("name:Mayo Clinic",) and "Mayo Clinic" in v.reason
    assert not cov("What did the search cost in 2019?", "en", [P_EN]).passed  # a number in no passage
    assert not cov("Did the failover promote pg-core-3?", "en", [P_EN]).passed  # a code's parts in order
    assert not cov("Does the index use «Deep Lake»?", "en", [P_EN]).passed


def test_stemmed_names_do_not_match_common_words_in_the_same_language():
    p = passage_keys("Llame por teléfono al servicio de atención.", "es")
    assert not cov("¿Cuánto redujo Telefónica las búsquedas sin resultados?", "es", [p]).passed


def test_across_languages_only_what_can_match_counts():
    # a Spanish name against an English page: stems bridge "Canarias" / "Canary"
    assert cov("¿Cuánto tarda un envío a Canarias?", "es", [P_EN2]).passed
    # a Persian question: its Latin name and its number count against an English page
    assert cov("پروژه Tessera Health چه نتیجه‌ای داشت؟", "fa", [P_EN]).passed
    assert not cov("پروژه Mayo Clinic چه نتیجه‌ای داشت؟", "fa", [P_EN]).passed
    # rare words are judged only against passages in the question's language
    df = {"bajaron": 1, "indic": 1}
    assert cov("¿Qué índice bajaron?", "es", [P_EN], doc_freq=df, n_docs=50).rare_total == 0


def test_rare_words_share():
    df = {"fenc": 1, "replay": 1, "lag": 1}
    p = passage_keys("Check the replay lag on the replica before you promote it.", "en")
    q = "Should I check fencing, replay and lag?"
    v = cov(q, "en", [p], doc_freq=df, n_docs=100)
    assert (v.rare_found, v.rare_total) == (2, 3) and v.passed  # 2 of 3 ≥ 50%
    v = cov("Is fencing done before lag?", "en", [passage_keys("Nothing relevant here.", "en")], doc_freq=df, n_docs=100)
    assert (v.rare_found, v.rare_total) == (0, 2) and not v.passed and "rare words" in v.reason
    one = cov("Is fencing needed?", "en", [passage_keys("Nothing relevant here.", "en")], doc_freq=df, n_docs=100)
    assert one.rare_total == 1 < MIN_RARE and one.passed  # a single rare word is not judged


def test_no_anchors_passes_and_trace_shape():
    v = cov("What does she do now?", "en", [P_EN])
    assert v.passed and v.trace() == {"anchors": [], "found": [], "missing": [], "rare": [0, 0]}


_NAMES = st.sampled_from(["Tessera Health", "Mayo Clinic", "PostgreSQL", "pg-core-2", "pg-core-9", "2019", "18", "Lisbon"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_NAMES, min_size=1, max_size=4))
def test_monotone_in_passages(names):
    """Adding a passage never turns covered into uncovered; a question is covered by a passage quoting it."""
    q = "What about " + " and ".join(names) + "?"
    a = question_anchors(q, "en")
    one = check_coverage(a, [P_EN])
    two = check_coverage(a, [P_EN, P_ES])
    assert not one.passed or two.passed
    assert check_coverage(a, [passage_keys(q, "en")]).passed
    assert set(one.found) | set(one.missing) <= set(one.anchors)


# -- evaluative questions: "the best X" needs sources that mention X -----------------------------
P_TRAVEL_EN = passage_keys("Leila lived in Lisboa for two years and gave a talk on Persian OCR at a Lisboa "
                           "meetup; the slides are on her site.", "en")
P_FOOD_EN = passage_keys("The guide lists three restaurants in Lisboa, each with a vegetarian menu.", "en")
P_TRAVEL_ES = passage_keys("Leila vivió dos años en Lisboa y dio una charla sobre OCR persa.", "es")
P_TRAVEL_FA = passage_keys("لیلا دو سال در لیسبون زندگی کرد و درباره OCR فارسی سخنرانی کرد.", "fa")
P_TRAVEL_ZH = passage_keys("莱拉在里斯本生活了两年，并做过关于波斯语光学字符识别的演讲。", "zh")

EVALUATIVE_UNCOVERED = [  # (question, lang, passage): the head is named nowhere, the place is
    ("What is the best restaurant in Lisboa?", "en", P_TRAVEL_EN),
    ("Which hotel in Lisboa is the nicest?", "en", P_TRAVEL_EN),
    ("What's the top beach near Lisboa?", "en", P_TRAVEL_EN),
    ("¿Cuál es el mejor restaurante de Lisboa?", "es", P_TRAVEL_ES),
    ("¿Qué hotel es el más recomendado en Lisboa?", "es", P_TRAVEL_ES),
    ("Qual é a melhor praia de Lisboa?", "pt", passage_keys("Leila morou dois anos em Lisboa e deu uma palestra sobre OCR.", "pt")),
    ("Quel est le meilleur hôtel de Lisbonne ?", "fr", passage_keys("Leila a vécu deux ans à Lisbonne et a parlé d'OCR persan.", "fr")),
    ("Welches ist das beste Restaurant in Lissabon?", "de", passage_keys("Leila lebte zwei Jahre in Lissabon und sprach über OCR.", "de")),
    ("Какой лучший ресторан в Лиссабоне?", "ru", passage_keys("Лейла два года жила в Лиссабоне и рассказывала об OCR.", "ru")),
    ("بهترین رستوران لیسبون کدام است؟", "fa", P_TRAVEL_FA),
    ("ما هو أفضل مطعم في لشبونة؟", "ar", passage_keys("عاشت ليلى في لشبونة عامين وتحدثت عن التعرف الضوئي على الحروف.", "ar")),
    ("里斯本最好的餐厅是哪家？", "zh", P_TRAVEL_ZH),
    ("लिस्बन में सबसे अच्छा रेस्टोरेंट कौन सा है?", "hi", passage_keys("लीला दो साल लिस्बन में रहीं और OCR पर भाषण दिया।", "hi")),
]


def test_an_evaluative_question_about_what_the_sources_never_mention_is_uncovered():
    for q, lang, p in EVALUATIVE_UNCOVERED:
        v = check_coverage(question_anchors(q, lang, exempt_names=EXEMPT), [p])
        assert not v.passed, q
        assert any(m.startswith("head:") for m in v.missing), (q, v.missing)
        assert "never mention" in v.reason or "none of the passages" in v.reason, v.reason


def test_an_evaluative_question_whose_head_the_sources_mention_is_covered():
    assert cov("What is the best restaurant in Lisboa?", "en", [P_TRAVEL_EN, P_FOOD_EN]).passed
    assert cov("Which talk of hers is the best?", "en", [P_TRAVEL_EN]).passed  # the head before the judgement
    assert cov("¿Cuál fue la mejor charla de Leila?", "es", [P_TRAVEL_ES]).passed
    # the best *way* to …: a generic head; the word after it is what is ranked
    assert cov("What is the best way to see her slides?", "en", [P_TRAVEL_EN]).passed
    assert not cov("What is the best way to book a table?", "en", [P_TRAVEL_EN]).passed
    # no judgement, no head: an ordinary question is untouched
    assert question_anchors("Where did Leila live for two years?", "en").heads == ()


def test_evaluative_heads_per_language():
    from vouched.text.anchors import evaluative_heads

    assert evaluative_heads("What is the best restaurant in Lisboa?", "en") == ("restaurant",)
    assert evaluative_heads("What is the best Tessera feature?", "en") == ("tessera", "feature")
    assert evaluative_heads("What is the best Tessera feature?", "en", skip={"tessera"}) == ("feature",)
    assert evaluative_heads("What is the best way to book a table?", "en") == ("table",)
    assert evaluative_heads("What is her best-known project?", "en") == ("project",)
    assert evaluative_heads("¿Qué hotel es el más recomendado?", "es") == ("hotel",)  # the word after "qué"
    assert evaluative_heads("¿Cuál es el hotel más recomendado?", "es") == ("hotel",)
    assert evaluative_heads("بهترین رستوران کدام است؟", "fa") == ("رستوران",)
    assert evaluative_heads("哪家酒店最受欢迎？", "zh") == ("酒店",)
    assert evaluative_heads("推荐一个好方法", "zh") == ()
    assert evaluative_heads("What is the most common cause of failover?", "en") == ()  # "most" alone does not judge


@given(st.sampled_from(EVALUATIVE_UNCOVERED), st.lists(st.sampled_from([P_TRAVEL_EN, P_TRAVEL_ES, P_TRAVEL_FA]), max_size=3))
@settings(max_examples=60, deadline=None)
def test_heads_are_monotone_in_passages(case, extra):
    """More passages never turn a covered evaluative question into an uncovered one."""
    q, lang, p = case
    a = question_anchors(q, lang, exempt_names=EXEMPT)
    base = check_coverage(a, [p])
    more = check_coverage(a, [p, *extra])
    assert not base.passed or more.passed
    assert set(more.found) >= set(base.found)
