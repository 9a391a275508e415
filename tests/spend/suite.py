"""The shared counter-store suite. Each backend's tests subclass `CountersSuite` and provide

    make_counters   () -> (spend Counters, RateCounters): a new handle (own connection)
                    to one fresh store per test; every call reaches the same store
    unreachable     (spend Counters, RateCounters) over a store that cannot answer
"""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from vouched.config import ModelPrice, RateLimitSettings, SpendSettings
from vouched.llm.base import Usage, settle_usage
from vouched.spend import Budget, Limit, RateLimiter, cost_micros, decide_rate, upper_bound_micros

T0 = 1_793_527_200.0  # 2026-11-01T10:00:00Z
MONTH = "2026-11"
PRICE = ModelPrice(input_per_mtok=3.0, output_per_mtok=15.0)


class FakeClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, s: float) -> None:
        self.now += s


def spend_settings(cap_usd: float, **kw) -> SpendSettings:
    # The atomicity tests release 200 threads at once on 2 cores; the store deadline (0.1 s by
    # default, tested on its own in test_faults.py) would turn their queueing into refusals.
    kw.setdefault("deadline_s", 30.0)
    return SpendSettings(monthly_cap_usd=cap_usd, prices={"m": PRICE, "free": ModelPrice(input_per_mtok=0, output_per_mtok=0)}, **kw)


def run_together(n: int, fn) -> list:
    """Run fn(i) on n threads released at once by a barrier; results in order."""
    barrier = threading.Barrier(n)

    def go(i):
        barrier.wait()
        return fn(i)

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(go, range(n)))


class CountersSuite:
    @pytest.fixture
    def spend(self, make_counters):
        return make_counters()[0]

    @pytest.fixture
    def rate(self, make_counters):
        return make_counters()[1]

    # -- spend ----------------------------------------------------------------------------
    def test_reserves_until_the_cap_then_refuses(self, spend):
        ids = [spend.try_reserve(MONTH, 300, 1000, 600, T0) for _ in range(4)]
        assert all(ids[:3]) and ids[3] is None
        assert len(set(ids[:3])) == 3
        assert spend.spent(MONTH, T0) == (0, 900)

    def test_an_exact_fit_is_admitted(self, spend):
        assert spend.try_reserve(MONTH, 1000, 1000, 600, T0)
        assert spend.try_reserve(MONTH, 1, 1000, 600, T0) is None
        assert spend.try_reserve(MONTH, 0, 1000, 600, T0)

    def test_settle_replaces_the_reservation(self, spend):
        a, b, c = (spend.try_reserve(MONTH, 300, 1000, 600, T0) for _ in range(3))
        spend.settle(MONTH, a, 100, T0 + 1)
        assert spend.spent(MONTH, T0 + 1) == (100, 600)
        assert spend.try_reserve(MONTH, 300, 1000, 600, T0 + 1)  # 100 + 600 + 300 fits
        assert spend.try_reserve(MONTH, 1, 1000, 600, T0 + 1) is None

    def test_settle_is_idempotent_and_the_last_figure_stands(self, spend):
        rid = spend.try_reserve(MONTH, 300, 1000, 600, T0)
        spend.settle(MONTH, rid, 100, T0)
        spend.settle(MONTH, rid, 100, T0)
        assert spend.spent(MONTH, T0) == (100, 0)
        spend.settle(MONTH, rid, 50, T0)
        assert spend.spent(MONTH, T0) == (50, 0)

    def test_a_settled_cost_may_pass_the_cap_and_then_nothing_fits(self, spend):
        rid = spend.try_reserve(MONTH, 900, 1000, 600, T0)
        spend.settle(MONTH, rid, 1200, T0)  # the provider's figures stand
        assert spend.spent(MONTH, T0) == (1200, 0)
        assert spend.try_reserve(MONTH, 1, 1000, 600, T0) is None

    def test_months_are_counted_apart(self, spend):
        assert spend.try_reserve(MONTH, 1000, 1000, 600, T0)
        assert spend.try_reserve("2026-12", 1000, 1000, 600, T0)
        assert spend.spent("2026-12", T0) == (0, 1000)

    def test_expired_reservations_are_charged_at_their_bound_never_freed(self, spend):
        """A crashed process never settles: its hold expires after the TTL and is charged in full."""
        assert spend.try_reserve(MONTH, 1000, 1000, 60, T0)
        assert spend.try_reserve(MONTH, 1, 1000, 60, T0 + 59.9) is None
        assert spend.spent(MONTH, T0 + 59.9) == (0, 1000)
        assert spend.spent(MONTH, T0 + 60) == (1000, 0)  # charged, not freed
        assert spend.try_reserve(MONTH, 1, 1000, 60, T0 + 60) is None
        assert spend.spent(MONTH, T0 + 3600) == (1000, 0)

    def test_settle_after_expiry_replaces_the_charged_bound(self, spend):
        rid = spend.try_reserve(MONTH, 500, 1000, 60, T0)
        assert spend.spent(MONTH, T0 + 61) == (500, 0)  # charged at the bound
        spend.settle(MONTH, rid, 400, T0 + 61)  # a stream that outlived its TTL, or a journaled settle
        assert spend.spent(MONTH, T0 + 61) == (400, 0)
        spend.settle(MONTH, rid, 400, T0 + 62)  # the journal retried it: counts once
        assert spend.spent(MONTH, T0 + 62) == (400, 0)

    def test_settle_of_an_unknown_reservation_counts(self, spend):
        spend.settle(MONTH, "never-reserved-here", 300, T0)
        spend.settle(MONTH, "never-reserved-here", 300, T0)
        assert spend.spent(MONTH, T0) == (300, 0)

    @pytest.mark.parametrize("seed", range(3))
    def test_random_expiries_and_settles_never_free_money(self, make_counters, seed):
        """Whatever mix of settled, expired and late-settled holds: settled + held equals the sum
        of each reservation's last figure (its bound until settled), never less."""
        spend = make_counters()[0]
        rng = random.Random(seed)
        now, figures = T0, {}
        for _ in range(60):
            now += rng.uniform(0, 4)
            r = rng.random()
            if r < 0.5:
                rid = spend.try_reserve(MONTH, rng.randint(1, 50), 10**9, rng.uniform(1, 10), now)
                if rid:
                    figures[rid] = None
            elif figures and r < 0.85:
                rid = rng.choice(list(figures))
                actual = rng.randint(0, 60)
                spend.settle(MONTH, rid, actual, now)
                figures[rid] = actual
        settled, held = spend.spent(MONTH, now + 100)
        assert held == 0
        assert settled >= sum(a for a in figures.values() if a is not None)

    def test_budget_reserves_the_upper_bound_and_settles_the_cost(self, spend):
        clock = FakeClock()
        bound = upper_bound_micros(1000, 500, PRICE)  # 3000 + 7500 = 10500 µUSD
        budget = Budget(spend_settings(3 * bound / 1e6), spend, clock)
        rs = [budget.reserve(model="m", prompt_bytes=1000, max_output_tokens=500) for _ in range(4)]
        assert [r is not None for r in rs] == [True, True, True, False]
        assert rs[0].amount_micros == bound and rs[0].amount == pytest.approx(0.0105) and rs[0].month == MONTH
        assert budget.metrics.refused.value("cap") == 1
        budget.settle(rs[0], model="m", input_tokens=400, output_tokens=100)  # 1200 + 1500
        assert budget.status().settled_usd == pytest.approx(0.0027)
        assert spend.spent(MONTH, clock()) == (2700, 2 * bound)
        # What settling freed: 31500 - 2700 - 21000 = 7800 = 100 × 3 + 500 × 15.
        assert budget.reserve(model="m", prompt_bytes=100, max_output_tokens=500) is not None
        assert budget.reserve(model="m", prompt_bytes=1, max_output_tokens=16) is None

    def test_settle_with_partial_usage_fills_only_the_gaps(self, spend):
        """A stream cut after Anthropic's message_start: input tokens reported, output not."""
        budget = Budget(spend_settings(10.0), spend, FakeClock())
        r = budget.reserve(model="m", prompt_bytes=2000, max_output_tokens=800)
        usage = settle_usage(Usage(input_tokens=1500), prompt_bytes=2000, received_bytes=120, reasoning_bytes=30)
        assert (usage.input_tokens, usage.output_tokens) == (1500, 150)
        budget.settle(r, model="m", input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
        assert spend.spent(MONTH, T0) == (cost_micros(1500, 150, PRICE), 0)
        # Nothing reported at all: the input bound plus one token per received byte.
        r = budget.reserve(model="m", prompt_bytes=2000, max_output_tokens=800)
        usage = settle_usage(None, prompt_bytes=2000, received_bytes=64)
        budget.settle(r, model="m", input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
        assert spend.spent(MONTH, T0) == (cost_micros(1500, 150, PRICE) + cost_micros(2000, 64, PRICE), 0)

    def test_a_reservation_settled_next_month_counts_in_its_own_month(self, spend):
        clock = FakeClock(T0 + 29 * 86400 + 13 * 3600 + 3590)  # 2026-11-30T23:59:50Z
        budget = Budget(spend_settings(10.0), spend, clock)
        r = budget.reserve(model="m", prompt_bytes=100, max_output_tokens=100)
        clock.advance(20)
        budget.settle(r, model="m", input_tokens=100, output_tokens=10)
        assert spend.spent(MONTH, clock()) == (cost_micros(100, 10, PRICE), 0)
        assert spend.spent("2026-12", clock()) == (0, 0)

    def test_unreachable_store_refuses_spend_and_passes_rate(self, unreachable):
        spend, rate = unreachable
        budget = Budget(spend_settings(100.0), spend, FakeClock())
        assert budget.reserve(model="m", prompt_bytes=10, max_output_tokens=10) is None
        assert budget.metrics.refused.value("store") == 1
        from vouched.spend import Reservation

        budget.settle(Reservation("x", 0.01, MONTH, 10_000), model="m", input_tokens=1, output_tokens=1)
        assert budget.metrics.settle_errors.value() == 1
        limiter = RateLimiter(RateLimitSettings(per_minute=1), rate, FakeClock())
        assert all(limiter.check("192.0.2.1").allowed for _ in range(3))
        assert limiter.metrics.store_errors.value() == 3

    def test_200_concurrent_reservations_never_overshoot(self, make_counters):
        handles = [make_counters()[0] for _ in range(8)]
        amount = upper_bound_micros(3000, 1024, PRICE)
        cap = 50 * amount
        ids = run_together(200, lambda i: handles[i % 8].try_reserve(MONTH, amount, cap, 600, T0))
        granted = [x for x in ids if x]
        assert len(granted) == 50 and len(set(granted)) == 50
        settled, reserved = handles[0].spent(MONTH, T0)
        assert settled == 0 and reserved == 50 * amount <= cap

    def test_200_concurrent_budget_reserves_with_settles(self, make_counters):
        """Reserve, then settle at less than the bound, all at once: the cap still holds."""
        amount = upper_bound_micros(3000, 1024, PRICE)
        budgets = [Budget(spend_settings(50 * amount / 1e6), make_counters()[0], FakeClock()) for _ in range(4)]

        def turn(i):
            b = budgets[i % 4]
            r = b.reserve(model="m", prompt_bytes=3000, max_output_tokens=1024)
            if r is not None and i % 2:
                b.settle(r, model="m", input_tokens=3000, output_tokens=1024)  # the full bound
            return r

        out = run_together(200, turn)
        assert sum(r is not None for r in out) == 50
        assert sum(b.metrics.refused.value("store") for b in budgets) == 0
        settled, reserved = budgets[0].counters.spent(MONTH, T0)
        assert settled + reserved == 50 * amount

    # -- rate -----------------------------------------------------------------------------
    def test_rate_store_matches_the_reference_decision(self, rate):
        limits = (Limit("a", 3, 10), Limit("b", 5, 60), Limit("c", 8, 300))
        rnd = random.Random(7)
        now, hits = T0, []
        for _ in range(150):
            now += rnd.choice((0, 0.25, 1, 2.5, 4, 9.75, 10, 30))
            want = decide_rate(hits, limits, now)
            got = rate.hit("198.51.100.7", limits, now)
            assert got == want, (now - T0, hits)
            if want.allowed:
                hits.append(now)

    def test_rate_keys_are_counted_apart(self, rate):
        limits = (Limit("minute", 2, 60),)
        assert [rate.hit("a", limits, T0).allowed for _ in range(3)] == [True, True, False]
        assert rate.hit("b", limits, T0).allowed

    def test_rate_limiter_refuses_with_retry_after(self, rate):
        clock = FakeClock()
        limiter = RateLimiter(RateLimitSettings(per_minute=2, per_hour=3, per_day=0), rate, clock)
        assert limiter.check("192.0.2.9").allowed
        clock.advance(10)
        assert limiter.check("192.0.2.9").allowed
        clock.advance(5)
        d = limiter.check("192.0.2.9")
        assert (d.allowed, d.limit_name, d.retry_after_s) == (False, "minute", 45.0)
        clock.advance(45)
        assert limiter.check("192.0.2.9").allowed
        clock.advance(60)
        d = limiter.check("192.0.2.9")
        assert (d.allowed, d.limit_name, d.retry_after_s) == (False, "hour", 3480.0)
        assert limiter.metrics.limited.values() == {"minute": 1, "hour": 1}

    def test_rate_is_atomic_under_concurrency(self, make_counters):
        handles = [make_counters()[1] for _ in range(8)]
        limits = (Limit("minute", 10, 60),)
        out = run_together(100, lambda i: handles[i % 8].hit("203.0.113.5", limits, T0 + i * 1e-3))
        assert sum(d.allowed for d in out) == 10
