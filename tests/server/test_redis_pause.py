"""A hung Redis does not stall the service (issue 16): Redis is paused (SIGSTOP) for PAUSE_S
seconds under load against a real `vouched serve` whose spend and rate counters are in it.

/healthz keeps answering (p99 < 50 ms), and a question asked meanwhile waits on the counter
store no longer than the deadlines (0.1 s each for the rate check and the reserve): the rate
limit fails open, the spend gate fails closed (the monthly-limit notice), nobody waits for
Redis's socket timeout. PAUSE_S is VOUCHED_PAUSE_S (default 10, as the issue has it).

The bounds hold on a busy CI machine: the issue's p99 < 50 ms is asserted exactly when
/healthz under the same load with Redis up (the control) is itself under 50 ms; on a machine
too starved to show 50 ms, the pause may not make /healthz worse than the control. Always,
absolutely: no probe over 1 s and p99 under 250 ms (one blocked counter call is a 1 s socket
timeout), and no question asked during the pause over 2 s (nor its p90 over the control's
by more than the two deadlines).
"""

from __future__ import annotations

import os
import statistics
import threading
import time

import httpx
import pytest

from tests.llm.wire import Reply, WireServer, openai_events
from tests.server.tenants import serving, write_site
from tests.spend.conftest import RedisServer
from vouched.config import load_config
from vouched.engine import Engine

PAUSE_S = float(os.environ.get("VOUCHED_PAUSE_S", "10"))
DEADLINE_S = 0.1  # spend.deadline_s and rate_limit.deadline_s (their defaults)
QUESTION = "Who inspects the cold room?"
ANSWER = "The cold room at the harbor depot is inspected every morning by Tamsin Overgaard [1]."


def _p(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


@pytest.fixture
def paused_site(tmp_path):
    redis = RedisServer(tmp_path, persistent=True).start()
    usage = {"prompt_tokens": 10, "completion_tokens": 50, "total_tokens": 60}
    with WireServer([Reply(parts=openai_events([ANSWER], usage=usage), headers={"connection": "close"}) for _ in range(5000)]) as model:
        toml = write_site(tmp_path, extra=f"""
[answer]
provider = "openai"
model = "fake-paid"
base_url = "{model.url}/v1"
max_output_tokens = 50

[spend]
backend = "redis"
redis_url = "{redis.url}"
monthly_cap_usd = 100.0
prices = {{ fake-paid = {{ input_per_mtok = 0.0, output_per_mtok = 1.0 }} }}
journal_path = "journal.sqlite"
""".replace("[rate_limit]\nenabled = false", ""))
        text = toml.read_text().replace("[rate_limit]\nenabled = false\n", "[rate_limit]\nenabled = true\nper_minute = 0\nper_hour = 0\nper_day = 100000\n")
        toml.write_text(text)
        Engine(load_config(toml)).ingest()
        with serving(toml) as (url, _):
            yield url, redis
    redis.stop()


def test_a_paused_redis_stalls_nothing(paused_site):
    url, redis = paused_site
    stop = threading.Event()
    asked: list[tuple[float, float, str]] = []  # (start, seconds, outcome)

    def load() -> None:
        with httpx.Client(timeout=60) as c:
            while not stop.is_set():
                t = time.monotonic()
                r = c.post(f"{url}/v1/chat/completions", json={"messages": [{"role": "user", "content": QUESTION}]})
                v = (r.json().get("vouched") or {}) if r.status_code == 200 else {}
                outcome = v.get("outcome", str(r.status_code))
                if outcome == "limited":
                    outcome = f"limited/{v.get('category')}"  # which spend notice
                asked.append((t, time.monotonic() - t, outcome))

    workers = [threading.Thread(target=load) for _ in range(4)]
    for w in workers:
        w.start()
    try:
        deadline = time.monotonic() + 60
        while len(asked) < 12 and time.monotonic() < deadline:  # under load, Redis up (the first builds the assistant)
            time.sleep(0.1)
        baseline: list[float] = []  # /healthz under the same load with Redis up
        with httpx.Client(base_url=url, timeout=30) as c:
            for _ in range(100):
                t = time.monotonic()
                c.get("/healthz")
                baseline.append(time.monotonic() - t)
                time.sleep(0.02)
        redis.pause()
        paused_at = time.monotonic()
        health: list[float] = []
        with httpx.Client(base_url=url, timeout=30) as c:
            while time.monotonic() - paused_at < PAUSE_S:
                t = time.monotonic()
                assert c.get("/healthz").status_code == 200
                health.append(time.monotonic() - t)
                time.sleep(0.02)
        resumed_at = time.monotonic()
        redis.resume()
        time.sleep(0.5)  # the questions asked during the pause finish
    finally:
        redis.resume()
        stop.set()
        for w in workers:
            w.join(60)
    during = [(s, d, o) for s, d, o in asked if paused_at <= s and s + d <= resumed_at]  # asked and done while paused
    before = [d for s, d, o in asked[4:] if s + d < paused_at]  # with Redis up, under the same load
    assert len(health) > 50 and during, (len(health), len(during))
    p99 = _p(health, 0.99)
    print(f"redis paused {PAUSE_S:.0f} s: /healthz p50 {statistics.median(health) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
          f"max {max(health) * 1000:.1f} ms ({len(health)} probes); questions during the pause: {len(during)}, "
          f"p50 {statistics.median(d for _, d, _ in during) * 1000:.0f} ms, max {max(d for _, d, _ in during) * 1000:.0f} ms, "
          f"outcomes {sorted({o for _, _, o in during})}; before: p50 {statistics.median(before) * 1000:.0f} ms, "
          f"/healthz p99 with Redis up {_p(baseline, 0.99) * 1000:.1f} ms")
    # The bounds, asserted as written when the machine can show them, and bounds that
    # still catch a stall on a machine starved of CPU by other work (where /healthz is slow
    # with Redis up too). A loop blocked on Redis shows as seconds: each counter call then
    # waits Redis's 1 s socket timeout (twice, with its retry), 9 s before issue 16.
    control = _p(baseline, 0.99)
    assert max(health) < 1.0, max(health)  # absolute: never one blocked counter call
    assert p99 < 0.250, p99  # absolute, generous
    if control < 0.050:  # a machine quiet enough to measure 50 ms: the bound, exactly
        assert p99 < 0.050, (p99, control)
    else:  # busy: no worse than the same load with Redis up
        assert p99 < 1.5 * control, (p99, control)
    # spend failed closed at its deadline, nothing paid blind; the reader is told to retry shortly, not
    # that the monthly limit is reached
    assert {o for _, _, o in during} == {"limited/spend_unavailable"}
    # No question waited on Redis beyond the deadlines (0.1 s for the rate check, 0.1 s for the
    # reserve): relative to the same questions with Redis up, and an absolute ceiling below
    # one blocked counter call (1 s socket timeout) plus the question's own work.
    took = [d for _, d, _ in during]
    assert _p(took, 0.9) < _p(before, 0.9) + 2 * DEADLINE_S + 0.3, (_p(took, 0.9), _p(before, 0.9))
    assert max(took) < max(2.0, 1.5 * max(before)), (max(took), max(before))


def test_serve_refuses_a_redis_without_persistence_and_says_why(tmp_path):
    import subprocess
    import sys

    redis = RedisServer(tmp_path).start()  # --save "" --appendonly no
    try:
        spend = f'\n[spend]\nbackend = "redis"\nredis_url = "{redis.url}"\n'
        toml = write_site(tmp_path, extra=spend)
        Engine(load_config(toml)).ingest()
        cmd = [sys.executable, "-c", "from vouched.cli import main; main()", "serve", "--config", str(toml), "--port", "1"]
        refused = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2
        assert "no persistence" in refused.stderr and "appendonly" in refused.stderr
        assert "redis_require_persistence" in refused.stderr
        toml.write_text(toml.read_text() + "redis_require_persistence = false\n")
        with serving(toml) as (url, _):
            assert httpx.get(f"{url}/healthz").status_code == 200
    finally:
        redis.stop()
