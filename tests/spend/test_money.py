from datetime import datetime, timedelta, timezone
from fractions import Fraction
from math import ceil

from hypothesis import given
from hypothesis import strategies as st

from vouched.config import ModelPrice
from vouched.spend.money import (
    cost_micros, cost_usd, month_key, month_of, upper_bound_micros, upper_bound_usd, usd_to_micros,
)

prices = st.builds(ModelPrice,
                   input_per_mtok=st.decimals(0, 100, places=3).map(float),
                   output_per_mtok=st.decimals(0, 400, places=3).map(float))
tokens = st.integers(0, 2_000_000)


def test_known_figures():
    p = ModelPrice(input_per_mtok=0.15, output_per_mtok=0.6)
    assert cost_micros(1_000_000, 0, p) == 150_000
    assert cost_usd(1000, 1000, p) == 0.00075
    assert upper_bound_usd(2000, 512, p) == 0.000608  # 300 + 307.2 µUSD, rounded up
    assert usd_to_micros(0.15) == 150_000 and usd_to_micros(20) == 20_000_000


@given(tokens, tokens, prices)
def test_cost_is_the_exact_product_rounded_up(i, o, p):
    exact = i * Fraction(str(p.input_per_mtok)) + o * Fraction(str(p.output_per_mtok))
    assert cost_micros(i, o, p) == ceil(exact)


@given(tokens, tokens, tokens, tokens, prices)
def test_what_was_used_never_costs_more_than_the_bound(prompt_bytes, max_out, used_in, used_out, p):
    used_in, used_out = min(used_in, prompt_bytes), min(used_out, max_out)
    assert cost_micros(used_in, used_out, p) <= upper_bound_micros(prompt_bytes, max_out, p)


def test_month_key_is_utc():
    tehran = timezone(timedelta(hours=3, minutes=30))
    assert month_key(datetime(2026, 12, 1, 2, 0, tzinfo=tehran)) == "2026-11"
    assert month_key(datetime(2026, 11, 30, 23, 30, tzinfo=timezone(timedelta(hours=-2)))) == "2026-12"
    assert month_key(datetime(2026, 11, 30, 23, 59)) == "2026-11"  # naive: taken as UTC
    assert month_of(1_793_527_200.0) == "2026-11"
