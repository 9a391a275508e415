"""Money arithmetic for the spend cap: exact integer micro-dollars, never floats in a sum.

A price of P USD per million tokens is P micro-dollars per token, so a cost is a plain
product. Costs and upper bounds round *up* to the next micro-dollar (the cap is never
under-charged); the cap itself rounds *down*. Everything here is pure.
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Protocol

MICROS_PER_USD = 1_000_000


class Price(Protocol):
    """USD per million tokens (`vouched.config.ModelPrice` fits)."""

    input_per_mtok: float
    output_per_mtok: float


def _dec(x: float) -> Decimal:
    # str() first: Decimal(0.15) is 0.1499999999999999944..., Decimal("0.15") is what the
    # operator wrote in vouched.toml.
    return Decimal(str(x))


def usd_to_micros(usd: float) -> int:
    """A cap in USD as whole micro-dollars, rounded down."""
    if usd < 0:
        raise ValueError(f"amount must be >= 0, got {usd}")
    return int((_dec(usd) * MICROS_PER_USD).to_integral_value(rounding=ROUND_FLOOR))


def micros_to_usd(micros: int) -> float:
    return micros / MICROS_PER_USD


def cost_micros(input_tokens: int, output_tokens: int, price: Price) -> int:
    """Cost of a call in micro-dollars, rounded up; output tokens include reasoning."""
    if input_tokens < 0 or output_tokens < 0:
        raise ValueError(f"token counts must be >= 0, got input={input_tokens} output={output_tokens}")
    exact = Decimal(input_tokens) * _dec(price.input_per_mtok) + Decimal(output_tokens) * _dec(price.output_per_mtok)
    return int(exact.to_integral_value(rounding=ROUND_CEILING))


def upper_bound_micros(prompt_bytes: int, max_output_tokens: int, price: Price) -> int:
    """The most a turn can cost: every prompt byte an input token (a byte-level BPE never
    yields more tokens than bytes) and the full output cap, reasoning reserve included."""
    return cost_micros(prompt_bytes, max_output_tokens, price)


def cost_usd(input_tokens: int, output_tokens: int, price: Price) -> float:
    return micros_to_usd(cost_micros(input_tokens, output_tokens, price))


def upper_bound_usd(prompt_bytes: int, max_output_tokens: int, price: Price) -> float:
    return micros_to_usd(upper_bound_micros(prompt_bytes, max_output_tokens, price))


def month_key(now: datetime) -> str:
    """The spend month of an instant, "YYYY-MM" in UTC. A naive datetime is taken as UTC."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    return now.astimezone(timezone.utc).strftime("%Y-%m")


def month_of(ts: float) -> str:
    """`month_key` of a Unix timestamp (what the clocks in this package return)."""
    return month_key(datetime.fromtimestamp(ts, timezone.utc))
