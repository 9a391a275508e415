"""Three `vouched serve` processes, one PostgreSQL, one Redis: the cap and the rate limits hold
across replicas.

The portfolio site (hashing embedder) is ingested once into PostgreSQL; three real `vouched
serve` processes on three loopback ports serve it, with spend and rate counters in one Redis.
The model is an OpenAI-compatible fake on 127.0.0.1 whose every answer reports exactly the
reserved output, so a settled call costs what it reserved and the cap admits exactly
ADMIT calls however the requests interleave.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.helpers import copy_example_hashing
from tests.llm.wire import Reply, WireServer, openai_events
from tests.server.tenants import serve_log, start_serve
from tests.spend.conftest import RedisServer
from vouched.config import load_config
from vouched.engine import Engine
from vouched.spend.money import month_of
from vouched.spend.redis import RedisSpendCounters, connect

REPLICAS = 3
REQUESTS = 300
ADMIT = 50
MAX_OUT = 100  # output tokens reserved per call
OUT_PER_MTOK = 10.0  # USD; input is free, so a reservation is MAX_OUT × price whatever the prompt
CALL_MICROS = MAX_OUT * 10  # 100 tokens × $10 / 1M tokens = $0.001 = 1,000 micro-dollars
PER_DAY = 30  # rate limit per client address per day
QUESTION = "Which database did the Tessera Health search run on?"


def _sections(dsn: str, schema: str, model_url: str, redis_url: str, trace: Path) -> str:
    return f"""
[store]
backend = "postgres"
dsn = "{dsn}"
pg_schema = "{schema}"
pool_size = 4

[answer]
provider = "openai"
model = "fake-paid"
base_url = "{model_url}/v1"
max_output_tokens = {MAX_OUT}

[spend]
backend = "redis"
redis_url = "{redis_url}"
monthly_cap_usd = {ADMIT * CALL_MICROS / 1e6}
prices = {{ fake-paid = {{ input_per_mtok = 0.0, output_per_mtok = {OUT_PER_MTOK} }} }}
# This test counts exact admissions: 300 requests released at once on 2 cores queue for the
# counter store far longer than the default 0.1 s deadline (which test_spend_faults.py tests).
deadline_s = 10.0

[rate_limit]
enabled = true
per_minute = 0
per_hour = 0
per_day = {PER_DAY}
trusted_proxies = ["127.0.0.1"]
deadline_s = 10.0  # exact counting under a burst (see [spend] above)

[trace]
path = "{trace}"
"""


def _site(tmp: Path, dsn: str, model_url: str, redis_url: str) -> list[Path]:
    """One portfolio folder, three config files (same store and counters, own trace file each)."""
    toml = copy_example_hashing("portfolio", tmp / "portfolio")
    base = toml.read_text(encoding="utf-8").split("\n[server]")[0]
    base = base.replace('[store]\npath = ".vouched/portfolio.sqlite"\n', "")
    schema = "replicas_" + uuid.uuid4().hex[:8]
    out = []
    for i in range(REPLICAS):
        p = toml.with_name(f"replica{i}.toml")
        p.write_text(base + _sections(dsn, schema, model_url, redis_url, tmp / f"traces{i}.sqlite"), encoding="utf-8")
        out.append(p)
    return out


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"replica exited with {proc.returncode}: {serve_log(proc)}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"replica at {url} did not become healthy")


@pytest.fixture(scope="module")
def redis(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("redis-replicas"), persistent=True).start()  # the spend backend requires it
    yield server
    server.stop()


@pytest.fixture(scope="module")
def fake_model():
    usage = {"prompt_tokens": 10, "completion_tokens": MAX_OUT, "total_tokens": 10 + MAX_OUT}
    reply = openai_events(["Leila Navid's Tessera Health search ran on postgres [1]."], usage=usage)
    with WireServer([Reply(parts=reply) for _ in range(REQUESTS * 2)]) as server:
        yield server


@pytest.fixture(scope="module")
def replicas(tmp_path_factory, postgres_dsn, redis, fake_model):
    tmp = tmp_path_factory.mktemp("replicas")
    configs = _site(tmp, postgres_dsn, fake_model.url, redis.url)
    env = {k: v for k, v in os.environ.items() if k != "VOUCHED_PG_DSN"}
    os.environ.pop("VOUCHED_PG_DSN", None)
    engine = Engine(load_config(configs[0]))
    version = engine.ingest().version  # once, into PostgreSQL, for all three
    engine.store.close()
    procs, urls = [], []
    try:
        for cfg in configs:
            port = _free_port()
            procs.append(start_serve(cfg, port, env=env)[0])  # its log in a file: an unread pipe fills and blocks it
            urls.append(f"http://127.0.0.1:{port}")
        for url, proc in zip(urls, procs):
            _wait_healthy(url, proc)
        yield urls, version
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _ask(url: str, client_ip: str) -> tuple[int, dict]:
    r = httpx.post(f"{url}/v1/chat/completions", json={"messages": [{"role": "user", "content": QUESTION}]},
                   headers={"X-Forwarded-For": client_ip}, timeout=120)
    return r.status_code, r.json()


def _outcome(body: dict) -> str | None:
    return (body.get("vouched") or {}).get("outcome")


def test_cap_admits_exactly_its_calls_across_three_replicas(replicas, fake_model, redis):
    urls, version = replicas
    assert version.chunk_count > 0
    clients = [f"10.{i // 250}.{(i // 50) % 5}.{i % 250 + 1}" for i in range(REQUESTS)]  # one request each
    with ThreadPoolExecutor(max_workers=48) as pool:
        results = list(pool.map(lambda i: _ask(urls[i % REPLICAS], clients[i]), range(REQUESTS)))
    codes = [c for c, _ in results]
    assert codes.count(200) == REQUESTS, {c: codes.count(c) for c in set(codes)}
    outcomes = [_outcome(b) for _, b in results]
    limited = outcomes.count("limited")
    calls = [s for s in fake_model.seen if s.path.endswith("/chat/completions")]
    assert len(calls) == ADMIT  # the model was called exactly as often as the cap allows
    assert limited == REQUESTS - ADMIT, {o: outcomes.count(o) for o in set(outcomes)}
    admin = connect(redis.url)
    settled, reserved = RedisSpendCounters(admin).spent(month_of(time.time()), time.time())
    admin.close()
    assert reserved == 0 and settled == ADMIT * CALL_MICROS  # spend recorded == cap: zero overshoot


def test_rate_limit_is_counted_once_across_replicas(replicas):
    urls, _ = replicas
    n = 3 * PER_DAY  # a per-replica count would let all of these through
    with ThreadPoolExecutor(max_workers=30) as pool:
        results = list(pool.map(lambda i: _ask(urls[i % REPLICAS], "192.0.2.77"), range(n)))
    codes = [c for c, _ in results]
    assert codes.count(200) == PER_DAY and codes.count(429) == n - PER_DAY
