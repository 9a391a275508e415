"""The monthly spend cap: reserve an upper bound before a model call, settle after.

    reserve ─► decide_reserve(settled, reserved, bound, cap) inside one atomic step of the
               counter store ─► Reservation, or None (over the cap, or the store failed)
    settle  ─► the reservation's amount is replaced by the reported cost

However many requests arrive at once, the sum of open reservations and settled costs never
passes the cap: the check and the add happen in one transaction (SQLite) or one Lua script
(Redis). A reservation left open by a crashed process expires after `reservation_ttl_s` and
is reclaimed inside the next atomic step. A store that cannot answer refuses (fail closed):
spending money we cannot count is the one failure this part exists to prevent.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Protocol, runtime_checkable

from vouched.errors import ConfigError
from vouched.spend.metrics import SpendMetrics
from vouched.spend.money import cost_micros, micros_to_usd, month_of, upper_bound_micros, usd_to_micros

if TYPE_CHECKING:
    from vouched.config import ModelPrice, SpendSettings

log = logging.getLogger("vouched.spend")

Clock = Callable[[], float]  # Unix seconds; time.time in production, a fake in tests


@dataclass(frozen=True)
class Reservation:
    """An upper bound held against the cap until the turn is settled."""

    id: str
    amount: float  # USD reserved (the upper bound)
    month: str = ""  # "YYYY-MM" (UTC) the reservation counts against, settled there too
    amount_micros: int = 0


class SpendGate(Protocol):
    """What the pipeline calls around a model call (implemented by `Budget`)."""

    def reserve(self, *, model: str, prompt_bytes: int, max_output_tokens: int) -> Reservation | None: ...

    def settle(self, reservation: Reservation, *, model: str, input_tokens: int, output_tokens: int) -> None: ...


@runtime_checkable
class Counters(Protocol):
    """A spend counter store. Every method is one atomic step that first reclaims expired,
    unsettled reservations. Amounts are integer micro-dollars; `now` is Unix seconds."""

    def try_reserve(self, month: str, amount_micros: int, cap_micros: int, ttl_s: float, now: float) -> str | None:
        """Add a reservation expiring at now + ttl_s if `decide_reserve` admits it; its id, or None."""
        ...

    def settle(self, month: str, reservation_id: str, actual_micros: int, now: float) -> None:
        """Replace the reservation with the actual cost (idempotent; counts even if it had expired)."""
        ...

    def spent(self, month: str, now: float) -> tuple[int, int]:
        """(settled, reserved) micro-dollars of the month; expired reservations excluded."""
        ...

    def close(self) -> None: ...


def decide_reserve(settled: int, reserved: int, amount: int, cap: int) -> bool:
    """May a reservation of `amount` be added? Only if everything held stays within the cap."""
    return amount >= 0 and settled + reserved + amount <= cap


@dataclass(frozen=True)
class SpendStatus:
    month: str
    cap_usd: float
    settled_usd: float
    reserved_usd: float


def _missing_price(model: str) -> ConfigError:
    return ConfigError(
        f"spend.prices.{model}: no price for model {model!r}; a paid model needs one, e.g.\n"
        f'  [spend.prices."{model}"]\n  input_per_mtok = 0.15\n  output_per_mtok = 0.60\n'
        "(USD per million tokens; use 0 for a free local model)"
    )


class Budget:
    """The pipeline's `SpendGate` over a `Counters` store."""

    def __init__(
        self,
        settings: SpendSettings,
        counters: Counters,
        clock: Clock = time.time,
        metrics: SpendMetrics | None = None,
        *,
        models: Iterable[str] = (),
    ) -> None:
        self.settings = settings
        self.counters = counters
        self.clock = clock
        self.metrics = metrics or SpendMetrics()
        self.cap_micros = usd_to_micros(settings.monthly_cap_usd)
        for m in models:  # fail at start, not on the first question
            self.price(m)

    def price(self, model: str) -> ModelPrice:
        try:
            return self.settings.prices[model]
        except KeyError:
            raise _missing_price(model) from None

    def reserve(self, *, model: str, prompt_bytes: int, max_output_tokens: int) -> Reservation | None:
        """Hold this turn's upper bound, or None: over the cap, or the store failed."""
        bound = upper_bound_micros(prompt_bytes, max_output_tokens, self.price(model))
        now = self.clock()
        month = month_of(now)
        if bound == 0:  # a free model: nothing to hold, nothing to count
            return Reservation(id="", amount=0.0, month=month, amount_micros=0)
        if not decide_reserve(0, 0, bound, self.cap_micros):
            self.metrics.refused.inc(label="cap")
            return None
        try:
            rid = self.counters.try_reserve(month, bound, self.cap_micros, self.settings.reservation_ttl_s, now)
        except Exception as exc:  # any failure of the store: refuse, as if the cap were reached
            log.warning("spend counter store failed; refusing the model call (fail closed): %r", exc)
            self.metrics.refused.inc(label="store")
            return None
        if rid is None:
            self.metrics.refused.inc(label="cap")
            return None
        self.metrics.reserved.inc()
        return Reservation(id=rid, amount=micros_to_usd(bound), month=month, amount_micros=bound)

    def settle(self, reservation: Reservation, *, model: str, input_tokens: int, output_tokens: int) -> None:
        """Replace the reservation with the reported cost. Never raises for a store failure:
        it runs in the pipeline's `finally`; the reservation then expires after its TTL."""
        actual = cost_micros(input_tokens, output_tokens, self.price(model))
        if not reservation.id:
            return
        if actual > reservation.amount_micros:
            self.metrics.over_bound.inc()
            log.warning("settled cost %d µUSD exceeds the reserved bound %d µUSD (model %s)",
                        actual, reservation.amount_micros, model)
        now = self.clock()
        try:
            self.counters.settle(reservation.month or month_of(now), reservation.id, actual, now)
        except Exception as exc:
            log.error("spend counter store failed to settle reservation %s (%d µUSD): %r",
                      reservation.id, actual, exc)
            self.metrics.settle_errors.inc()
            return
        self.metrics.settled.inc()
        self.metrics.settled_micros.inc(actual)

    def status(self) -> SpendStatus:
        """This month's figures (raises if the store is down: for the CLI and health checks)."""
        now = self.clock()
        month = month_of(now)
        settled, reserved = self.counters.spent(month, now)
        return SpendStatus(month, micros_to_usd(self.cap_micros), micros_to_usd(settled), micros_to_usd(reserved))
