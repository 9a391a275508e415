"""The settle journal, the counter deadline, caller budgets and the durability check of `Budget`."""

from __future__ import annotations

import threading
import time

import pytest

from tests.spend.suite import MONTH, T0, FakeClock, spend_settings
from vouched.spend import Budget, CallerBudget, SettleJournal, SQLiteSpendCounters, StoreNotDurable, caller_budget


class Flaky:
    """Counters over a real SQLite file whose settles fail while `down` is set; `hang` stalls every call."""

    def __init__(self, path) -> None:
        self.real = SQLiteSpendCounters(path)
        self.down = threading.Event()
        self.hang = threading.Event()
        self.settles: list[tuple[str, int]] = []

    def _wait(self):
        while self.hang.is_set():
            time.sleep(0.01)

    def try_reserve(self, *a):
        self._wait()
        return self.real.try_reserve(*a)

    def settle(self, month, rid, actual, now):
        self._wait()
        if self.down.is_set():
            raise ConnectionError("store down")
        self.settles.append((rid, actual))
        self.real.settle(month, rid, actual, now)

    def spent(self, month, now):
        return self.real.spent(month, now)

    def close(self):
        self.real.close()


def _wait_for(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_failed_settle_is_journaled_and_retried_until_accepted(tmp_path):
    store = Flaky(tmp_path / "c.sqlite")
    journal = SettleJournal(tmp_path / "journal.sqlite", retry_s=0.05)
    budget = Budget(spend_settings(1.0, deadline_s=1.0), store, FakeClock(), journal=journal)
    r = budget.reserve(model="m", prompt_bytes=100, max_output_tokens=100)
    store.down.set()
    budget.settle(r, model="m", input_tokens=10, output_tokens=10)
    assert budget.metrics.journaled.value() == 1 and journal.pending() == [(MONTH, r.id, 180)]
    time.sleep(0.3)
    assert journal.pending()  # still down: still waiting
    store.down.clear()
    _wait_for(lambda: not journal.pending())
    assert store.spent(MONTH, T0) == (180, 0)
    journal.close()


def test_a_journal_left_by_a_crashed_process_is_drained_by_the_next(tmp_path):
    store = Flaky(tmp_path / "c.sqlite")
    rid = store.try_reserve(MONTH, 5000, 10_000, 60, T0)
    first = SettleJournal(tmp_path / "journal.sqlite")
    first.record(MONTH, rid, 1200)  # written, never retried: the process died
    first._stop.set()
    second = SettleJournal(tmp_path / "journal.sqlite", retry_s=0.05)
    Budget(spend_settings(1.0), store, FakeClock(), journal=second)  # attaching starts the retries
    _wait_for(lambda: not second.pending())
    assert store.spent(MONTH, T0) == (1200, 0)
    second.close()


def test_a_settle_replayed_twice_counts_once(tmp_path):
    store = Flaky(tmp_path / "c.sqlite")
    rid = store.try_reserve(MONTH, 5000, 10_000, 60, T0)
    journal = SettleJournal(tmp_path / "journal.sqlite")
    journal.record(MONTH, rid, 700)
    journal.record(MONTH, rid, 900)  # a later figure replaces the earlier entry
    assert journal.pending() == [(MONTH, rid, 900)]
    assert journal.drain(store.settle) == 1
    store.settle(MONTH, rid, 900, T0)  # and the store itself took it once already
    assert store.spent(MONTH, T0) == (900, 0)
    journal.close()


def test_past_the_deadline_a_reserve_refuses_and_a_late_reservation_is_released(tmp_path):
    store = Flaky(tmp_path / "c.sqlite")
    budget = Budget(spend_settings(1.0, deadline_s=0.1), store, FakeClock())
    warm = budget.reserve(model="m", prompt_bytes=100, max_output_tokens=100)  # the first reserve opens the store
    budget.settle(warm, model="m", input_tokens=0, output_tokens=0)
    store.settles.clear()
    store.hang.set()
    t = time.monotonic()
    assert budget.reserve(model="m", prompt_bytes=100, max_output_tokens=100) is None
    assert time.monotonic() - t < 0.5 and budget.metrics.refused.value("store") == 1
    store.hang.clear()  # the abandoned reserve lands after all: it is settled at 0, not charged later
    _wait_for(lambda: store.settles)
    assert store.spent(MONTH, T0 + 10_000) == (0, 0)


def test_a_callers_budget_is_held_besides_the_global_cap(tmp_path):
    store = Flaky(tmp_path / "c.sqlite")
    budget = Budget(spend_settings(1.0), store, FakeClock())
    bound = 100 * 3 + 100 * 15  # µUSD of one turn at PRICE
    token = caller_budget.set(CallerBudget("key:abc", 2.5 * bound / 1e6))
    try:
        got = [budget.reserve(model="m", prompt_bytes=100, max_output_tokens=100) for _ in range(3)]
    finally:
        caller_budget.reset(token)
    assert [r is not None for r in got] == [True, True, False]
    assert budget.metrics.refused.value("caller_cap") == 1
    assert budget.reserve(model="m", prompt_bytes=100, max_output_tokens=100) is not None  # another caller
    budget.settle(got[0], model="m", input_tokens=10, output_tokens=10)
    assert store.spent(f"{MONTH}/key:abc", T0) == (180, bound)
    assert store.spent(MONTH, T0) == (180, 2 * bound)


def test_a_store_without_persistence_is_refused_with_the_reason(tmp_path):
    class Volatile(Flaky):
        def check_durable(self):
            raise StoreNotDurable("no persistence (appendonly no, save \"\")")

    budget = Budget(spend_settings(1.0), Volatile(tmp_path / "c.sqlite"), FakeClock(), require_durable=True)
    assert budget.reserve(model="m", prompt_bytes=100, max_output_tokens=100) is None
    assert budget.metrics.refused.value("store") == 1
    with pytest.raises(StoreNotDurable, match="persistence"):
        budget.check_durable()
