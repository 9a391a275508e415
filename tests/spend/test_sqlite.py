import multiprocessing
import sqlite3

import pytest

from tests.spend.suite import MONTH, PRICE, T0, CountersSuite, run_together
from vouched.spend import SQLiteRateCounters, SQLiteSpendCounters, upper_bound_micros


class TestSQLiteCounters(CountersSuite):
    @pytest.fixture
    def make_counters(self, tmp_path):
        path = tmp_path / "counters.sqlite"
        made = []

        def make():
            # 200 threads on four connections queue on one file's write lock; SQLite's busy handler is not
            # fair, and on a loaded machine one connection waited past the 10 s default ("database is
            # locked", a store refusal the cap test counts). The suite's store deadline is 30 s for the
            # same reason (suite.spend_settings); the busy timeout matches it.
            pair = (SQLiteSpendCounters(path, busy_timeout_s=30.0), SQLiteRateCounters(path, busy_timeout_s=30.0))
            made.extend(pair)
            return pair

        yield make
        for c in made:
            c.close()

    @pytest.fixture
    def unreachable(self, tmp_path):
        blocker = tmp_path / "not-a-dir"
        blocker.write_text("a file where the counters' folder should be")
        return SQLiteSpendCounters(blocker / "c.sqlite"), SQLiteRateCounters(blocker / "c.sqlite")


def _reserve_in_child(path, amount, cap, start, out):
    """One process of the cross-process test: 50 threads reserving at once."""
    counters = SQLiteSpendCounters(path)
    start.wait()
    ids = run_together(50, lambda i: counters.try_reserve(MONTH, amount, cap, 600, T0))
    out.put([x for x in ids if x])


def test_200_reservations_from_4_processes_on_one_file_never_overshoot(tmp_path):
    path = tmp_path / "counters.sqlite"
    SQLiteSpendCounters(path).spent(MONTH, T0)  # create the file and switch it to WAL once
    amount = upper_bound_micros(3000, 1024, PRICE)
    ctx = multiprocessing.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_reserve_in_child, args=(path, amount, 50 * amount, start, out)) for _ in range(4)]
    for p in procs:
        p.start()
    start.set()
    granted = [rid for _ in procs for rid in out.get(timeout=120)]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert len(granted) == 50 and len(set(granted)) == 50
    assert SQLiteSpendCounters(path).spent(MONTH, T0) == (0, 50 * amount)


def test_the_file_is_wal_with_a_totals_view(tmp_path):
    path = tmp_path / "c.sqlite"
    c = SQLiteSpendCounters(path)
    rid = c.try_reserve(MONTH, 700, 1000, 600, T0)
    c.try_reserve(MONTH, 200, 1000, 600, T0)
    c.settle(MONTH, rid, 300, T0)
    c.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT month, settled_micros, reserved_micros FROM spend_totals").fetchall() == [(MONTH, 300, 200)]
    assert SQLiteSpendCounters(path).spent(MONTH, T0) == (300, 200)  # a new handle, same figures


def test_a_failed_transaction_leaves_the_handle_usable(tmp_path):
    c = SQLiteSpendCounters(tmp_path / "c.sqlite")
    with pytest.raises(RuntimeError):
        with c.transaction():
            raise RuntimeError("boom")
    assert c.try_reserve(MONTH, 1, 10, 600, T0)


def test_old_rate_hits_are_pruned(tmp_path):
    from vouched.spend import Limit

    r = SQLiteRateCounters(tmp_path / "c.sqlite")
    limits = (Limit("minute", 5, 60),)
    for i in range(3):
        r.hit(f"k{i}", limits, T0)
    r.hit("other", limits, T0 + 601)  # past PRUNE_EVERY_S: everyone's old hits go
    with r.transaction() as db:
        assert db.execute("SELECT key FROM rate_hits").fetchall() == [("other",)]


def test_many_handles_opening_a_new_file_at_once_all_switch_it_to_wal(tmp_path):
    # Opening a new file switches it to WAL. A full-suite run under load once failed the 200-reservation test with
    # "database is locked" from that PRAGMA; this race has not been reproduced on a quiet machine (with or without the
    # retry), so it checks the property, and the next test checks the retry itself.
    import threading

    for round_ in range(15):
        path = tmp_path / f"c{round_}.sqlite"
        handles = [SQLiteSpendCounters(path, busy_timeout_s=30.0) for _ in range(12)]
        start = threading.Barrier(len(handles))
        errors: list[BaseException] = []

        def go(c):
            start.wait()
            try:
                c.spent(MONTH, T0)
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=go, args=(c,)) for c in handles]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[:1]


class _LockedFor:
    """A connection whose journal-mode switch answers "database is locked" ``n`` times, then succeeds."""

    def __init__(self, n):
        self.n, self.calls = n, 0

    def execute(self, sql):
        self.calls += 1
        if sql.startswith("PRAGMA journal_mode") and self.calls <= self.n:
            raise sqlite3.OperationalError("database is locked")


def test_the_wal_switch_waits_out_a_lock_within_the_busy_timeout(tmp_path):
    from vouched.spend.sqlite import _SQLiteFile

    f = _SQLiteFile(tmp_path / "c.sqlite", busy_timeout_s=5.0)
    conn = _LockedFor(3)
    f._wal(conn)  # three refusals, then the switch
    assert conn.calls == 4
    stuck = _SQLiteFile(tmp_path / "d.sqlite", busy_timeout_s=0.05)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        stuck._wal(_LockedFor(10**6))  # a lock that outlasts the busy timeout still fails, as before
