"""choose_threshold: a pure decision, checked against brute force."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.eval.calibrate import allowed_losses, choose_threshold, lowest_safe_threshold

score = st.one_of(st.floats(0.0, 1.0, allow_nan=False), st.sampled_from([0.0, 0.5, 0.8, 0.8124, 1.0]))
scores = st.lists(score, max_size=30)
share = st.one_of(st.floats(0.0, 1.0, allow_nan=False), st.sampled_from([0.0, 0.05, 0.1, 0.29, 1.0]))


def lost(answerable, t):
    return sum(a < t for a in answerable)


@settings(max_examples=400, deadline=None)
@given(scores, st.lists(score, min_size=1, max_size=30), share)
def test_a_claimed_threshold_is_safe_within_the_loss_and_least_lossy(answerable, refuse, max_loss):
    c = choose_threshold(answerable, refuse, max_loss)
    n, k = len(answerable), allowed_losses(max_loss, len(answerable))
    # the fewest answerable cases any threshold above every must-refuse score can lose
    best_safe_loss = sum(a <= max(refuse) for a in answerable)
    if c.value is not None:
        assert all(r < c.value for r in refuse)  # L2 passes evidence >= threshold: no must-refuse case passes
        assert c.value <= 1.0
        assert c.answerable_lost == lost(answerable, c.value) <= max_loss * n + 1e-9
        assert c.answerable_lost == best_safe_loss
        assert c.refused_stopped == c.refused_total == len(refuse) and c.closest is None
    else:
        k_ = c.closest
        assert k_ is not None
        if k_.safe_value is None:
            assert max(refuse) >= 1.0 or math.nextafter(max(refuse), math.inf) > 1.0
        else:
            assert all(r < k_.safe_value for r in refuse)
            assert k_.safe_lost == lost(answerable, k_.safe_value) == best_safe_loss > k
        # the best threshold within the allowed loss keeps within it, and lets at least one case through
        assert k_.budget_lost == lost(answerable, k_.budget_value) <= k
        assert k_.let_through == sum(r >= k_.budget_value for r in refuse) >= 1
        # no threshold at all is both safe and within the allowed loss
        candidates = {0.0, 1.0, *answerable, *refuse, *(math.nextafter(x, math.inf) for x in [*answerable, *refuse])}
        assert not any(t <= 1.0 and all(r < t for r in refuse) and lost(answerable, t) <= k for t in candidates)


@settings(max_examples=200, deadline=None)
@given(scores, st.lists(score, min_size=1, max_size=30))
def test_the_readable_value_loses_no_more_than_the_exact_one(answerable, refuse):
    t = lowest_safe_threshold(refuse, answerable)
    m = max(refuse)
    exact = math.nextafter(m, math.inf)
    if exact > 1.0:
        assert t is None
        return
    assert m < t <= min(1.0, m + 1e-4 + 1e-12) or t == exact
    assert lost(answerable, t) == lost(answerable, exact)


def test_examples():
    c = choose_threshold([0.81, 0.85, 0.9, 0.95], [0.7, 0.8], 0.05)
    assert c.value == 0.8001 and c.answerable_lost == 0
    # a must-refuse case AT an answerable score: that answerable case is lost with it
    c = choose_threshold([0.8, 0.85, 0.9, 0.95, 0.97], [0.8], 0.2)
    assert c.value == 0.8001 and c.answerable_lost == 1
    c = choose_threshold([0.8, 0.85, 0.9, 0.95, 0.97], [0.8], 0.1)
    assert c.value is None and c.closest.safe_value == 0.8001 and c.closest.safe_lost == 1
    assert c.closest.budget_value == 0.8 and c.closest.let_through == 1
    # the readable value would lose an answerable case the exact one keeps: the exact one is used
    c = choose_threshold([0.80005, 0.9], [0.8], 0.0)
    assert c.value == math.nextafter(0.8, 1.0) and c.answerable_lost == 0
    # a must-refuse case at 1.0 cannot be stopped
    c = choose_threshold([0.9, 1.0], [1.0], 1.0)
    assert c.value is None and c.closest.safe_value is None
    # no must-refuse case: every threshold is safe
    assert choose_threshold([0.5], [], 0.0).value == 0.0
    assert allowed_losses(0.29, 100) == 29 and allowed_losses(0.05, 15) == 0 and allowed_losses(0.07, 15) == 1
    with pytest.raises(ValueError):
        choose_threshold([0.5], [0.2], 1.5)


def test_rare_cut_learnt_with_the_threshold():
    from vouched.eval.calibrate import RARE_CUTS, CalibrationCase, ScoredCase, choose_rare_cut

    def sc(i, label, ev, refused_from):
        # L2 coverage refuses this case at every cut >= refused_from
        covered = tuple((c, c < refused_from) for c in RARE_CUTS)
        return ScoredCase(CalibrationCase(i, i, label), ev, "question", covered=covered, raw_evidence=ev)

    scored = [sc("a1", "answerable", 0.90, 9.0), sc("a2", "answerable", 0.86, 0.08),
              sc("r1", "must_refuse", 0.88, 0.03), sc("r2", "must_refuse", 0.80, 9.0)]
    cut, choice, (lo, hi) = choose_rare_cut(scored, 0.0)
    # r1 (0.88) is above a2 (0.86): only a cut that refuses r1 by coverage and keeps a2 loses nothing
    assert cut in (0.03, 0.05) and choice.value is not None and choice.answerable_lost == 0
    assert (lo, hi) == (0.03, 0.05)
    assert scored[2].at_cut(cut).evidence == 0.0 and scored[1].at_cut(cut).evidence == 0.86
