"""The monthly spend cap: reserve an upper bound before a model call, settle after.

    reserve ─► decide_reserve(settled, reserved, bound, cap) inside one atomic step of the
               counter store ─► Reservation, or None (over the cap, or the store failed)
    settle  ─► the reservation's amount is replaced by the reported cost

However many requests arrive at once, the sum of open reservations and settled costs never
passes the cap: the check and the add happen in one transaction (SQLite) or one Lua script
(Redis). A reservation left open by a crashed process, or whose settle never arrived,
expires after `reservation_ttl_s` and is charged at its full bound inside the next atomic
step: the call may have been paid, so the money is never freed. A store that cannot answer
within `spend.deadline_s` refuses (fail closed): spending money we cannot count is the one
failure this part exists to prevent. A settle the store does not accept is written to the
settle journal (`vouched.spend.journal`) and retried until it is; settles are idempotent.

A caller's own monthly budget (an API key's `monthly_cap_usd`) is a second reservation in the
same store under its own key (`<month>/key:<id>`), taken first and settled with the same
figure; the request sets it with `caller_budget` (a context variable, so it follows the
request into the worker thread that reserves).
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, runtime_checkable

from vouched.errors import ConfigError
from vouched.spend.metrics import SpendMetrics
from vouched.spend.money import cost_micros, micros_to_usd, month_of, upper_bound_micros, usd_to_micros

if TYPE_CHECKING:
    from vouched.config import ModelPrice, SpendSettings
    from vouched.spend.journal import SettleJournal

log = logging.getLogger("vouched.spend")

Clock = Callable[[], float]  # Unix seconds; time.time in production, a fake in tests


@dataclass(frozen=True)
class Reservation:
    """An upper bound held against the cap until the turn is settled."""

    id: str
    amount: float  # USD reserved (the upper bound)
    month: str = ""  # "YYYY-MM" (UTC) the reservation counts against, settled there too
    amount_micros: int = 0
    scope_month: str = ""  # the caller's own budget key ("YYYY-MM/key:<id>") when it has one
    scope_id: str = ""  # the reservation held there


@dataclass(frozen=True)
class CallerBudget:
    """A caller's own monthly cap, held in addition to the global one."""

    scope: str  # e.g. "key:3f9a1c2b7d4e"
    cap_usd: float


caller_budget: contextvars.ContextVar[CallerBudget | None] = contextvars.ContextVar("vouched_caller_budget", default=None)


def scope_month(month: str, scope: str) -> str:
    return f"{month}/{scope}"


from vouched.errors import DeadlinePassed, StoreNotDurable  # noqa: E402  (drawn in the one error tree)

COLD_DEADLINE_S = 2.0  # the deadline of the first reserve, which opens the store


class DeadlineRunner:
    """Run blocking store calls on a few worker threads and wait at most `deadline_s` for each.

    A call past its deadline is abandoned (its thread finishes it, or the store's own socket
    timeout ends it) and DeadlinePassed raised, so a hung store holds no caller longer than
    the deadline and no more than `workers` threads."""

    def __init__(self, deadline_s: float, *, workers: int = 32, name: str = "vouched-counters") -> None:
        self.deadline_s = deadline_s
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)

    def call(self, fn: Callable[..., Any], *args: Any, deadline_s: float | None = None,
             on_late: Callable[[Any], None] | None = None) -> Any:
        """fn(*args) on a worker, waiting at most the deadline. `on_late(result)` runs if a call
        abandoned at its deadline completes after all (e.g. to release a late reservation)."""
        ctx = contextvars.copy_context()
        future = self._pool.submit(ctx.run, fn, *args)
        try:
            return future.result(timeout=self.deadline_s if deadline_s is None else deadline_s)
        except concurrent.futures.TimeoutError:
            if not future.cancel() and on_late is not None:
                def late(f: concurrent.futures.Future) -> None:
                    if not f.cancelled() and f.exception() is None:
                        on_late(f.result())
                future.add_done_callback(late)
            raise DeadlinePassed(f"the counter store did not answer within {self.deadline_s * 1000:.0f} ms") from None

    async def acall(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`call` for the event loop: the loop waits on the worker thread, never on the store."""
        import asyncio

        ctx = contextvars.copy_context()
        future = asyncio.get_running_loop().run_in_executor(self._pool, ctx.run, fn, *args)
        try:
            return await asyncio.wait_for(future, self.deadline_s)
        except (asyncio.TimeoutError, TimeoutError):
            raise DeadlinePassed(f"the counter store did not answer within {self.deadline_s * 1000:.0f} ms") from None

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


REFUSALS = ("cap", "caller_cap", "store")  # why a reservation was refused (Budget.reserve_or_reason)


class SpendGate(Protocol):
    """What the pipeline calls around a model call (implemented by `Budget`). A gate may also
    have `reserve_or_reason` (as `Budget` does); without it a refusal is read as the cap."""

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
        journal: SettleJournal | None = None,
        require_durable: bool = False,
    ) -> None:
        self.settings = settings
        self.counters = counters
        self.clock = clock
        self.metrics = metrics or SpendMetrics()
        self.cap_micros = usd_to_micros(settings.monthly_cap_usd)
        self.journal = journal
        self.require_durable = require_durable
        self._durable: bool | None = None if require_durable else True
        self._runner = DeadlineRunner(getattr(settings, "deadline_s", 0.1))
        self._warm = False  # the first call opens the store (a file and its schema, a connection): give it longer
        if journal is not None:
            journal.attach(self._store_settle)
        for m in models:  # fail at start, not on the first question
            self.price(m)

    def price(self, model: str) -> ModelPrice:
        try:
            return self.settings.prices[model]
        except KeyError:
            raise _missing_price(model) from None

    def check_durable(self) -> None:
        """Raise StoreNotDurable when the store would forget the month on a restart (a store that
        cannot say raises its own error; then the next reserve asks again)."""
        check = getattr(self.counters, "check_durable", None)
        if check is not None:
            check()
        self._durable = True

    def _ready(self) -> bool:
        """Has the store been found durable? Asked once (fail closed until it answers yes)."""
        if self._durable:
            return True
        if self._durable is False:
            return False
        try:
            self._runner.call(self.check_durable, deadline_s=max(self._runner.deadline_s, 1.0))
        except StoreNotDurable as exc:
            self._durable = False
            log.error("spend backend refused: %s", exc)
            return False
        except Exception as exc:
            log.warning("could not ask the spend counter store about persistence: %r", exc)
            return False
        return True

    def reserve(self, *, model: str, prompt_bytes: int, max_output_tokens: int) -> Reservation | None:
        """Hold this turn's upper bound, or None: over the cap, or the store failed or was too slow."""
        return self.reserve_or_reason(model=model, prompt_bytes=prompt_bytes, max_output_tokens=max_output_tokens)[0]

    def reserve_or_reason(self, *, model: str, prompt_bytes: int, max_output_tokens: int
                          ) -> tuple[Reservation | None, str | None]:
        """`reserve`, with why it refused: (reservation, None), or (None, one of `REFUSALS`):
        "cap" (the month's cap), "caller_cap" (the API key's own budget) or "store" (the counter
        store failed, was too slow, or would forget the month: fail closed). The pipeline tells the
        reader which: a store outage is not a spent budget."""
        bound = upper_bound_micros(prompt_bytes, max_output_tokens, self.price(model))
        now = self.clock()
        month = month_of(now)
        if bound == 0:  # a free model: nothing to hold, nothing to count
            return Reservation(id="", amount=0.0, month=month, amount_micros=0), None
        scope = caller_budget.get()
        scope_cap = usd_to_micros(scope.cap_usd) if scope is not None else None
        if not decide_reserve(0, 0, bound, self.cap_micros) or (scope_cap is not None and bound > scope_cap):
            self.metrics.refused.inc(label="cap")
            return None, "cap"
        ttl = self.settings.reservation_ttl_s
        if not self._ready():
            self.metrics.refused.inc(label="store")
            return None, "store"
        scoped = ("", "")
        deadline = None if self._warm else max(self._runner.deadline_s, COLD_DEADLINE_S)
        try:
            if scope is not None:
                smonth = scope_month(month, scope.scope)
                sid = self._runner.call(self.counters.try_reserve, smonth, bound, scope_cap, ttl, now,
                                        on_late=self._late_release(smonth), deadline_s=deadline)
                if sid is None:
                    self.metrics.refused.inc(label="caller_cap")
                    return None, "caller_cap"
                scoped = (smonth, sid)
            rid = self._runner.call(self.counters.try_reserve, month, bound, self.cap_micros, ttl, now,
                                    on_late=self._late_release(month), deadline_s=deadline)
            self._warm = True
        except Exception as exc:  # any failure of the store: refuse, as if the cap were reached
            log.warning("spend counter store failed; refusing the model call (fail closed): %r", exc)
            self.metrics.refused.inc(label="store")
            self._release(*scoped)
            return None, "store"
        if rid is None:
            self.metrics.refused.inc(label="cap")
            self._release(*scoped)
            return None, "cap"
        self.metrics.reserved.inc()
        return Reservation(id=rid, amount=micros_to_usd(bound), month=month, amount_micros=bound,
                           scope_month=scoped[0], scope_id=scoped[1]), None

    def _late_release(self, month: str) -> Callable[[Any], None]:
        """A reserve given up at its deadline that the store applied after all: no call was made
        on it, so it is settled at 0 instead of holding (and, expired, charging) its bound."""
        def release(rid: Any) -> None:
            if rid:
                self._settle_one(month, rid, 0)
        return release

    def _release(self, month: str, rid: str) -> None:
        """A caller-budget hold whose global reserve failed: no call was made, it costs nothing."""
        if rid:
            self._settle_one(month, rid, 0)

    def settle(self, reservation: Reservation, *, model: str, input_tokens: int, output_tokens: int) -> None:
        """Replace the reservation with the reported cost. Never raises for a store failure:
        it runs in the pipeline's `finally`; a settle the store does not take is journaled."""
        actual = cost_micros(input_tokens, output_tokens, self.price(model))
        if not reservation.id:
            return
        if actual > reservation.amount_micros:
            self.metrics.over_bound.inc()
            log.warning("settled cost %d µUSD exceeds the reserved bound %d µUSD (model %s)",
                        actual, reservation.amount_micros, model)
        ok = self._settle_one(reservation.month or month_of(self.clock()), reservation.id, actual)
        if reservation.scope_id:
            self._settle_one(reservation.scope_month, reservation.scope_id, actual)
        if ok:
            self.metrics.settled.inc()
            self.metrics.settled_micros.inc(actual)

    def _store_settle(self, month: str, rid: str, actual: int, now: float) -> None:
        self._runner.call(self.counters.settle, month, rid, actual, now, deadline_s=max(self._runner.deadline_s, 1.0))

    def _settle_one(self, month: str, rid: str, actual: int) -> bool:
        now = self.clock()
        try:
            self._runner.call(self.counters.settle, month, rid, actual, now)
            return True
        except Exception as exc:
            self.metrics.settle_errors.inc()
            if self.journal is None:
                log.error("spend counter store failed to settle reservation %s (%d µUSD), no journal: %r", rid, actual, exc)
                return False
            try:
                self.journal.record(month, rid, actual)
                self.metrics.journaled.inc()
                log.warning("settle of %s (%d µUSD) journaled for retry: %r", rid, actual, exc)
            except Exception as jexc:
                log.error("settle of %s (%d µUSD) failed and could not be journaled: %r / %r", rid, actual, exc, jexc)
            return False

    def status(self) -> SpendStatus:
        """This month's figures (raises if the store is down: for the CLI and health checks)."""
        now = self.clock()
        month = month_of(now)
        settled, reserved = self.counters.spent(month, now)
        return SpendStatus(month, micros_to_usd(self.cap_micros), micros_to_usd(settled), micros_to_usd(reserved))

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
        self._runner.close()
