import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.spend.suite import MONTH, PRICE, T0, FakeClock, spend_settings
from vouched.config import SpendSettings, load_config
from vouched.errors import ConfigError
from vouched.spend import Budget, Reservation, build_spend, decide_reserve, upper_bound_micros


@given(st.integers(0, 10**9), st.lists(st.integers(0, 10**7), max_size=60))
def test_admitted_reservations_never_pass_the_cap(cap, amounts):
    held = 0
    for a in amounts:
        if decide_reserve(0, held, a, cap):
            held += a
        else:
            assert held + a > cap  # refused only when it would not fit
    assert held <= cap


@given(st.integers(0, 10**9), st.integers(0, 10**9), st.integers(-10**6, 10**9), st.integers(0, 10**9))
def test_decide_reserve_is_fit_within_cap(settled, reserved, amount, cap):
    assert decide_reserve(settled, reserved, amount, cap) == (amount >= 0 and settled + reserved + amount <= cap)


class Recording:
    """Counters that record calls and answer from a script."""

    def __init__(self, reserve=None, raises: BaseException | None = None):
        self.calls: list[tuple] = []
        self._reserve, self._raises = reserve, raises

    def try_reserve(self, *a):
        self.calls.append(("reserve", *a))
        if self._raises:
            raise self._raises
        return self._reserve

    def settle(self, *a):
        self.calls.append(("settle", *a))
        if self._raises:
            raise self._raises

    def spent(self, *a):
        raise AssertionError("not used")

    def close(self):
        pass


def test_reserve_passes_the_bound_cap_ttl_and_month():
    c = Recording(reserve="r1")
    b = Budget(spend_settings(2.0, reservation_ttl_s=90), c, FakeClock())
    r = b.reserve(model="m", prompt_bytes=1000, max_output_tokens=500)
    bound = upper_bound_micros(1000, 500, PRICE)
    assert r == Reservation("r1", bound / 1e6, MONTH, bound)
    assert c.calls == [("reserve", MONTH, bound, 2_000_000, 90, T0)]


def test_a_model_without_a_price_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match=r"spend\.prices\.gpt-x"):
        Budget(spend_settings(1.0), Recording(), models=["gpt-x"])
    c = Recording(reserve="r")
    b = Budget(spend_settings(1.0), c)
    with pytest.raises(ConfigError, match=r"spend\.prices\.gpt-x"):
        b.reserve(model="gpt-x", prompt_bytes=10, max_output_tokens=10)
    assert c.calls == []  # no reservation, and so no call


def test_a_free_model_reserves_nothing_and_touches_no_store():
    c = Recording(raises=ConnectionError("down"))
    b = Budget(spend_settings(0.0), c, FakeClock())
    r = b.reserve(model="free", prompt_bytes=10_000, max_output_tokens=4000)
    assert r is not None and r.amount == 0
    b.settle(r, model="free", input_tokens=10_000, output_tokens=4000)
    assert c.calls == [] and b.metrics.settle_errors.value() == 0


def test_a_zero_cap_refuses_a_paid_call_without_asking_the_store():
    c = Recording(reserve="r")
    b = Budget(spend_settings(0.0), c, FakeClock())
    assert b.reserve(model="m", prompt_bytes=1, max_output_tokens=16) is None
    assert c.calls == [] and b.metrics.refused.value("cap") == 1


@pytest.mark.parametrize("exc", [ConnectionError("refused"), TimeoutError(), OSError("disk"), RuntimeError("bug")])
def test_any_store_failure_refuses_and_never_escapes(exc):
    b = Budget(spend_settings(5.0), Recording(raises=exc), FakeClock())
    assert b.reserve(model="m", prompt_bytes=10, max_output_tokens=10) is None
    b.settle(Reservation("r", 0.001, MONTH, 1000), model="m", input_tokens=1, output_tokens=1)
    assert b.metrics.refused.value("store") == 1 and b.metrics.settle_errors.value() == 1


def test_settling_above_the_bound_is_counted():
    c = Recording(reserve="r")
    b = Budget(spend_settings(5.0), c, FakeClock())
    r = b.reserve(model="m", prompt_bytes=10, max_output_tokens=10)
    b.settle(r, model="m", input_tokens=30, output_tokens=10)  # a chat template's extra tokens
    assert b.metrics.over_bound.value() == 1
    assert c.calls[-1] == ("settle", MONTH, "r", 30 * 3 + 10 * 15, T0)


def test_build_spend_checks_the_configured_model_at_start(tmp_path):
    with pytest.raises(ConfigError, match=r"spend\.prices\.qwen"):
        build_spend(load_config(None, answer={"provider": "openai", "model": "qwen"}))
    # The extractive generator costs nothing: no price needed.
    budget, limiter = build_spend(load_config(None))
    assert budget.settings == SpendSettings()


def test_build_spend_is_cheap_and_picks_the_backend(tmp_path):
    (tmp_path / "vouched.toml").write_text(
        '[spend]\nbackend = "sqlite"\npath = "data/c.sqlite"\nmonthly_cap_usd = 1\n'
        '[spend.prices.m]\ninput_per_mtok = 1\noutput_per_mtok = 2\n'
        '[answer]\nprovider = "openai"\nmodel = "m"\n')
    budget, limiter = build_spend(load_config(tmp_path))
    assert not (tmp_path / "data").exists()  # nothing opened before the first check
    assert budget.reserve(model="m", prompt_bytes=10, max_output_tokens=16) is not None
    assert limiter.check("192.0.2.1").allowed
    assert (tmp_path / "data" / "c.sqlite").exists()
    from vouched.spend import RedisSpendCounters

    b2, _ = build_spend(load_config(None, spend={"backend": "redis", "redis_url": "redis://127.0.0.1:1/0"}))
    assert isinstance(b2.counters, RedisSpendCounters)


def test_public_api_is_pinned():
    import vouched.spend as spend

    assert sorted(spend.__all__) == sorted([
        "Budget", "CallerBudget", "DeadlinePassed", "DeadlineRunner", "SettleJournal", "StoreNotDurable", "caller_budget",
        "Counter", "Counters", "Limit", "PostgresRateCounters", "PostgresSpendCounters", "RateCounters",
        "RateDecision", "RateLimiter", "RateMetrics", "RedisRateCounters", "RedisSpendCounters", "Reservation", "SQLiteRateCounters", "SQLiteSpendCounters",
        "SpendGate", "SpendMetrics", "SpendStatus", "build_spend", "client_key", "cost_micros", "cost_usd",
        "decide_rate", "decide_reserve", "limit_key", "limits_from", "month_key", "upper_bound_micros",
        "upper_bound_usd"])
    for name in spend.__all__:
        assert getattr(spend, name) is not None


def test_reserve_or_reason_says_why_a_reservation_was_refused():
    """The pipeline's notice depends on it: a store outage is not a spent budget."""
    from vouched.spend import CallerBudget, caller_budget

    bound = upper_bound_micros(1000, 500, PRICE)
    ask = dict(model="m", prompt_bytes=1000, max_output_tokens=500)
    ok = Budget(spend_settings(2.0), Recording(reserve="r1"), FakeClock()).reserve_or_reason(**ask)
    assert ok[0] is not None and ok[1] is None
    assert Budget(spend_settings(0.0), Recording(reserve="r1"), FakeClock()).reserve_or_reason(**ask) == (None, "cap")
    assert Budget(spend_settings(2.0), Recording(reserve=None), FakeClock()).reserve_or_reason(**ask) == (None, "cap")
    down = Budget(spend_settings(2.0), Recording(raises=ConnectionError("refused")), FakeClock())
    assert down.reserve_or_reason(**ask) == (None, "store")
    assert down.reserve(**ask) is None  # reserve: the same decision, without the reason
    token = caller_budget.set(CallerBudget("key:k", bound / 2 / 1e6))  # the key's own budget is below the bound
    try:
        assert Budget(spend_settings(2.0), Recording(reserve="r1"), FakeClock()).reserve_or_reason(**ask) == (None, "cap")
    finally:
        caller_budget.reset(token)
    token = caller_budget.set(CallerBudget("key:k", 2 * bound / 1e6))  # fits, but the store says the key's month is full

    class KeyFull(Recording):
        def try_reserve(self, month, *a):
            self.calls.append(("reserve", month, *a))
            return None if month != MONTH else "r1"

    try:
        assert Budget(spend_settings(2.0), KeyFull(), FakeClock()).reserve_or_reason(**ask) == (None, "caller_cap")
    finally:
        caller_budget.reset(token)
