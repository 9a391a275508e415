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
