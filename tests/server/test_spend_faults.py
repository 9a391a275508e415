"""The cap holds through faults, on every spend backend, against real `vouched serve` processes.

Two replicas share one counter store (SQLite file, Redis, PostgreSQL) and an OpenAI-compatible
fake model whose every answer reports the full reserved output, so each paid call costs
exactly its bound and the cap admits at most ADMIT calls. The model holds every stream open
before its last part until the fault has struck, so the fault always finds streams reserved
and not yet settled. Wave 1 sends REQUESTS at once; once streams are open a fault strikes:

  (a) store_killed    the counter store is killed (SIGKILL) while streams are open; they finish
                      with it dead (their settles go to the journals); it is restarted
                      (Redis; PostgreSQL: the postmaster and every backend at once)
  (b) replica_killed  one replica is killed with kill -9 with its streams open, and restarted (all)
  (c) settles_fail    settles cannot reach the store for OUTAGE_S seconds while the streams
                      finish: Redis stopped (SIGSTOP), SQLite and PostgreSQL locked by a
                      stalled writer

Then every reservation is left to expire (short TTL), wave 2 sends WAVE2 more, and after
the settle journals have drained: total paid calls (requests the model received) <= ADMIT,
no hold is left, and the store's settled money covers every paid call. Before issue 16 an
expired reservation was freed and a failed settle dropped, and wave 2 got paid calls the cap
had already spent.

One store and one pair of replicas serve every fault of a backend (module-scoped, reset
between faults: the counters emptied, the journals drained), so a case pays for its fault,
not for starting processes.

OUTAGE_S is VOUCHED_FAULT_OUTAGE_S: by default the issue's 30 s under CI (CI set), 6 s elsewhere.
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
from tests.spend.conftest import PostgresServer, RedisServer
from vouched.config import load_config
from vouched.engine import Engine
from vouched.spend.money import month_of

REQUESTS = 200  # wave 1, at once
WAVE2 = 60  # after every hold expired: more than the cap admits, so wave 2 spends whatever wave 1
# left (under CI's load the fault can strike with only a few streams reserved: wave 1 paid 19, a
# wave 2 of 30 paid all 30, and the cap was never reached: "paid 49, settled 49,000, held 0")
ADMIT = 50
MAX_OUT = 100
OUT_PER_MTOK = 10.0
CALL_MICROS = MAX_OUT * 10  # 100 tokens at $10 / 1M tokens
TTL_S = 2.0
OUTAGE_S = float(os.environ.get("VOUCHED_FAULT_OUTAGE_S", "30" if os.environ.get("CI") else "6"))
DEADLINE_S = 1.0
OPEN_AT_STRIKE = 5  # streams reserved and held open when the fault strikes
QUESTION = "Who inspects the cold room?"
ANSWER = "The cold room at the harbor depot is inspected every morning by Tamsin Overgaard [1]."
RELEASE = threading.Event()  # cleared: the model holds every stream before its last part


def _spend_section(backend: str, store: str, journal: Path) -> str:
    lines = [f'backend = "{backend}"', f"monthly_cap_usd = {ADMIT * CALL_MICROS / 1e6}",
             f"prices = {{ fake-paid = {{ input_per_mtok = 0.0, output_per_mtok = {OUT_PER_MTOK} }} }}",
             f"reservation_ttl_s = {TTL_S}", "journal_retry_s = 0.2", f'journal_path = "{journal}"',
             # 50 reserves at once queue on one month's lock; on a loaded machine many would pass the
             # default 0.1 s deadline and be refused (fail closed), and the cap would never be
             # reached. This test is about the cap; the deadline has its own (test_redis_pause).
             f"deadline_s = {DEADLINE_S}"]
    if backend == "redis":
        lines.append(f'redis_url = "{store}"')
    elif backend == "sqlite":
        lines.append(f'path = "{store}"')
    return "\n[spend]\n" + "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def model():
    usage = {"prompt_tokens": 10, "completion_tokens": MAX_OUT, "total_tokens": 10 + MAX_OUT}
    parts = openai_events([ANSWER], usage=usage)
    RELEASE.set()
    replies = [Reply(parts=parts, hold=RELEASE, headers={"connection": "close"}) for _ in range(12 * (REQUESTS + WAVE2))]
    with WireServer(replies) as server:
        yield server
    RELEASE.set()


class Store:
    """The counter store of one backend: its config text, its figures, its faults."""

    def __init__(self, backend: str, tmp: Path) -> None:
        self.backend = backend
        self.tmp = tmp
        self.redis = None
        self.pg = None
        self.schema = "faults_" + uuid.uuid4().hex[:8]
        self._held = None
        if backend == "redis":
            self.redis = RedisServer(tmp, persistent=True).start()
            self.location = self.redis.url
        elif backend == "sqlite":
            self.location = str(tmp / "counters.sqlite")
        else:  # a private server: one of the faults kills it
            self.pg = PostgresServer().start()
            self.location = ""

    def config_text(self, journal: Path) -> str:
        return _spend_section(self.backend, self.location, journal)

    def store_lines(self, toml: Path) -> None:
        """PostgreSQL counters live in the [store] database (store.dsn, store.pg_schema)."""
        if self.backend == "postgres":
            text = toml.read_text().replace('[store]\n', f'[store]\ndsn = "{self.pg.dsn}"\npg_schema = "{self.schema}"\n', 1)
            toml.write_text(text)

    def _counters(self):
        if self.backend == "redis":
            from vouched.spend.redis import RedisSpendCounters, connect

            return RedisSpendCounters(connect(self.location))
        if self.backend == "sqlite":
            from vouched.spend.sqlite import SQLiteSpendCounters

            return SQLiteSpendCounters(self.location)
        from vouched.spend.postgres import PostgresSpendCounters

        return PostgresSpendCounters(self.pg.dsn, schema=self.schema)

    def spent(self) -> tuple[int, int]:
        now = time.time()
        c = self._counters()
        try:
            return c.spent(month_of(now), now)
        finally:
            c.close()

    def reset(self) -> None:
        """Every counter emptied: the next fault starts from a fresh month."""
        if self.backend == "redis":
            from vouched.spend.redis import connect

            connect(self.location).flushall()
        elif self.backend == "sqlite":
            if not Path(self.location).exists():
                return  # opened by the first reserve
            with sqlite3.connect(self.location, timeout=30, isolation_level=None) as conn:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("DELETE FROM spend_reservations")
                conn.execute("DELETE FROM rate_hits")
                conn.execute("COMMIT")
        else:
            import psycopg

            with psycopg.connect(self.pg.dsn, autocommit=True) as conn:
                if conn.execute("SELECT to_regclass(%s)", (f"{self.schema}.spend_months",)).fetchone()[0] is None:
                    return  # created by the first reserve
                with conn.transaction():
                    for table in ("spend_reservations", "spend_months", "rate_hits"):
                        conn.execute(f"DELETE FROM {self.schema}.{table}")
        assert self.spent() == (0, 0)

    # -- faults ------------------------------------------------------------------------------
    def fail_settles(self) -> None:
        """Make the store unreachable for settles (and everything else) until `settles_back`."""
        if self.backend == "redis":
            self.redis.pause()
        elif self.backend == "sqlite":  # a stalled writer holds the file's write lock
            self._held = sqlite3.connect(self.location, isolation_level=None)
            self._held.execute("BEGIN EXCLUSIVE")
        else:  # a stalled transaction holds the month table
            import psycopg

            self._held = psycopg.connect(self.pg.dsn, autocommit=False)
            self._held.execute(f"LOCK TABLE {self.schema}.spend_months IN ACCESS EXCLUSIVE MODE")

    def settles_back(self) -> None:
        if self.backend == "redis":
            self.redis.resume()
        elif self._held is not None:
            self._held.rollback()
            self._held.close()
            self._held = None

    def kill(self) -> None:
        (self.redis or self.pg).kill()

    def restart(self) -> None:
        (self.redis or self.pg).restart()

    def close(self) -> None:
        try:
            self.settles_back()
        finally:
            if self.redis is not None:
                self.redis.stop()
            if self.pg is not None:
                self.pg.stop()


class Rig:
    """One backend's store and two replicas (each with its own settle journal beside it)."""

    def __init__(self, backend: str, tmp: Path, model: WireServer) -> None:
        self.store = Store(backend, tmp)
        self.tmp = tmp
        self.procs: list = []
        try:
            self._start(tmp, model)
        except BaseException:  # (an interrupted setup leaves no server behind)
            self.close()
            raise

    def _start(self, tmp: Path, model: WireServer) -> None:
        extra = self.store.config_text(tmp / "journal-REPLICA.sqlite")
        toml = write_site(tmp, extra=f'\n[answer]\nprovider = "openai"\nmodel = "fake-paid"\n'
                                     f'base_url = "{model.url}/v1"\nmax_output_tokens = {MAX_OUT}\n' + extra)
        self.store.store_lines(toml)
        Engine(load_config(toml)).ingest()
        self.configs = []
        for i in range(2):  # one journal per replica, beside it
            p = tmp / f"replica{i}.toml"
            p.write_text(toml.read_text().replace("journal-REPLICA", f"journal-{i}"))
            self.configs.append(p)
        self.env = {k: v for k, v in os.environ.items() if k != "VOUCHED_PG_DSN"}
        self.ports = [free_port() for _ in self.configs]
        for cfg, port in zip(self.configs, self.ports):
            self.procs.append(start_serve(cfg, port, env=self.env))
        for proc, url in self.procs:
            wait_healthy(url, proc)

    @property
    def urls(self) -> list[str]:
        return [u for _, u in self.procs]

    def pending(self) -> int:
        """Settles waiting in the replicas' journals."""
        n = 0
        for i in range(2):
            path = self.tmp / f"journal-{i}.sqlite"
            if path.exists():
                with sqlite3.connect(path, timeout=10) as conn:
                    try:
                        n += conn.execute("SELECT count(*) FROM pending_settles").fetchone()[0]
                    except sqlite3.OperationalError:  # the replica is creating the file this moment
                        pass
        return n

    def kill_replica(self) -> None:
        proc, _ = self.procs[1]
        proc.kill()  # kill -9
        proc.wait()

    def restart_replica(self) -> None:
        self.procs[1] = start_serve(self.configs[1], self.ports[1], env=self.env)
        wait_healthy(self.procs[1][1], self.procs[1][0])

    def close(self) -> None:
        for proc, _ in self.procs:
            stop(proc)
        self.store.close()


@pytest.fixture(scope="module")
def rigs(model, tmp_path_factory):
    """rig(backend): that backend's Rig, built on first use; the previous backend's is closed
    then (CASES are grouped by backend), the last one at the end of the module."""
    current: dict[str, Rig] = {}

    def rig(backend: str) -> Rig:
        if backend not in current:
            for old in current.values():
                old.close()
            current.clear()
            current[backend] = Rig(backend, tmp_path_factory.mktemp(f"faults-{backend}"), model)
        return current[backend]

    try:
        yield rig
    finally:
        RELEASE.set()
        for r in current.values():
            r.close()


def _wave(urls: list[str], n: int) -> list[int]:
    # One client for the wave (building one per request cost the test more CPU than the
    # replicas spent answering); a connection to a killed replica fails like a new one would.
    limits = httpx.Limits(max_connections=50, max_keepalive_connections=0)
    with httpx.Client(timeout=120, limits=limits) as client:
        def one(i: int) -> int:
            try:
                r = client.post(f"{urls[i % len(urls)]}/v1/chat/completions",
                                json={"messages": [{"role": "user", "content": QUESTION}]})
                return r.status_code
            except httpx.HTTPError:
                return -1  # a replica killed under the request

        with ThreadPoolExecutor(max_workers=50) as pool:
            return list(pool.map(one, range(n)))


def _calls(model: WireServer, since: int) -> int:
    return sum(1 for s in model.seen[since:] if s.path.endswith("/chat/completions"))


def _wait(cond, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


CASES = [("redis", "store_killed"), ("redis", "replica_killed"), ("redis", "settles_fail"),
         ("sqlite", "replica_killed"), ("sqlite", "settles_fail"),
         ("postgres", "store_killed"), ("postgres", "replica_killed"), ("postgres", "settles_fail")]


@pytest.mark.parametrize("backend,fault", CASES, ids=[f"{b}-{f}" for b, f in CASES])
def test_cap_holds_through_the_fault(backend, fault, model, rigs):
    rig = rigs(backend)
    rig.store.reset()
    since = len(model.seen)
    journaled: list[int] = []  # settles waiting in the journals while the store was away
    down = threading.Event()
    t0 = time.monotonic()

    def strike() -> None:
        try:
            assert _wait(lambda: _calls(model, since) >= OPEN_AT_STRIKE, 60), "no stream opened"
            if fault == "store_killed":
                rig.store.kill()
                down.set()
                RELEASE.set()  # the open streams finish with the store dead
                _wait(lambda: rig.pending() > 0, 15)
                journaled.append(rig.pending())
                rig.store.restart()
                down.clear()
            elif fault == "replica_killed":
                rig.kill_replica()  # its open streams' holds are never settled: they expire, charged
                RELEASE.set()
                rig.restart_replica()
            else:
                rig.store.fail_settles()
                outage = time.monotonic()
                RELEASE.set()  # the open streams finish while no settle can land
                _wait(lambda: rig.pending() > 0, OUTAGE_S)
                journaled.append(rig.pending())
                time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - outage)))
                rig.store.settles_back()
        finally:  # whatever failed above, the store and the streams come back for the next case
            RELEASE.set()
            if fault == "settles_fail":
                rig.store.settles_back()
            elif down.is_set():
                rig.store.restart()

    RELEASE.clear()
    fault_thread = threading.Thread(target=strike)
    fault_thread.start()
    wave1 = _wave(rig.urls, REQUESTS)
    t1 = time.monotonic()
    fault_thread.join(120)
    time.sleep(TTL_S + 0.5)  # every reservation of wave 1 has expired (charged, never freed)
    # ... and the journals have drained: a reserve that timed out during the outage and landed
    # late is released by a settle at 0, which itself waits in a journal until the store takes
    # it; until then its bound still counts, and wave 2 would find the cap full (seen under load:
    # paid 40, settled 40,000 — never over the cap, but not the exact cap this test checks)
    # ... and no hold is left: the settle at 0 of such a late reserve can reach the store just
    # after the journals read empty. (CI's "paid 49, settled 49,000, held 0", first put down to
    # such a hold, came back with this wait in place: it was a wave 2 smaller than what wave 1 left.)
    _wait(lambda: rig.pending() == 0 and rig.store.spent()[1] == 0, 30)
    t2 = time.monotonic()
    paid1 = _calls(model, since)
    wave2 = _wave(rig.urls, WAVE2)
    t3 = time.monotonic()
    paid = _calls(model, since)
    # the journals drain once the store answers
    _wait(lambda: rig.pending() == 0 and rig.store.spent()[1] == 0 and rig.store.spent()[0] >= paid * CALL_MICROS, 30)
    settled, held = rig.store.spent()
    print(f"{rig.store.backend}/{fault}: paid {paid} (wave 1 {paid1}), settled {settled} µUSD, held {held}, journaled {journaled}, "
          f"statuses {sorted(set(wave1 + wave2))}, wave 1 {t1 - t0:.1f} s, wave 2 {t3 - t2:.1f} s, "
          f"total {time.monotonic() - t0:.1f} s")
    assert paid <= ADMIT, (paid, wave1.count(200), wave2.count(200))
    assert held == 0 and rig.pending() == 0
    assert paid * CALL_MICROS <= settled <= ADMIT * CALL_MICROS, (paid, settled)
    assert settled == ADMIT * CALL_MICROS, (settled, paid1)  # the cap was reached: wave 2 spent what wave 1 left
    assert wave2.count(200) == WAVE2  # the replicas still answer (limit notices) after the fault
    if fault in ("store_killed", "settles_fail"):  # the settles that failed went through a replica's journal
        assert journaled and journaled[0] > 0, journaled
