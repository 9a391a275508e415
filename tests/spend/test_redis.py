import threading
import time

import pytest
from redis.crc import key_slot

from tests.spend.suite import MONTH, PRICE, T0, CountersSuite, FakeClock, run_together, spend_settings
from vouched.config import RateLimitSettings
from vouched.spend import Budget, Limit, RateLimiter, upper_bound_micros
from vouched.spend.redis import RedisRateCounters, RedisSpendCounters, connect, rate_key, spend_keys


class TestRedisCounters(CountersSuite):
    @pytest.fixture
    def make_counters(self, redis_server):
        admin = connect(redis_server.url)
        admin.flushdb()
        clients = []

        def make():
            client = connect(redis_server.url)  # its own pool: its own connections
            clients.append(client)
            return RedisSpendCounters(client), RedisRateCounters(client)

        yield make
        for c in clients:
            c.close()
        admin.close()

    @pytest.fixture
    def unreachable(self, redis_server):
        import socket

        with socket.socket() as s:  # a loopback port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        client = connect(f"redis://127.0.0.1:{port}/0", timeout_s=0.5)
        return RedisSpendCounters(client), RedisRateCounters(client)


def test_a_months_keys_share_one_cluster_slot():
    assert len({key_slot(k.encode()) for k in spend_keys("2026-11")}) == 1
    assert spend_keys("2026-11")[0] == "vouched:{spend:2026-11}:open"
    assert rate_key("2001:db8::/64") == "vouched:{rate:2001:db8::/64}"


def test_scripts_reload_after_script_flush(redis_server):
    client = connect(redis_server.url)
    client.flushdb()
    spend, rate = RedisSpendCounters(client), RedisRateCounters(client)
    assert spend.try_reserve(MONTH, 10, 100, 600, T0)
    client.script_flush()  # as after a restart or a failover: EVALSHA says NOSCRIPT
    assert spend.try_reserve(MONTH, 10, 100, 600, T0)
    assert spend.spent(MONTH, T0) == (0, 20)
    assert rate.hit("k", (Limit("minute", 1, 60),), T0).allowed
    client.close()


def test_killing_redis_mid_run_fails_spend_closed_and_rate_open(own_redis):
    """Requests run on 8 threads while Redis is SIGKILLed: afterwards every spend check
    refuses, every rate check passes, and no exception escapes."""
    amount = upper_bound_micros(500, 200, PRICE)
    clients = [connect(own_redis.url, timeout_s=0.5) for _ in range(2)]
    budgets = [Budget(spend_settings(1000.0), RedisSpendCounters(c), FakeClock()) for c in clients]
    limiters = [RateLimiter(RateLimitSettings(per_minute=0, per_hour=0, per_day=10_000), RedisRateCounters(c), FakeClock())
                for c in clients]
    killed, stop = threading.Event(), threading.Event()
    after: list[tuple[bool, bool]] = []
    errors: list[BaseException] = []

    def worker(i):
        b, lim = budgets[i % 2], limiters[i % 2]
        try:
            while not stop.is_set():
                dead = killed.is_set()
                r = b.reserve(model="m", prompt_bytes=500, max_output_tokens=200)
                if r is not None:
                    b.settle(r, model="m", input_tokens=100, output_tokens=10)
                d = lim.check(f"192.0.2.{i}")
                if dead:
                    after.append((r is None, d.allowed))
        except BaseException as exc:  # the test fails on any
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 20
    while sum(b.metrics.reserved.value() for b in budgets) < 40 and time.monotonic() < deadline:
        time.sleep(0.01)
    before_kill = sum(b.metrics.reserved.value() for b in budgets)
    own_redis.kill()
    killed.set()
    while len(after) < 40 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    for t in threads:
        t.join(timeout=20)
    assert not errors
    assert before_kill >= 40 and len(after) >= 40
    assert all(refused for refused, _ in after)
    assert all(allowed for _, allowed in after)
    assert sum(b.metrics.refused.value("store") for b in budgets) >= 40
    assert sum(lim.metrics.store_errors.value() for lim in limiters) >= 40
    assert amount > 0
    for c in clients:
        c.close()


def test_200_reservations_over_several_clients_at_once(redis_server):
    """Like the suite's test, but each thread holds its own client (its own connection)."""
    admin = connect(redis_server.url)
    admin.flushdb()
    amount = upper_bound_micros(3000, 1024, PRICE)
    clients = [connect(redis_server.url) for _ in range(20)]
    handles = [RedisSpendCounters(c) for c in clients]
    ids = run_together(200, lambda i: handles[i % 20].try_reserve(MONTH, amount, 50 * amount, 600, T0))
    assert sum(1 for x in ids if x) == 50
    assert handles[0].spent(MONTH, T0) == (0, 50 * amount)
    for c in [admin, *clients]:
        c.close()
