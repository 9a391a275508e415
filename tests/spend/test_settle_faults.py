"""Settles that fail for a real reason, not a lock holder: the SQLite counters file on a full
disk or made read-only, and (in tests/server/test_pg_faults.py) PostgreSQL sessions killed
between reserve and settle. Each failed settle goes to the journal; when the store takes
writes again the journal replays it exactly once (the month's settled total is the reported
cost of each turn, never its bound, never twice) and no hold is left.

The disk is a 1 MiB tmpfs mounted for the test (root with CAP_SYS_ADMIN, as the CI machine
and this one run the suite); "read-only" is the file flag no process may write through,
root included (chattr +i). The suite runs as root (scripts/test installs Debian packages), so
without the privilege the test fails and says which capability is missing: a fault test that
skips proves nothing.
"""

from __future__ import annotations

import errno
import subprocess
import time
from pathlib import Path

import pytest

from tests.spend.suite import MONTH, T0, FakeClock, spend_settings
from vouched.spend import (
    Budget,
    SettleJournal,
    SQLiteSpendCounters,
    cost_micros,
    upper_bound_micros,
)

TURNS = 5
PROMPT_BYTES, MAX_OUT, IN_TOK, OUT_TOK = 400, 200, 120, 60


def _privileged(what: str, cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        msg = f"{what} needs root with CAP_SYS_ADMIN / CAP_LINUX_IMMUTABLE: {' '.join(cmd)}: {r.stderr.strip()}"
        pytest.fail(msg, pytrace=False)


@pytest.fixture
def tiny_disk(tmp_path):
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    _privileged("a full-disk test", ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(mnt)])
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)


def _fill(disk: Path) -> Path:
    """Write a file until the disk is full; the file (delete it to free the disk)."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        block = b"\0" * 4096
        try:
            while True:
                f.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler


def _wait_for(cond, timeout=20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _turns(budget: Budget) -> list:
    held = [budget.reserve(model="m", prompt_bytes=PROMPT_BYTES, max_output_tokens=MAX_OUT) for _ in range(TURNS)]
    assert all(held)
    return held


def _check_replayed_once(store: SQLiteSpendCounters, journal: SettleJournal, turns: list) -> None:
    from tests.spend.suite import PRICE

    actual, bound = cost_micros(IN_TOK, OUT_TOK, PRICE), upper_bound_micros(PROMPT_BYTES, MAX_OUT, PRICE)
    assert actual < bound  # a settled turn is told from one charged at its bound
    _wait_for(lambda: not journal.pending())
    assert store.spent(MONTH, T0) == (TURNS * actual, 0)
    # The same entries replayed again (a retry whose reply was lost, a second process on the file) count once.
    for month, rid, micros in [(MONTH, r.id, actual) for r in turns]:
        journal.record(month, rid, micros)
    _wait_for(lambda: not journal.pending())
    assert store.spent(MONTH, T0) == (TURNS * actual, 0)
    assert store.spent(MONTH, T0 + 10_000) == (TURNS * actual, 0)  # nothing left to expire and be charged


def _setup(tmp_path: Path, counters_path: Path):
    store = SQLiteSpendCounters(counters_path)
    journal = SettleJournal(tmp_path / "journal.sqlite", retry_s=0.05)  # on the machine's own disk
    budget = Budget(spend_settings(10.0, deadline_s=2.0), store, FakeClock(), journal=journal)
    return store, journal, budget


def test_settles_on_a_full_disk_are_journaled_and_replayed_once(tmp_path, tiny_disk):
    store, journal, budget = _setup(tmp_path, tiny_disk / "counters.sqlite")
    try:
        turns = _turns(budget)
        filler = _fill(tiny_disk)
        for r in turns:
            budget.settle(r, model="m", input_tokens=IN_TOK, output_tokens=OUT_TOK)
        assert budget.metrics.settle_errors.value() == TURNS and budget.metrics.journaled.value() == TURNS
        assert len(journal.pending()) == TURNS
        # a reserve on the full disk refuses (fail closed), it does not pass uncounted
        assert budget.reserve(model="m", prompt_bytes=PROMPT_BYTES, max_output_tokens=MAX_OUT) is None
        assert budget.metrics.refused.value("store") == 1
        time.sleep(0.3)  # retries run and fail: still waiting, nothing lost
        assert len(journal.pending()) == TURNS
        filler.unlink()  # the disk has room again
        _check_replayed_once(store, journal, turns)
    finally:
        journal.close()
        store.close()


def test_settles_on_a_read_only_file_are_journaled_and_replayed_once(tmp_path):
    store, journal, budget = _setup(tmp_path, tmp_path / "counters" / "counters.sqlite")
    files = []
    try:
        turns = _turns(budget)
        # the file and its -wal (not the -shm index: SQLite has it mapped, and a write to a mapped
        # page of a file made immutable under it is a SIGBUS, not an error to handle)
        files = [p for p in (tmp_path / "counters").iterdir() if not p.name.endswith("-shm")]
        for p in files:
            _privileged("a read-only-file test", ["chattr", "+i", str(p)])
        for r in turns:
            budget.settle(r, model="m", input_tokens=IN_TOK, output_tokens=OUT_TOK)
        assert budget.metrics.journaled.value() == TURNS and len(journal.pending()) == TURNS
        time.sleep(0.3)
        assert len(journal.pending()) == TURNS
        for p in files:
            subprocess.run(["chattr", "-i", str(p)], check=True)
        files = []
        _check_replayed_once(store, journal, turns)
    finally:
        for p in files:
            subprocess.run(["chattr", "-i", str(p)], capture_output=True, check=False)
        journal.close()
        store.close()
