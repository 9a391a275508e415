import ipaddress

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.spend.suite import FakeClock
from vouched.config import RateLimitSettings
from vouched.errors import ConfigError
from vouched.spend import Limit, RateDecision, RateLimiter, SQLiteRateCounters, client_key, decide_rate, limit_key
from vouched.spend.ratelimit import forwarded_for, parse_address

EDGE = ["10.0.0.0/8", "fd00::/8"]


# -- client_key ---------------------------------------------------------------------------

@pytest.mark.parametrize("peer,headers,want", [
    # Direct client: its headers are ignored.
    ("203.0.113.9", {"X-Forwarded-For": "198.51.100.1"}, "203.0.113.9"),
    ("203.0.113.9", {"Forwarded": "for=198.51.100.1"}, "203.0.113.9"),
    # Through the edge proxy: the hop it wrote.
    ("10.0.0.2", {"X-Forwarded-For": "198.51.100.1"}, "198.51.100.1"),
    ("10.0.0.2", {"x-forwarded-for": "1.1.1.1, 198.51.100.1"}, "198.51.100.1"),  # left hop was the client's own
    ("10.0.0.2", {"X-Forwarded-For": "198.51.100.1, 10.1.2.3"}, "198.51.100.1"),  # through two proxies
    ("10.0.0.2", {"X-Forwarded-For": "10.9.9.9, 10.1.2.3"}, "10.9.9.9"),  # all trusted: the leftmost
    ("10.0.0.2", {"X-Forwarded-For": "198.51.100.1:5555"}, "198.51.100.1"),
    ("10.0.0.2", {"X-Forwarded-For": "[2001:db8::1]:443"}, "2001:db8::1"),
    ("10.0.0.2", {}, "10.0.0.2"),
    # RFC 7239.
    ("10.0.0.2", {"Forwarded": 'for="[2001:db8:cafe::17]:4711";proto=https'}, "2001:db8:cafe::17"),
    ("10.0.0.2", {"Forwarded": "for=1.1.1.1, For=192.0.2.60;by=10.0.0.2"}, "192.0.2.60"),
    ("10.0.0.2", {"Forwarded": 'for=192.0.2.43, for="[fd00::5]"'}, "192.0.2.43"),
    ("fd00::1", {"Forwarded": 'for="192.0.2.43:80";host="a,b"'}, "192.0.2.43"),
    # X-Forwarded-For wins when both are there (auto).
    ("10.0.0.2", {"Forwarded": "for=1.1.1.1", "X-Forwarded-For": "198.51.100.1"}, "198.51.100.1"),
    # Garbage: the peer.
    ("10.0.0.2", {"X-Forwarded-For": "unknown"}, "10.0.0.2"),
    ("10.0.0.2", {"X-Forwarded-For": "198.51.100.1,"}, "10.0.0.2"),
    ("10.0.0.2", {"X-Forwarded-For": "bogus, 198.51.100.1"}, "198.51.100.1"),  # stops before the garbage
    ("10.0.0.2", {"Forwarded": "for=_hidden"}, "10.0.0.2"),
    ("10.0.0.2", {"Forwarded": 'for="[2001:db8::1'}, "10.0.0.2"),
    ("10.0.0.2", {"Forwarded": "proto=https"}, "10.0.0.2"),
    # Peers: canonical form; IPv4-mapped IPv6 is IPv4; a non-IP peer stays as is.
    ("::ffff:203.0.113.9", {}, "203.0.113.9"),
    ("2001:DB8:0:0::1", {}, "2001:db8::1"),
    ("testclient", {"X-Forwarded-For": "1.2.3.4"}, "testclient"),
])
def test_client_key(peer, headers, want):
    assert client_key(peer, headers, EDGE) == want


def test_header_choice_names_the_one_the_proxy_writes():
    h = {"Forwarded": "for=198.51.100.1", "X-Forwarded-For": "1.1.1.1"}
    assert client_key("10.0.0.2", h, EDGE, header="forwarded") == "198.51.100.1"
    assert client_key("10.0.0.2", {"Forwarded": "for=1.1.1.1"}, EDGE, header="x-forwarded-for") == "10.0.0.2"


def test_a_bad_trusted_proxy_is_a_config_error():
    with pytest.raises(ConfigError, match="rate_limit.trusted_proxies"):
        RateLimiter(RateLimitSettings(trusted_proxies=["10.0.0.0/33"]), SQLiteRateCounters("/nonexistent/x"))


def test_forwarded_parsing():
    assert forwarded_for('for="\\"a\\"";by=x, for=1.2.3.4') == ['"a"', "1.2.3.4"]
    assert forwarded_for("for=1.2.3.4;for=5.6.7.8") is None
    assert parse_address("1.2.3.4:http") is None and parse_address("[::1]x") is None


ips = st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)).map(str)
header_text = st.one_of(st.text(max_size=80), st.lists(ips, max_size=5).map(", ".join),
                        st.lists(ips, max_size=5).map(lambda xs: ", ".join(f'for="{x}"' for x in xs)))
headers = st.dictionaries(st.sampled_from(["X-Forwarded-For", "x-forwarded-for", "Forwarded", "forwarded",
                                           "X-Real-IP", "True-Client-IP"]), header_text, max_size=4)


@given(ips, headers)
def test_an_untrusted_peer_is_never_keyed_by_a_header(peer, hs):
    assume(not any(ipaddress.ip_address(peer) in ipaddress.ip_network(n) for n in EDGE))
    assume(not ipaddress.ip_address(peer).version == 6 or ipaddress.ip_address(peer).ipv4_mapped is None)
    assert client_key(peer, hs, EDGE) == client_key(peer, {}, EDGE) == str(ipaddress.ip_address(peer))


@given(st.text(max_size=60), ips)
def test_what_a_client_prepends_never_picks_the_key(prefix, real):
    a = ipaddress.ip_address(real)
    assume(not any(a in ipaddress.ip_network(n) for n in EDGE) and getattr(a, "ipv4_mapped", None) is None)
    assert client_key("10.0.0.2", {"X-Forwarded-For": f"{prefix},{real}"}, EDGE) == str(a)


def test_ipv6_counts_by_its_64():
    assert limit_key("2001:db8:1:2:aaaa::1") == limit_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert limit_key("192.0.2.1") == "192.0.2.1" and limit_key("testclient") == "testclient"


def test_a_client_sending_x_forwarded_for_directly_cannot_change_its_key(tmp_path):
    clock = FakeClock()
    limiter = RateLimiter(RateLimitSettings(per_minute=3, trusted_proxies=["10.0.0.0/8"]),
                          SQLiteRateCounters(tmp_path / "c.sqlite"), clock)
    decisions = []
    for i in range(6):
        spoof = {"X-Forwarded-For": f"198.51.100.{i}", "Forwarded": f"for=198.51.100.{i}", "X-Real-IP": f"192.0.2.{i}"}
        key = limiter.client_key("203.0.113.50", spoof)
        assert key == "203.0.113.50"
        decisions.append(limiter.check(key).allowed)
        clock.advance(1)
    assert decisions == [True, True, True, False, False, False]


# -- decide_rate --------------------------------------------------------------------------

limits_st = st.lists(st.builds(Limit, st.sampled_from(["a", "b", "c"]), st.integers(0, 6), st.integers(1, 50)),
                     min_size=1, max_size=3)
gaps = st.lists(st.integers(0, 20), min_size=1, max_size=80)


@given(limits_st, gaps)
def test_no_window_ever_holds_more_than_its_limit(limits, steps):
    now, admitted = 0, []
    for g in steps:
        now += g
        if decide_rate(admitted, limits, now).allowed:
            admitted.append(now)
    for lim in limits:
        if lim.count:
            for t in admitted:
                assert sum(1 for h in admitted if t - lim.period_s < h <= t) <= lim.count


@given(limits_st, gaps)
def test_retry_after_is_exactly_when_the_request_would_pass(limits, steps):
    now, admitted = 0, []
    for g in steps:
        now += g
        d = decide_rate(admitted, limits, now)
        if d.allowed:
            admitted.append(now)
            continue
        assert d.retry_after_s > 0 and d.limit_name in {lim.name for lim in limits}
        assert decide_rate(admitted, limits, now + d.retry_after_s).allowed
        assert not decide_rate(admitted, limits, now + d.retry_after_s - 0.5).allowed


def test_zero_means_no_limit_and_disabled_means_no_store():
    assert decide_rate([0.0] * 100, [Limit("minute", 0, 60)], 1.0) == RateDecision(True)

    class Exploding:
        def hit(self, *a):
            raise AssertionError("not called")

        def close(self):
            pass

    assert RateLimiter(RateLimitSettings(enabled=False), Exploding()).check("k").allowed
    assert RateLimiter(RateLimitSettings(per_minute=0, per_hour=0, per_day=0), Exploding()).check("k").allowed


def test_a_failing_store_lets_requests_through_and_counts_it():
    class Down:
        def hit(self, *a):
            raise ConnectionError("refused")

        def close(self):
            pass

    limiter = RateLimiter(RateLimitSettings(), Down())
    assert limiter.check("192.0.2.1") == RateDecision(True)
    assert limiter.metrics.store_errors.value() == 1
