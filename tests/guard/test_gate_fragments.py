"""Short cited replies in caseless scripts (fa, ar, hi): each content word must be a word of a cited source.

The name rule cannot see a name without capitals, so "در پرتغال [3]." ("in Portugal") was
released though its source never said it (real-model round 3). A sentence of fewer than
`min_words` words is what a model writes as a bare answer; longer sentences paraphrase and
keep the rules they had.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.guard.gate_check import DEFAULT_MIN_WORDS, check_sentence, fragment_words
from vouched.text.words import content_words

SOURCES = {
    "fa": "لیلا نوید در لیسبون زندگی می‌کند و پروژه‌های جستجوی پزشکی را برای بیمارستان‌ها می‌سازد.",
    "ar": "تعيش ليلى نويد في لشبونة وتبني أنظمة البحث الطبي للمستشفيات.",
    "hi": "लीला नवीद लिस्बन में रहती हैं और अस्पतालों के लिए चिकित्सा खोज प्रणालियाँ बनाती हैं।",
}
FOREIGN = {"fa": "مادرید", "ar": "مدريد", "hi": "मैड्रिड"}


def test_a_word_no_cited_source_has_is_held():
    for lang, src in SOURCES.items():
        v = check_sentence(f"{FOREIGN[lang]} [1].", {1: src}, lang)
        assert not v.ok and v.rule == "unsupported_name", (lang, v)


def test_words_of_the_source_are_released_inflected_or_not():
    assert check_sentence("در لیسبون [1].", {1: SOURCES["fa"]}, "fa").ok
    assert check_sentence("پروژه‌های پزشکی [1].", {1: SOURCES["fa"]}, "fa").ok
    assert check_sentence("في لشبونة [1].", {1: SOURCES["ar"]}, "ar").ok
    assert check_sentence("लिस्बन में [1].", {1: SOURCES["hi"]}, "hi").ok


def test_yes_no_and_stop_words_need_no_support():
    assert check_sentence("بله [1].", {1: SOURCES["fa"]}, "fa").ok
    assert check_sentence("نعم [1].", {1: SOURCES["ar"]}, "ar").ok
    assert check_sentence("हाँ [1].", {1: SOURCES["hi"]}, "hi").ok


def test_only_short_cited_sentences_in_caseless_scripts():
    long = "او " + " ".join(["در"] * 3) + f" {FOREIGN['fa']} کار می‌کند و زندگی می‌کند [1]."
    assert check_sentence(long, {1: SOURCES["fa"]}, "fa").ok  # 7+ words: paraphrase, unchanged rules
    assert check_sentence("در مادرید.", {1: SOURCES["fa"]}, "fa").ok  # uncited short text: unchanged (see docs/gate.md)
    assert fragment_words("in Madrid", "en") == [] and fragment_words("在马德里", "zh") == []


def test_the_subject_s_names_are_allowed():
    v = check_sentence("لیلا نوید [1].", {1: "او در لیسبون است."}, "fa", allowed_names=["لیلا نوید"])
    assert v.ok, v


_FA_WORDS = content_words(SOURCES["fa"], "fa")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_FA_WORDS), min_size=1, max_size=DEFAULT_MIN_WORDS - 2), st.booleans())
def test_property_short_replies_of_source_words_pass_and_one_foreign_word_holds(words, add_foreign):
    text = " ".join(words + ([FOREIGN["fa"]] if add_foreign else []))
    v = check_sentence(text + " [1].", {1: SOURCES["fa"]}, "fa")
    if add_foreign:
        assert not v.ok and v.rule == "unsupported_name"
    else:
        assert v.ok, v
