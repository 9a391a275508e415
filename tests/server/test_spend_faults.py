"""The cap holds through faults, on every spend backend, against real `vouched serve` processes.

Two replicas share one counter store (SQLite file, Redis, PostgreSQL) and a paced
OpenAI-compatible fake model whose every answer reports the full reserved output, so each
paid call costs exactly its bound and the cap admits at most ADMIT calls. Wave 1 sends
REQUESTS at once; while its streams are open a fault strikes:

  (a) store_killed    the counter store is killed (SIGKILL) and restarted    (Redis)
  (b) replica_killed  one replica is killed with kill -9 and restarted       (all)
  (c) settles_fail    settles cannot reach the store for OUTAGE_S seconds:
                      Redis stopped (SIGSTOP), SQLite and PostgreSQL locked by a stalled writer

Then every reservation is left to expire (short TTL), wave 2 sends REQUESTS more, and after
the settle journal has drained: total paid calls (requests the model received) <= ADMIT, and
the store's settled money covers every paid call. Before issue 16 an expired reservation
was freed and a failed settle dropped, and wave 2 got paid calls the cap had already spent.

OUTAGE_S is VOUCHED_FAULT_OUTAGE_S (default 6 in CI; the issue's 30 s run by hand).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.llm.wire import Reply, WireServer, openai_events
from tests.server.tenants import free_port, start_serve, stop, wait_healthy, write_site
from tests.spend.conftest import RedisServer
from vouched.config import load_config
from vouched.engine import Engine
from vouched.spend.money import month_of

REQUESTS = 200  # wave 1, at once
WAVE2 = 60  # after every hold expired: the cap is spent, none may be paid
ADMIT = 50
MAX_OUT = 100
OUT_PER_MTOK = 10.0
CALL_MICROS = MAX_OUT * 10  # 100 tokens at $10 / 1M tokens
TTL_S = 4.0
OUTAGE_S = float(os.environ.get("VOUCHED_FAULT_OUTAGE_S", "6"))
QUESTION = "Who inspects the cold room?"
ANSWER = "The cold room at the harbor depot is inspected every morning by Tamsin Overgaard [1]."


def _spend_section(backend: str, store: str, journal: Path) -> str:
    lines = [f'backend = "{backend}"', f"monthly_cap_usd = {ADMIT * CALL_MICROS / 1e6}",
             f"prices = {{ fake-paid = {{ input_per_mtok = 0.0, output_per_mtok = {OUT_PER_MTOK} }} }}",
             f"reservation_ttl_s = {TTL_S}", "journal_retry_s = 0.5", f'journal_path = "{journal}"']
    if backend == "redis":
        lines.append(f'redis_url = "{store}"')
    elif backend == "sqlite":
        lines.append(f'path = "{store}"')
    return "\n[spend]\n" + "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def model():
    usage = {"prompt_tokens": 10, "completion_tokens": MAX_OUT, "total_tokens": 10 + MAX_OUT}
    parts = openai_events([ANSWER], usage=usage)
    with WireServer([Reply(parts=parts, delay=0.25, headers={"connection": "close"}) for _ in range(40 * REQUESTS)]) as server:
        yield server


class Store:
    """The counter store of one scenario: its config text, its figures, its faults."""

    def __init__(self, backend: str, tmp: Path, postgres_dsn: str | None) -> None:
        self.backend = backend
        self.tmp = tmp
        self.redis = None
        self.dsn = postgres_dsn
        self.schema = "faults_" + uuid.uuid4().hex[:8]
        if backend == "redis":
            self.redis = RedisServer(tmp, persistent=True).start()
            self.location = self.redis.url
        elif backend == "sqlite":
            self.location = str(tmp / "counters.sqlite")
        else:
            self.location = ""

    def config_text(self, journal: Path) -> str:
        return _spend_section(self.backend, self.location, journal)

    def store_lines(self, toml: Path) -> None:
        """PostgreSQL counters live in the [store] database (store.dsn, store.pg_schema)."""
        if self.backend == "postgres":
            text = toml.read_text().replace('[store]\n', f'[store]\ndsn = "{self.dsn}"\npg_schema = "{self.schema}"\n', 1)
            toml.write_text(text)

    def spent(self) -> tuple[int, int]:
        now = time.time()
        if self.backend == "redis":
            from vouched.spend.redis import RedisSpendCounters, connect

            c = RedisSpendCounters(connect(self.location))
        elif self.backend == "sqlite":
            from vouched.spend.sqlite import SQLiteSpendCounters

            c = SQLiteSpendCounters(self.location)
        else:
            from vouched.spend.postgres import PostgresSpendCounters

            c = PostgresSpendCounters(self.dsn, schema=self.schema)
        try:
            return c.spent(month_of(now), now)
        finally:
            c.close()

    def settles_fail(self, seconds: float) -> None:
        """Make the store unreachable for settles (and everything else) for `seconds`."""
        if self.backend == "redis":
            self.redis.pause()
            time.sleep(seconds)
            self.redis.resume()
        elif self.backend == "sqlite":  # a stalled writer holds the file's write lock
            conn = sqlite3.connect(self.location, isolation_level=None)
            conn.execute("BEGIN EXCLUSIVE")
            time.sleep(seconds)
            conn.execute("ROLLBACK")
            conn.close()
        else:  # a stalled transaction holds the month table
            import psycopg

            with psycopg.connect(self.dsn, autocommit=False) as conn:
                conn.execute(f"LOCK TABLE {self.schema}.spend_months IN ACCESS EXCLUSIVE MODE")
                time.sleep(seconds)
                conn.rollback()

    def kill_and_restart(self) -> None:
        self.redis.kill()
        time.sleep(0.5)
        self.redis.restart()

    def close(self) -> None:
        if self.redis is not None:
            self.redis.stop()


def _wave(urls: list[str], n: int) -> list[int]:
    def one(i: int) -> int:
        try:
            r = httpx.post(f"{urls[i % len(urls)]}/v1/chat/completions",
                           json={"messages": [{"role": "user", "content": QUESTION}]}, timeout=120)
            return r.status_code
        except httpx.HTTPError:
            return -1  # a replica killed under the request

    with ThreadPoolExecutor(max_workers=50) as pool:
        return list(pool.map(one, range(n)))


def _calls(model: WireServer, since: int) -> int:
    return sum(1 for s in model.seen[since:] if s.path.endswith("/chat/completions"))


def _wait_streams_open(model: WireServer, since: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while _calls(model, since) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)


CASES = [("redis", "store_killed"), ("redis", "replica_killed"), ("redis", "settles_fail"),
         ("sqlite", "replica_killed"), ("sqlite", "settles_fail"),
         ("postgres", "replica_killed"), ("postgres", "settles_fail")]


@pytest.mark.parametrize("backend,fault", CASES, ids=[f"{b}-{f}" for b, f in CASES])
def test_cap_holds_through_the_fault(backend, fault, model, tmp_path, request):
    dsn = request.getfixturevalue("postgres_dsn") if backend == "postgres" else None
    if dsn:
        os.environ.pop("VOUCHED_PG_DSN", None)
    store = Store(backend, tmp_path, dsn)
    procs: list = []
    try:
        extra = store.config_text(tmp_path / "journal-REPLICA.sqlite")
        toml = write_site(tmp_path, extra=f'\n[answer]\nprovider = "openai"\nmodel = "fake-paid"\n'
                                            f'base_url = "{model.url}/v1"\nmax_output_tokens = {MAX_OUT}\n' + extra)
        store.store_lines(toml)
        Engine(load_config(toml)).ingest()
        configs = []
        for i in range(2):  # one journal per replica, beside it
            p = tmp_path / f"replica{i}.toml"
            p.write_text(toml.read_text().replace("journal-REPLICA", f"journal-{i}"))
            configs.append(p)
        ports = [free_port() for _ in configs]
        for cfg, port in zip(configs, ports):
            procs.append(start_serve(cfg, port))
        urls = [u for _, u in procs]
        for proc, url in procs:
            wait_healthy(url, proc)
        since = len(model.seen)
        t0 = time.monotonic()


        def strike() -> None:
            _wait_streams_open(model, since)
            if fault == "store_killed":
                store.kill_and_restart()
            elif fault == "replica_killed":
                proc, url = procs[1]
                proc.kill()  # kill -9
                proc.wait()
                procs[1] = start_serve(configs[1], ports[1])
                wait_healthy(procs[1][1], procs[1][0])
            else:
                store.settles_fail(OUTAGE_S)

        fault_thread = threading.Thread(target=strike)
        fault_thread.start()
        wave1 = _wave(urls, REQUESTS)
        t1 = time.monotonic()
        fault_thread.join(120)
        time.sleep(TTL_S + 1)  # every reservation of wave 1 has expired (charged, never freed)
        t2 = time.monotonic()
        wave2 = _wave(urls, WAVE2)
        t3 = time.monotonic()
        paid = _calls(model, since)
        deadline = time.monotonic() + 30  # the journals drain once the store answers
        while time.monotonic() < deadline:
            time.sleep(TTL_S / 2)
            settled, held = store.spent()
            if held == 0 and settled >= paid * CALL_MICROS:
                break
        settled, held = store.spent()
        print(f"{backend}/{fault}: paid {paid} (wave 1 {_calls(model, since) - 0}), settled {settled} µUSD, held {held}, "
              f"statuses {sorted(set(wave1 + wave2))}, wave 1 {t1 - t0:.1f} s, fault end {t2 - t0:.1f} s, "
              f"wave 2 {t3 - t2:.1f} s, total {time.monotonic() - t0:.1f} s")
        assert paid <= ADMIT, (paid, wave1.count(200), wave2.count(200))
        assert held == 0
        assert paid * CALL_MICROS <= settled <= ADMIT * CALL_MICROS, (paid, settled)
        assert wave2.count(200) == WAVE2
        if fault == "settles_fail":  # the settles that failed went through a replica's journal
            assert any((tmp_path / f"journal-{i}.sqlite").exists() for i in range(2))  # the replicas still answer (limit notices) after the fault
    finally:
        for proc, _ in procs:
            stop(proc)
        store.close()
