"""Rate limits per client address: per minute, per hour, per day, as sliding windows.

Which address: the one the trusted edge proxy observed. `X-Forwarded-For` / `Forwarded` are
read only when the direct peer is a configured trusted proxy, walking the hops from the
right (the end our own proxies wrote) past trusted proxies to the first untrusted hop.
Anything a client can write on its own — a header sent straight to us, hops to the left of
the first untrusted one — never picks the key.

How many: a sliding-window log. A request is admitted when, for every limit, fewer than
`count` admitted requests fall in the window (now - period, now]; refused requests are not
recorded, so hammering does not extend a lockout. `retry_after_s` is exact: when enough old
requests leave every window. Unlike a token bucket (which admits a full burst plus the
refill, up to twice the limit in one period) no window ever holds more than `count`.

When the counter store fails, or does not answer within `rate_limit.deadline_s` (the check
runs on a worker thread, never on the event loop: `acheck`), requests pass (fail open) and `RateMetrics.store_errors`
counts them: an outage of the limiter must not become an outage of the site. The spend cap,
which fails closed, still bounds what abuse can cost.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Literal, Mapping, Protocol, Sequence, runtime_checkable

from vouched.errors import ConfigError
from vouched.spend.metrics import RateMetrics

if TYPE_CHECKING:
    from vouched.config import RateLimitSettings

log = logging.getLogger("vouched.spend")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
HeaderChoice = Literal["auto", "x-forwarded-for", "forwarded"]


# -- which client ------------------------------------------------------------------------

@lru_cache(maxsize=64)
def parse_proxies(proxies: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    """Trusted proxies as networks ("10.0.0.7" is a /32); ConfigError names a bad entry."""
    out = []
    for p in proxies:
        try:
            out.append(ipaddress.ip_network(p.strip(), strict=False))
        except ValueError:
            raise ConfigError(f"rate_limit.trusted_proxies: {p!r} is not an IP address or CIDR "
                              "(e.g. \"127.0.0.1\", \"10.0.0.0/8\", \"fd00::/8\")") from None
    return tuple(out)


def parse_address(text: str) -> IPAddress | None:
    """An IP from a peer or a hop: "1.2.3.4", "1.2.3.4:80", "2001:db8::1", "[2001:db8::1]:80".
    IPv4-mapped IPv6 becomes IPv4. Anything else (names, "unknown", "_hidden") is None."""
    s = text.strip()
    if s.startswith("["):
        end = s.find("]")
        if end < 0 or (s[end + 1:] and not s[end + 1:].startswith(":")):
            return None
        host = s[1:end]
    elif s.count(":") == 1:
        host, _, port = s.partition(":")
        if not port.isdigit():
            return None
    else:
        host = s
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def _trusted(addr: IPAddress, nets: Sequence[IPNetwork]) -> bool:
    return any(addr in n for n in nets)


def _split_unquoted(value: str, sep: str) -> list[str] | None:
    """Split on `sep` outside quoted strings (RFC 7230 quoted-string); None if a quote is open."""
    parts, cur, quoted, escaped = [], [], False, False
    for ch in value:
        if escaped:
            escaped = False
        elif quoted and ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif ch == sep and not quoted:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if quoted or escaped:
        return None
    parts.append("".join(cur))
    return parts


def _unquote(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] == '"':
        out, escaped = [], False
        for ch in v[1:-1]:
            if escaped or ch != "\\":
                out.append(ch)
                escaped = False
            else:
                escaped = True
        return "".join(out)
    return v


def forwarded_for(value: str) -> list[str] | None:
    """The `for=` of each element of an RFC 7239 `Forwarded` header, in order; None if any
    element is malformed or lacks `for=` (a hop we cannot read ends the walk)."""
    elements = _split_unquoted(value, ",")
    if elements is None:
        return None
    hops = []
    for el in elements:
        pairs = _split_unquoted(el, ";")
        found = None
        for pair in pairs or ():
            name, eq, val = pair.partition("=")
            if not eq:
                return None
            if name.strip().lower() == "for":
                if found is not None:
                    return None
                found = _unquote(val)
        if found is None:
            return None
        hops.append(found)
    return hops


def _header(headers: Mapping[str, str], name: str) -> str | None:
    # Repeated header lines are one list (RFC 9110 §5.3); callers should pass them joined.
    values = [v for k, v in headers.items() if k.lower() == name]
    return ",".join(values) if values else None


def _hops(headers: Mapping[str, str], header: HeaderChoice) -> list[str] | None:
    if header in ("auto", "x-forwarded-for"):
        xff = _header(headers, "x-forwarded-for")
        if xff is not None:
            return xff.split(",")
        if header == "x-forwarded-for":
            return []
    fwd = _header(headers, "forwarded")
    if fwd is None:
        return []
    return forwarded_for(fwd)


def client_key(
    peer: str,
    headers: Mapping[str, str],
    trusted_proxies: Sequence[str],
    *,
    header: HeaderChoice = "auto",
) -> str:
    """The client address the rate limits count against (canonical text form).

    The headers matter only when `peer` (the TCP peer) is inside `trusted_proxies`. Then the
    hops are walked from the right, skipping trusted proxies; the first untrusted hop is the
    client (all trusted: the leftmost). A missing header, an unreadable hop or an empty one
    gives the peer. `header="auto"` reads X-Forwarded-For, or Forwarded when there is no
    X-Forwarded-For; name the one your proxy writes when it passes the other through.
    """
    addr = parse_address(peer)
    if addr is None:
        return peer.strip()
    nets = parse_proxies(tuple(trusted_proxies))
    if not _trusted(addr, nets):
        return str(addr)
    hops = _hops(headers, header)
    if not hops:
        return str(addr)
    client = None
    for hop in reversed(hops):
        a = parse_address(hop)
        if a is None:
            return str(addr)
        client = a
        if not _trusted(a, nets):
            break
    return str(client)


def limit_key(client: str) -> str:
    """The counter key of a client: an IPv6 address counts by its /64 (one subscriber's
    usual allocation, so rotating addresses inside it gains nothing); IPv4 as is."""
    try:
        a = ipaddress.ip_address(client)
    except ValueError:
        return client
    if isinstance(a, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((int(a) >> 64 << 64, 64)))
    return str(a)


# -- how many ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Limit:
    name: str
    count: int  # admitted requests per window; 0: no limit
    period_s: float


@dataclass(frozen=True)
class RateDecision:
    allowed: bool
    retry_after_s: float = 0.0
    limit_name: str | None = None  # the limit that refused, the one to wait longest for


ALLOW = RateDecision(True, 0.0, None)


def limits_from(settings: RateLimitSettings) -> tuple[Limit, ...]:
    all_ = (Limit("minute", settings.per_minute, 60), Limit("hour", settings.per_hour, 3600),
            Limit("day", settings.per_day, 86400))
    return tuple(lim for lim in all_ if lim.count > 0)


def decide_rate(hits: Sequence[float], limits: Sequence[Limit], now: float) -> RateDecision:
    """Admit a request at `now` given the times of admitted requests? A hit counts in a
    window while hit > now - period. The Redis script mirrors this function line by line."""
    worst: tuple[float, str] | None = None
    for lim in limits:
        if lim.count <= 0:
            continue
        start = now - lim.period_s
        inside = sorted(t for t in hits if t > start)
        if len(inside) >= lim.count:
            # The window admits again once this hit (and all before it) has left it.
            wait = inside[len(inside) - lim.count] + lim.period_s - now
            if worst is None or wait > worst[0]:
                worst = (wait, lim.name)
    if worst is None:
        return ALLOW
    return RateDecision(False, max(worst[0], 0.0), worst[1])


@runtime_checkable
class RateCounters(Protocol):
    """A rate counter store: `hit` decides with `decide_rate` and records an admitted hit,
    in one atomic step. `now` is Unix seconds."""

    def hit(self, key: str, limits: Sequence[Limit], now: float) -> RateDecision: ...

    def close(self) -> None: ...


class RateLimiter:
    def __init__(
        self,
        settings: RateLimitSettings,
        counters: RateCounters,
        clock: Callable[[], float] = time.time,
        metrics: RateMetrics | None = None,
        *,
        header: HeaderChoice = "auto",
    ) -> None:
        self.settings = settings
        self.counters = counters
        self.clock = clock
        self.metrics = metrics or RateMetrics()
        self.header = header
        self.limits = limits_from(settings)
        self._proxies = tuple(settings.trusted_proxies)
        parse_proxies(self._proxies)  # a bad entry fails at start
        self._runner = None

    def client_key(self, peer: str, headers: Mapping[str, str]) -> str:
        return client_key(peer, headers, self._proxies, header=self.header)

    async def acheck(self, key: str, limits: Sequence[Limit] | None = None) -> RateDecision:
        """`check` on a worker thread, waiting at most `rate_limit.deadline_s`; past it, pass (fail open)."""
        from vouched.spend.budget import DeadlinePassed, DeadlineRunner

        if not self.settings.enabled or not (self.limits if limits is None else limits):
            return ALLOW
        if self._runner is None:
            self._runner = DeadlineRunner(getattr(self.settings, "deadline_s", 0.1), name="vouched-rate")
        try:
            return await self._runner.acall(self._check, key, limits)
        except DeadlinePassed as exc:
            log.warning("rate counter store too slow; letting the request through (fail open): %s", exc)
            self.metrics.store_errors.inc()
            return ALLOW

    def check(self, key: str, limits: Sequence[Limit] | None = None) -> RateDecision:
        """Admit (and count) one request from `key`, or say how long to wait (blocking; see `acheck`)."""
        return self._check(key, limits)

    def _check(self, key: str, limits: Sequence[Limit] | None = None) -> RateDecision:
        limits = self.limits if limits is None else tuple(limits)
        if not self.settings.enabled or not limits:
            return ALLOW
        try:
            decision = self.counters.hit(limit_key(key), limits, self.clock())
        except Exception as exc:  # the store failed: let it through (fail open), count it
            log.warning("rate counter store failed; letting the request through (fail open): %r", exc)
            self.metrics.store_errors.inc()
            return ALLOW
        if decision.allowed:
            self.metrics.allowed.inc()
        else:
            self.metrics.limited.inc(label=decision.limit_name or "")
        return decision
