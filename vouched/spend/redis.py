"""Spend and rate counters in Redis, each operation one Lua script (atomic on the server).

Keys carry a hash tag, so everything one script touches lives in one slot and the scripts
run unchanged on Redis Cluster:

    vouched:{spend:2026-11}:open      hash  reservation id -> micro-USD held
    vouched:{spend:2026-11}:expiry    zset  reservation id, scored by expiry (Unix seconds)
    vouched:{spend:2026-11}:settled   hash  reservation id -> micro-USD settled
    vouched:{spend:2026-11}:total     string: the sum of :settled
    vouched:{rate:<client>}           zset  admitted requests, scored by time

Scripts run through `register_script` (EVALSHA, falling back to EVAL after a SCRIPT FLUSH
or a restart). `now` comes from the caller's clock, as in the SQLite backend, so the two
behave alike under a fake clock; the app servers' clocks must agree to within the TTL.
Reserve and settle are idempotent, so a client retry after a dropped reply is harmless.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Sequence

from vouched.spend.ratelimit import Limit, RateDecision

if TYPE_CHECKING:
    import redis as redis_lib

MONTH_KEY_TTL_S = 400 * 86400  # a month's figures outlive it long enough to be reported

_RECLAIM = """
local function reclaim(open, expiry, settled, total, now, key_ttl)
  local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', now)
  local charged = 0
  for _, id in ipairs(gone) do
    local v = redis.call('HGET', open, id)
    if v then  -- expired unsettled: charged at its full bound, never freed
      local before = tonumber(redis.call('HGET', settled, id) or '0')
      redis.call('HSET', settled, id, v)
      redis.call('INCRBY', total, string.format('%d', tonumber(v) - before))
      redis.call('HDEL', open, id)
      charged = charged + 1
    end
  end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', expiry, '-inf', now) end
  if charged > 0 then
    redis.call('EXPIRE', settled, key_ttl)
    redis.call('EXPIRE', total, key_ttl)
  end
end
local function held(open)
  local sum = 0
  for _, v in ipairs(redis.call('HVALS', open)) do sum = sum + tonumber(v) end
  return sum
end
"""

# KEYS: open, expiry, settled, total   ARGV: id, amount, cap, expires_at, now, key_ttl
_RESERVE = _RECLAIM + """
reclaim(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[5], ARGV[6])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 1 end
local settled = tonumber(redis.call('GET', KEYS[4]) or '0')
if settled + held(KEYS[1]) + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
for i = 1, 2 do redis.call('EXPIRE', KEYS[i], ARGV[6]) end
return 1
"""

# KEYS: open, expiry, settled, total   ARGV: id, actual, now, key_ttl
_SETTLE = _RECLAIM + """
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local before = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('INCRBY', KEYS[4], string.format('%d', tonumber(ARGV[2]) - before))
reclaim(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[4])
for i = 3, 4 do redis.call('EXPIRE', KEYS[i], ARGV[4]) end
return 1
"""

# KEYS: open, expiry, settled, total   ARGV: now, key_ttl
_SPENT = _RECLAIM + """
reclaim(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2])
return {tonumber(redis.call('GET', KEYS[4]) or '0'), held(KEYS[1])}
"""

# KEYS: the client's zset   ARGV: now, member, longest period, then (name, count, period)...
# Mirrors vouched.spend.ratelimit.decide_rate: a hit counts while hit > now - period.
_RATE = """
local now = tonumber(ARGV[1])
local function num(x) return string.format('%.17g', x) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', num(now - tonumber(ARGV[3])))
local wait, name = nil, ''
for i = 4, #ARGV, 3 do
  local count, period = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  if count > 0 then
    local start = '(' .. num(now - period)
    local n = redis.call('ZCOUNT', KEYS[1], start, '+inf')
    if n >= count then
      local edge = redis.call('ZRANGEBYSCORE', KEYS[1], start, '+inf', 'WITHSCORES', 'LIMIT', n - count, 1)
      local w = tonumber(edge[2]) + period - now
      if wait == nil or w > wait then wait, name = w, ARGV[i] end
    end
  end
end
if wait ~= nil then return {0, num(wait), name} end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[3]) * 1000))
return {1, '0', ''}
"""


def connect(url: str, *, timeout_s: float = 1.0) -> redis_lib.Redis:
    """A client that gives up fast: one immediate retry, no backoff (redis-py's default
    retries ten times with growing sleeps, which would stall every request on an outage)."""
    import redis as redis_lib
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return redis_lib.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                                    retry=Retry(NoBackoff(), 1))


def spend_keys(month: str, prefix: str = "vouched") -> list[str]:
    tag = f"{prefix}:{{spend:{month}}}"
    return [f"{tag}:open", f"{tag}:expiry", f"{tag}:settled", f"{tag}:total"]


def rate_key(key: str, prefix: str = "vouched") -> str:
    return f"{prefix}:{{rate:{key.replace('{', '_').replace('}', '_')}}}"


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _num(x: float) -> str:
    return repr(float(x))  # shortest text that reads back as the same double


class _RedisCounters:
    def __init__(self, client: redis_lib.Redis, *, prefix: str = "vouched") -> None:
        self.client = client
        self.prefix = prefix

    def close(self) -> None:
        self.client.close()


def persistence(client: redis_lib.Redis) -> tuple[bool, str]:
    """(durable, what was found): appendonly on, or an RDB `save` schedule. Reads CONFIG GET,
    or INFO persistence where CONFIG is disabled (some managed services rename it)."""
    try:
        aof = _text(client.config_get("appendonly").get("appendonly", "")).lower()
        save = _text(client.config_get("save").get("save", "")).strip()
    except Exception as exc:  # CONFIG refused: read what INFO says
        import redis as redis_lib

        if not isinstance(exc, redis_lib.ResponseError):
            raise
        info = client.info("persistence")
        aof = "yes" if int(info.get("aof_enabled", 0)) else "no"
        save = "(unknown: CONFIG is disabled)"
        if aof == "yes":
            return True, "appendonly yes"
        return False, f"appendonly {aof}; the RDB save schedule cannot be read ({exc})"
    if aof == "yes":
        return True, "appendonly yes"
    if save:
        return True, f"RDB save {save!r}"
    return False, "appendonly no, save \"\""


class RedisSpendCounters(_RedisCounters):
    """`vouched.spend.budget.Counters` in Redis."""

    def check_durable(self) -> None:
        """Raise StoreNotDurable when this Redis would come back empty after a crash."""
        from vouched.spend.budget import StoreNotDurable

        ok, found = persistence(self.client)
        if not ok:
            raise StoreNotDurable(
                f"the Redis at spend.redis_url has no persistence ({found}): after a restart it would forget this "
                "month's spend and the cap would start again from zero. Turn on `appendonly yes` (best with "
                "`appendfsync everysec` or `always`) or an RDB `save` schedule, or set "
                "spend.redis_require_persistence = false if the data is kept safe another way.")

    def __init__(self, client: redis_lib.Redis, *, prefix: str = "vouched") -> None:
        super().__init__(client, prefix=prefix)
        self._reserve = client.register_script(_RESERVE)
        self._settle = client.register_script(_SETTLE)
        self._spent = client.register_script(_SPENT)

    def try_reserve(self, month: str, amount_micros: int, cap_micros: int, ttl_s: float, now: float) -> str | None:
        rid = uuid.uuid4().hex
        ok = self._reserve(keys=spend_keys(month, self.prefix),
                           args=[rid, int(amount_micros), int(cap_micros), _num(now + ttl_s), _num(now), MONTH_KEY_TTL_S])
        return rid if int(ok) == 1 else None

    def settle(self, month: str, reservation_id: str, actual_micros: int, now: float) -> None:
        self._settle(keys=spend_keys(month, self.prefix),
                     args=[reservation_id, int(actual_micros), _num(now), MONTH_KEY_TTL_S])

    def spent(self, month: str, now: float) -> tuple[int, int]:
        settled, reserved = self._spent(keys=spend_keys(month, self.prefix), args=[_num(now), MONTH_KEY_TTL_S])
        return int(settled), int(reserved)


class RedisRateCounters(_RedisCounters):
    """`vouched.spend.ratelimit.RateCounters` in Redis."""

    def __init__(self, client: redis_lib.Redis, *, prefix: str = "vouched") -> None:
        super().__init__(client, prefix=prefix)
        self._rate = client.register_script(_RATE)

    def hit(self, key: str, limits: Sequence[Limit], now: float) -> RateDecision:
        longest = max((lim.period_s for lim in limits), default=0.0)
        args: list[Any] = [_num(now), uuid.uuid4().hex, _num(longest)]
        for lim in limits:
            args += [lim.name, int(lim.count), _num(lim.period_s)]
        allowed, wait, name = self._rate(keys=[rate_key(key, self.prefix)], args=args)
        if int(allowed) == 1:
            return RateDecision(True, 0.0, None)
        return RateDecision(False, max(float(_text(wait)), 0.0), _text(name))
