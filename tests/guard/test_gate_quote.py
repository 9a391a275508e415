"""An unmarked sentence that quotes a source cites it (vouched.guard.gate_quote), and nothing else does."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.guard.gate import SentenceGate, check_sentence
from vouched.guard.gate_quote import _KEEP_WORDS, _MIN_WORDS, _WORDS_PER_SKIP, _keep, is_quote, quoted_source
from vouched.text.words import stopwords, words

RUNBOOK = ("The primary on-call engineer acknowledges a page within 5 minutes. If a page is not acknowledged "
           "within 10 minutes, the paging tool escalates it to the secondary.")
# content words (skippable), stop words and _KEEP words (never skippable)
CONTENT = ["engineer", "parcel", "tracking", "warehouse", "express", "mainland", "Lisbon", "service"]
STOP = ["the", "a", "is", "to", "and", "of"]
KEEP = ["not", "only", "never", "unless", "except", "without"]
VOCAB = CONTENT + STOP + KEEP


def _gate(text: str, sources: dict[int, str], **kw) -> list:
    gate = SentenceGate(sources, "en", **kw)
    return [*gate.feed(text), *gate.finish()]


def test_the_verbatim_sentence_and_one_left_out_word_are_quotes():
    assert is_quote("The primary on-call engineer acknowledges a page within 5 minutes.", RUNBOOK)
    assert is_quote("the primary ON-CALL acknowledges a page within 5 minutes", RUNBOOK)  # "engineer" left out


def test_an_added_word_a_reordering_or_a_dropped_negation_is_not_a_quote():
    assert not is_quote("The primary on-call engineer always acknowledges a page within 5 minutes.", RUNBOOK)
    assert not is_quote("A page within 5 minutes the primary on-call engineer acknowledges.", RUNBOOK)
    assert not is_quote("If a page is acknowledged within 10 minutes, the paging tool escalates it.", RUNBOOK)
    assert not is_quote("Express delivery is available to mainland Spain.",
                        "Express delivery is not available to mainland Spain.")
    assert not is_quote("Refunds are given for damaged parcels.", "Refunds are given only for damaged parcels.")
    assert not is_quote("Within 5 minutes.", RUNBOOK)  # under _MIN_WORDS words


def test_a_quote_may_not_leave_out_a_stop_word_or_a_digit():
    assert not is_quote("If a page acknowledged within 10 minutes.", RUNBOOK)  # "is" left out
    assert not is_quote("The pager escalates after minutes of silence today.",
                        "The pager escalates after 10 minutes of silence today.")


def test_the_keep_words_are_never_stop_free_content():
    """Every _KEEP word is normalised as `words` does, so the guard sees it in a source."""
    for w in _KEEP_WORDS.split():
        assert set(words(w)) <= _keep()


def test_quotes_in_other_scripts():
    fa = "تیم پشتیبانی در روزهای کاری از ساعت ۹ تا ۱۷ پاسخ می‌دهد."
    assert is_quote("تیم پشتیبانی در روزهای کاری از ساعت 9 تا 17 پاسخ می‌دهد", fa)
    assert not is_quote("تیم پشتیبانی در روزهای کاری از ساعت ۹ تا ۱۷ پاسخ نمی‌دهد", fa)
    zh = "快递服务只覆盖葡萄牙本土和西班牙本土。"
    assert is_quote("快递服务只覆盖葡萄牙本土和西班牙本土", zh)
    assert not is_quote("快递服务覆盖葡萄牙本土和西班牙本土", zh)  # 只 ("only") left out
    es = "El envío urgente solo está disponible en la Península."
    assert is_quote("El envío urgente solo está disponible en la Península", es)
    assert not is_quote("El envío urgente está disponible en la Península", es)


def test_through_the_gate_an_unmarked_quote_cites_the_lowest_numbered_source_that_holds_it():
    sources = {1: "Opening hours are posted at the door.", 2: RUNBOOK, 3: RUNBOOK}
    [v] = _gate("The primary on-call engineer acknowledges a page within 5 minutes.", sources)
    assert v.ok and v.cited == (2,) and v.released == "The primary on-call engineer acknowledges a page within 5 minutes."
    [off] = _gate("The primary on-call engineer acknowledges a page within 5 minutes.", sources, attribute_quotes=False)
    assert not off.ok and off.rule == "missing_marker"


def test_an_attributed_quote_meets_every_other_rule_against_its_source():
    """The quote is checked as if the model had cited it: a value or name the source lacks still holds."""
    src = {1: "Maya Ortiz leads the platform team in Lisbon."}
    [v] = _gate("I lead the platform team in Lisbon.", {1: "I lead the platform team in Lisbon."})
    assert not v.ok and v.rule == "first_person"
    [ok] = _gate("Maya Ortiz leads the platform team in Lisbon.", src)
    assert ok.ok and ok.cited == (1,)


sentence_words = st.lists(st.sampled_from(VOCAB), min_size=_MIN_WORDS, max_size=14)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(VOCAB), min_size=4, max_size=30), st.data())
def test_every_span_of_a_source_is_a_quote_of_it(src_words, data):
    start = data.draw(st.integers(0, len(src_words) - 1))
    end = data.draw(st.integers(start + 1, len(src_words)))
    span = src_words[start:end]
    assert is_quote(" ".join(span), " ".join(src_words)) == (len(span) >= _MIN_WORDS)


@settings(max_examples=300, deadline=None)
@given(st.permutations(VOCAB), st.integers(_MIN_WORDS + 1, len(VOCAB)), st.data())
def test_a_quote_leaves_out_content_words_only_and_within_its_budget(vocab, size, data):
    """Distinct words, so the sentence has one place in the source: leaving out an inner word keeps
    it a quote exactly when that word is content and the sentence is long enough to leave one out."""
    src_words = vocab[:size]
    i = data.draw(st.integers(1, size - 2))
    sent = src_words[:i] + src_words[i + 1 :]
    expected = src_words[i] in CONTENT and len(sent) // _WORDS_PER_SKIP >= 1
    assert is_quote(" ".join(sent), " ".join(src_words)) == expected


def _skippable(w: str) -> bool:
    w = w.lower()
    return w not in stopwords(None) and w not in _keep() and not any(c.isdigit() for c in w)


def _brute(sent: list[str], src: list[str], start: int) -> bool:
    """Every way of placing `sent` in order after `start` (each word at any later equal place),
    with the same budget and skip rule."""
    sent = [w.lower() for w in sent]
    src = [w.lower() for w in src]
    if len(sent) < _MIN_WORDS or src[start] != sent[0]:
        return False

    def place(k: int, j: int, budget: int) -> bool:  # sent[k:] after src[j]
        if k == len(sent):
            return True
        for nxt in range(j + 1, min(len(src), j + 2 + budget)):
            gap = src[j + 1 : nxt]
            if src[nxt] == sent[k] and all(_skippable(w) for w in gap) and place(k + 1, nxt, budget - len(gap)):
                return True
        return False

    return place(1, start, len(sent) // _WORDS_PER_SKIP)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(CONTENT[:3] + STOP[:3] + KEEP[:1]), min_size=4, max_size=24),
       st.lists(st.sampled_from(CONTENT[:3] + STOP[:3] + KEEP[:1]), min_size=_MIN_WORDS, max_size=17))
def test_the_greedy_match_is_the_exhaustive_one(src_words, sent_words):
    """is_quote matches each word at its first place after the last (greedy); over a small alphabet,
    where repeats are common, it agrees with trying every placement."""
    brute = any(_brute(sent_words, src_words, s) for s in range(len(src_words)))
    assert is_quote(" ".join(sent_words), " ".join(src_words)) == brute


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(CONTENT), min_size=_MIN_WORDS, max_size=12), st.integers(1, 3))
def test_an_attributed_quote_has_the_verdict_of_the_same_sentence_cited(sent_words, n):
    """The gate's verdict on an unmarked quote of source n is its verdict on the sentence with "[n]"."""
    text = " ".join(sent_words).capitalize() + " in 2024."
    sources = {i: "Nothing here." for i in range(1, 4)}
    sources[n] = "Before that. " + text + " After that."
    [v] = _gate(text, sources)
    cited = check_sentence(text[:-1] + f" [{n}].", sources, "en")
    assert (v.ok, v.cited, v.released, v.rule) == (cited.ok, cited.cited, cited.released, cited.rule)
    assert quoted_source(text, sources, sources.__getitem__) == n
