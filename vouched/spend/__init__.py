"""Spend cap and rate limits ("Spend and abuse" in DESIGN.md).

    money        exact micro-dollar arithmetic, month keys (pure)
    budget       Budget: the pipeline's SpendGate; decide_reserve (pure); Counters protocol
    ratelimit    RateLimiter; client_key and decide_rate (pure); RateCounters protocol
    sqlite       both counter stores in one SQLite file (embedded default)
    redis        both counter stores in Redis, via Lua scripts (scale-out)
    postgres     both counter stores in PostgreSQL, one locked transaction each (scale-out)
    metrics      plain counters the server exports

`build_spend(config)` wires the backend the config names. Spend fails closed (a store
that cannot answer refuses the model call); rate limits fail open.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from vouched.spend.budget import (
    Budget, CallerBudget, Counters, DeadlinePassed, DeadlineRunner, Reservation, SpendGate, SpendStatus, StoreNotDurable,
    caller_budget, decide_reserve,
)
from vouched.spend.journal import SettleJournal
from vouched.spend.metrics import Counter, RateMetrics, SpendMetrics
from vouched.spend.money import cost_micros, cost_usd, month_key, upper_bound_micros, upper_bound_usd
from vouched.spend.ratelimit import (
    Limit, RateCounters, RateDecision, RateLimiter, client_key, decide_rate, limit_key, limits_from,
)
from vouched.spend.sqlite import SQLiteRateCounters, SQLiteSpendCounters

if TYPE_CHECKING:
    from vouched.config import Config
    from vouched.spend.postgres import PostgresRateCounters, PostgresSpendCounters
    from vouched.spend.redis import RedisRateCounters, RedisSpendCounters

__all__ = [
    "Budget", "CallerBudget", "DeadlinePassed", "DeadlineRunner", "SettleJournal", "StoreNotDurable", "caller_budget",
    "Counter", "Counters", "Limit", "PostgresRateCounters", "PostgresSpendCounters", "RateCounters",
    "RateDecision", "RateLimiter", "RateMetrics", "RedisRateCounters", "RedisSpendCounters", "Reservation",
    "SQLiteRateCounters", "SQLiteSpendCounters",
    "SpendGate", "SpendMetrics", "SpendStatus", "build_spend", "client_key", "cost_micros", "cost_usd",
    "decide_rate", "decide_reserve", "limit_key", "limits_from", "month_key", "upper_bound_micros",
    "upper_bound_usd",
]


def __getattr__(name: str) -> Any:
    # The Redis backend imports the redis client only when asked for.
    if name in ("RedisRateCounters", "RedisSpendCounters"):
        from vouched.spend import redis as _redis

        return getattr(_redis, name)
    if name in ("PostgresRateCounters", "PostgresSpendCounters"):  # psycopg only when asked for
        from vouched.spend import postgres as _postgres

        return getattr(_postgres, name)
    raise AttributeError(f"module 'vouched.spend' has no attribute {name!r}")


def build_spend(
    config: Config,
    *,
    clock: Callable[[], float] = time.time,
    spend_metrics: SpendMetrics | None = None,
    rate_metrics: RateMetrics | None = None,
) -> tuple[Budget, RateLimiter]:
    """The spend gate and the rate limiter over the configured counter store.

    Cheap: no file is opened and no connection made until the first check. A paid
    provider whose model has no price is a ConfigError here, at start. Failed settles go to
    the settle journal (spend.journal_path); a Redis backend is asked for persistence before
    its first reserve (spend.redis_require_persistence)."""
    s = config.spend
    if s.backend == "redis":
        from vouched.spend.redis import RedisRateCounters, RedisSpendCounters, connect

        client = connect(s.redis_url)
        spend_c: Counters = RedisSpendCounters(client)
        rate_c: RateCounters = RedisRateCounters(client)
    elif s.backend == "postgres":
        from vouched.spend.postgres import PostgresRateCounters, PostgresSpendCounters

        pg = dict(schema=config.store.pg_schema)
        spend_c, rate_c = PostgresSpendCounters(config.store.dsn, **pg), PostgresRateCounters(config.store.dsn, **pg)
    else:
        path = config.resolve(s.path)
        spend_c, rate_c = SQLiteSpendCounters(path), SQLiteRateCounters(path)
    from vouched.spend.journal import SettleJournal

    models = () if config.answer.provider == "extractive" else (config.answer.model,)
    journal = SettleJournal(config.resolve(s.journal_path), retry_s=s.journal_retry_s, clock=clock)
    budget = Budget(s, spend_c, clock, spend_metrics, models=models, journal=journal,
                    require_durable=s.backend == "redis" and s.redis_require_persistence)
    return budget, RateLimiter(config.rate_limit, rate_c, clock, rate_metrics, header=config.rate_limit.forwarded_header)
