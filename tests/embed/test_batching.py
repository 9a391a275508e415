"""The batching and long-text policy (vouched.embed.batching): pure functions, no model."""

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from vouched.embed.batching import batch_stats, plan_batches, run_tokens, truncate_to_tokens, window_count

lengths = st.lists(st.integers(min_value=0, max_value=3000), max_size=200)


@given(lengths, st.integers(min_value=1, max_value=20_000), st.integers(min_value=1, max_value=64))
@settings(max_examples=300, deadline=None)
def test_plan_covers_every_text_once_within_budget(ls, budget, max_items):
    batches = plan_batches(ls, budget, max_items)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(ls)))
    for b in batches:
        assert 1 <= len(b) <= max_items
        # over budget only as a batch of one (a text longer than the budget goes alone)
        assert sum(max(ls[i], 1) for i in b) <= budget or len(b) == 1
    # sorted by length across the whole plan, ties in input order
    assert [ls[i] for i in flat] == sorted(ls)
    ties = [i for i in flat]
    for a, b in zip(ties, ties[1:]):
        if ls[a] == ls[b]:
            assert a < b


@given(lengths, st.integers(min_value=512, max_value=20_000))
@settings(max_examples=200, deadline=None)
def test_batches_are_full_except_where_the_next_text_does_not_fit(ls, budget):
    batches = plan_batches(ls, budget, 10_000)
    for b, nxt in zip(batches, batches[1:]):
        assert sum(max(ls[i], 1) for i in b) + max(ls[nxt[0]], 1) > budget


def test_plan_rejects_an_empty_budget():
    with pytest.raises(ValueError):
        plan_batches([3, 4], 0)


@pytest.mark.parametrize("tokens, windows", [(2, 1), (10, 1), (512, 1), (513, 2), (1022, 2), (1023, 3), (2258, 5)])
def test_windows_follow_the_510_content_tokens_of_each_window(tokens, windows):
    assert window_count(tokens) == windows
    assert window_count(tokens, long_text="truncate") == 1


@given(st.integers(min_value=2, max_value=10_000), st.integers(min_value=16, max_value=512))
def test_tokens_run(tokens, max_tokens):
    # every window carries its own <s> and </s>; a truncated text is at most max_tokens
    assert run_tokens(tokens) == tokens - 2 + 2 * window_count(tokens)
    assert run_tokens(tokens, max_tokens, "truncate") == min(tokens, max_tokens)


def test_stats_count_what_the_model_runs():
    raw = [100, 600, 30]
    s = batch_stats(raw, plan_batches(raw, 1000))
    assert (s.texts, s.windows, s.tokens, s.padding_tokens) == (3, 4, 100 + 602 + 30, 0)
    assert s.windows_per_text == pytest.approx(4 / 3)
    t = batch_stats(raw, plan_batches(raw, 1000), 512, "truncate")
    assert (t.windows, t.tokens) == (3, 100 + 512 + 30)


def _count_words(text: str) -> int:
    return len(text.split()) + 2  # a stand-in tokenizer: one token a word, plus <s> and </s>


def _count_chars(text: str) -> int:
    return len(text) + 2  # one token a character, as for Chinese


@given(st.text(alphabet="ab xyz", max_size=300), st.integers(min_value=2, max_value=60))
@settings(max_examples=300, deadline=None)
def test_truncation_keeps_the_longest_fitting_prefix(text, max_tokens):
    for count in (_count_words, _count_chars):
        cut = truncate_to_tokens(text, count, max_tokens)
        assert text.startswith(cut)
        if count(text) <= max_tokens:
            assert cut == text
        else:
            assert count(cut) <= max_tokens
            assert count(text[: len(cut) + 1]) > max_tokens  # one character more would not fit


def test_truncation_of_text_without_spaces():
    text = "蛋白质每天需要多少克" * 10
    cut = truncate_to_tokens(text, _count_chars, 12)
    assert cut == text[:10]
