"""PostgreSQL, the spend counter store, fails under a real `vouched serve` (issue 16).

A private PostgreSQL (`PostgresServer`: never the session's shared one) holds the counters;
one replica answers through a fake OpenAI-compatible model whose streams stay open until the
test releases them, so the fault strikes at a known point: after every open stream's reserve,
before its settle. The promise checked in each case:

  - no answer is released without its spend settled or journaled (the replica's settle
    journal holds exactly the settles the store did not take);
  - a caller asking while the store is gone gets the fixed limit notice at once (fail
    closed: no model call is made on money that cannot be counted), never a hang or a 500;
  - when the store is back, the journal drains exactly once (the month's settled total
    grows by exactly the reported cost of each stream, never the bound, never twice) and
    new questions are answered again;
  - no hold is left open (the reservation TTL is long: holds close by settles, not expiry).

Faults: the whole server killed (SIGKILL to the postmaster and every backend) mid-stream and
restarted; the replica's backends ended with pg_terminate_backend between reserve and settle;
and ended while their settles wait on the month's row lock (during the settle itself).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.llm.wire import Reply, WireServer, openai_events
from tests.server.tenants import serving, write_site
from tests.spend.conftest import PostgresServer
from vouched.config import load_config
from vouched.engine import Engine
from vouched.spend.money import month_of

MAX_OUT = 100
USED_OUT = 40  # the model reports 40 of the 100 reserved tokens: a settle is told from an expired bound
PER_MTOK = 10.0
CALL_MICROS = USED_OUT * 10  # what one settled stream costs (µUSD)
OPEN = 4  # streams open when the fault strikes (the counters' pool holds 4 connections)
SCHEMA = "pgfaults"
QUESTION = "Who inspects the cold room?"
ANSWER = "The cold room at the harbor depot is inspected every morning by Tamsin Overgaard [1]."
APP = "vouched"
DEADLINE_S = 1.0  # the counters' deadline: 4 reserves queued on one month's lock on a loaded 2-core machine fit in it  # the counters' connections' application_name


@dataclass
class Site:
    url: str
    pg: PostgresServer
    model: WireServer
    release: threading.Event  # cleared: every stream stops before its last part
    journal: Path

    def paid(self) -> int:
        return sum(1 for s in self.model.seen if s.path.endswith("/chat/completions"))

    def spent(self) -> tuple[int, int]:
        """(settled, held) µUSD of the month, read straight from the tables."""
        import psycopg

        with psycopg.connect(self.pg.dsn, autocommit=True, application_name="test") as conn:
            row = conn.execute(f"SELECT settled_micros, reserved_micros FROM {SCHEMA}.spend_months WHERE month = %s",
                               (month_of(time.time()),)).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def pending(self) -> int:
        """Settles waiting in the replica's journal."""
        if not self.journal.exists():
            return 0
        with sqlite3.connect(self.journal, timeout=10) as conn:
            try:
                return conn.execute("SELECT count(*) FROM pending_settles").fetchone()[0]
            except sqlite3.OperationalError:  # the replica is creating the file this moment
                return 0

    def sql(self, query: str, *args) -> list[tuple]:
        import psycopg

        with psycopg.connect(self.pg.dsn, autocommit=True, application_name="test") as conn:
            cur = conn.execute(query, args)
            return cur.fetchall() if cur.description else []


@pytest.fixture(scope="module")
def pg_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("pgfaults")
    pg = PostgresServer().start()
    release = threading.Event()
    release.set()
    usage = {"prompt_tokens": 10, "completion_tokens": USED_OUT, "total_tokens": 10 + USED_OUT}
    replies = [Reply(parts=openai_events([ANSWER], usage=usage), hold=release, headers={"connection": "close"})
               for _ in range(500)]
    try:
        with WireServer(replies) as model:
            toml = write_site(root, extra=f"""
[answer]
provider = "openai"
model = "fake-paid"
base_url = "{model.url}/v1"
max_output_tokens = {MAX_OUT}

[spend]
backend = "postgres"
monthly_cap_usd = 100.0
prices = {{ fake-paid = {{ input_per_mtok = 0.0, output_per_mtok = {PER_MTOK} }} }}
reservation_ttl_s = 600
journal_path = "journal.sqlite"
journal_retry_s = 0.2
deadline_s = {DEADLINE_S}
""")
            toml.write_text(toml.read_text().replace("[store]\n", f'[store]\ndsn = "{pg.dsn}"\npg_schema = "{SCHEMA}"\n', 1))
            Engine(load_config(toml)).ingest()
            env = {k: v for k, v in os.environ.items() if k != "VOUCHED_PG_DSN"}
            with serving(toml, env=env) as (url, _):
                site = Site(url, pg, model, release, root / "journal.sqlite")
                assert _ask(site, 1) == ["answered"]  # warm: the assistant is built, the counters' pool open
                yield site
    finally:
        release.set()
        pg.stop()


_CLIENT = httpx.Client(timeout=60, limits=httpx.Limits(max_keepalive_connections=0))  # one: each costs ~30 ms of CPU


def _one(site: Site, stream: bool) -> str:
    r = _CLIENT.post(f"{site.url}/v1/chat/completions",
                     json={"messages": [{"role": "user", "content": QUESTION}], "stream": stream})
    if r.status_code != 200:
        return f"http {r.status_code}"
    if not stream:
        v = r.json().get("vouched") or {}
        outcome = v.get("outcome", "?")
        return f"limited/{v.get('category')}" if outcome == "limited" else outcome  # which spend notice
    outcome = "cut"  # a stream that never reached its final frame
    for line in r.text.splitlines():
        if line.startswith("data:") and '"vouched"' in line:
            import json

            data = json.loads(line[5:])
            outcome = (data.get("vouched") or {}).get("outcome", outcome)
    return outcome


def _ask(site: Site, n: int, *, stream: bool = False) -> list[str]:
    with ThreadPoolExecutor(max_workers=max(1, n)) as pool:
        return list(pool.map(lambda _: _one(site, stream), range(n)))


def _wait(cond, what: str, timeout: float = 30.0, detail=lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what} {detail()}"
        time.sleep(0.05)


class _OpenStreams:
    """OPEN streaming questions, each held open by the model after its reserve."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.paid0 = site.paid()
        self.spent0 = site.spent()
        site.release.clear()
        self.pool = ThreadPoolExecutor(max_workers=OPEN + 2)
        self.futures = [self.pool.submit(_one, site, True) for _ in range(OPEN)]
        _wait(lambda: site.paid() == self.paid0 + OPEN, "every stream to reach the model",
              detail=lambda: [f.result() for f in self.futures if f.done()])
        assert site.spent()[1] == self.spent0[1] + OPEN * MAX_OUT * 10  # each holds its bound

    def one_more(self) -> None:
        """Another question, held open like the others once it reached the model."""
        paid = self.site.paid()
        self.futures.append(self.pool.submit(_one, self.site, True))
        _wait(lambda: self.site.paid() > paid or self.futures[-1].done(), "the question to be reserved or refused")
        assert not self.futures[-1].done(), self.futures[-1].result()  # reserved, not refused

    def finish(self) -> list[str]:
        self.site.release.set()
        try:
            return [f.result(timeout=60) for f in self.futures]
        finally:
            self.pool.shutdown()


def _settled_exactly_once(site: Site, streams: _OpenStreams, extra_paid: int = 0) -> None:
    _wait(lambda: site.pending() == 0, "the journal to drain")
    settled, held = site.spent()
    assert held == streams.spent0[1] == 0, "a hold was left open"
    assert settled == streams.spent0[0] + (OPEN + extra_paid) * CALL_MICROS, (settled, streams.spent0)
    assert site.paid() == streams.paid0 + OPEN + extra_paid


def test_postgres_killed_mid_stream(pg_site):
    site = pg_site
    streams = _OpenStreams(site)
    site.pg.kill()
    t = time.monotonic()
    during = _ask(site, 3)
    waited = time.monotonic() - t
    assert during == ["limited/spend_unavailable"] * 3, during  # fail closed; "try again shortly", not "monthly limit"
    assert waited < 5.0, waited  # refused at once (connection refused), not after a timeout
    assert site.paid() == streams.paid0 + OPEN  # no model call on money that cannot be counted
    outcomes = streams.finish()
    assert outcomes == ["answered"] * OPEN, outcomes
    # every answer released while the store is dead has its settle in the journal
    _wait(lambda: site.pending() == OPEN, f"{OPEN} journaled settles", timeout=15)
    time.sleep(0.5)  # retries run (every 0.2 s) and fail: nothing leaves the journal, nothing is lost
    assert site.pending() == OPEN
    site.pg.restart()
    _settled_exactly_once(site, streams)
    assert _ask(site, 2) == ["answered"] * 2  # back: the pool reconnects, questions are answered
    _settled_exactly_once(site, streams, extra_paid=2)


def test_backends_terminated_between_reserve_and_settle(pg_site):
    site = pg_site
    streams = _OpenStreams(site)
    ended = site.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s", APP)
    assert ended and all(r[0] for r in ended)
    _wait(lambda: not site.sql("SELECT 1 FROM pg_stat_activity WHERE application_name = %s", APP), "the backends to end")
    # The server is up: a question asked now is reserved (a dead pooled connection is not handed out).
    streams.one_more()
    assert streams.finish() == ["answered"] * (OPEN + 1)
    _settled_exactly_once(site, streams, extra_paid=1)


def test_backends_terminated_during_their_settles(pg_site):
    import psycopg

    site = pg_site
    streams = _OpenStreams(site)
    month = month_of(time.time())
    with psycopg.connect(site.pg.dsn, autocommit=False, application_name="test") as holder:
        # The month's row lock, held: every settle waits on it inside its transaction.
        holder.execute(f"SELECT 1 FROM {SCHEMA}.spend_months WHERE month = %s FOR UPDATE", (month,))
        site.release.set()
        waiting = ("SELECT pid FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = 'Lock'")
        _wait(lambda: len(site.sql(waiting, APP)) == OPEN, f"{OPEN} settles waiting on the month's lock")
        # Past the deadline each settle was journaled; now its backend dies mid-transaction.
        _wait(lambda: site.pending() == OPEN, f"{OPEN} journaled settles", timeout=15)
        ended = site.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s "
                         "AND wait_event_type = 'Lock'", APP)
        assert len(ended) == OPEN and all(r[0] for r in ended)
        assert streams.finish() == ["answered"] * OPEN
        holder.rollback()
    _settled_exactly_once(site, streams)
    rows = site.sql(f"SELECT amount_micros, settled FROM {SCHEMA}.spend_reservations WHERE NOT settled OR amount_micros <> %s",
                    CALL_MICROS)
    assert rows == [], rows  # every reservation of the module settled at its reported cost, none at its bound
