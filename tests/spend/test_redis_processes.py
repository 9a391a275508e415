"""One Redis budget shared by several OS processes: many concurrent reservations, zero overshoot.

Each child process is a separate Python interpreter with its own connection pool and its
own threads; they are released together (one BLPOP token each) so their reservations and
rate-limit hits interleave on the server. The Lua scripts make each check-and-add atomic,
so the sum over processes must equal what one process would have admitted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid

from tests.spend.suite import MONTH, T0
from vouched.spend.redis import RedisSpendCounters, connect

PROCESSES = 6
THREADS = 8
ATTEMPTS = 40  # per process: 240 reservation attempts in all
AMOUNT = 1_000  # micro-dollars per reservation
ADMIT = 37  # the cap admits exactly this many
RATE_PER_MINUTE = 25

CHILD = textwrap.dedent("""
    import json, sys
    from concurrent.futures import ThreadPoolExecutor
    from vouched.spend import Limit
    from vouched.spend.redis import RedisRateCounters, RedisSpendCounters, connect

    url, prefix, go, attempts, threads, amount, cap, per_minute, t0, month = sys.argv[1:11]
    client = connect(url, timeout_s=10)
    spend = RedisSpendCounters(client, prefix=prefix)
    rate = RedisRateCounters(client, prefix=prefix)
    limits = (Limit("minute", int(per_minute), 60),)
    client.ping()  # connected before the start signal, so all processes start level
    print("READY", flush=True)
    client.blpop([go], timeout=60)

    def one(i):
        rid = spend.try_reserve(month, int(amount), int(cap), 600, float(t0))
        allowed = rate.hit("198.51.100.9", limits, float(t0)).allowed
        return rid, allowed

    with ThreadPoolExecutor(max_workers=int(threads)) as pool:
        out = list(pool.map(one, range(int(attempts))))
    print(json.dumps({"ids": [r for r, _ in out if r], "allowed": sum(a for _, a in out)}), flush=True)
""")


def test_processes_share_one_budget_and_one_rate_limit_without_overshoot(redis_server):
    prefix = f"vouched-mp-{uuid.uuid4().hex[:8]}"
    go = f"{prefix}:go"
    cap = AMOUNT * ADMIT
    args = [redis_server.url, prefix, go, str(ATTEMPTS), str(THREADS), str(AMOUNT), str(cap), str(RATE_PER_MINUTE), str(T0), MONTH]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(PROCESSES)]
    admin = connect(redis_server.url)
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "READY"
        admin.rpush(go, *["go"] * PROCESSES)  # release every process at once
        results = []
        deadline = time.monotonic() + 120
        for p in procs:
            out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
            assert p.returncode == 0
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    ids = [i for r in results for i in r["ids"]]
    assert len(ids) == ADMIT and len(set(ids)) == ADMIT  # exactly the cap, each reservation once
    settled, reserved = RedisSpendCounters(admin, prefix=prefix).spent(MONTH, T0)
    assert settled == 0 and reserved == cap  # zero overshoot, nothing lost
    assert sum(r["allowed"] for r in results) == RATE_PER_MINUTE  # the minute limit counted once across processes
    admin.close()
