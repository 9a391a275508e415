"""Rate limits: 429 + Retry-After, keyed by the peer (or what a trusted proxy saw), never by a header alone."""

from __future__ import annotations

import httpx
import pytest

from tests.server.conftest import ADMIN, asgi_client, running, with_settings
from vouched.server import create_app

pytestmark = pytest.mark.anyio

REFUSED = {"question": "What are her day rates?"}  # L1: cheap, loads nothing


def limited(site, tmp_path, **rate):
    return with_settings(site, rate_limit={"enabled": True, "per_minute": 2, "per_hour": 0, "per_day": 0, **rate},
                         spend={"path": tmp_path / "counters.sqlite"})


async def test_third_request_in_a_minute_is_429_with_retry_after(site, tmp_path):
    app = create_app(limited(site, tmp_path))
    async with asgi_client(app) as c:
        codes = [(await c.post("/v1/ask", json=REFUSED)).status_code for _ in range(2)]
        r = await c.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
        other = await asgi_client(app, peer="198.51.100.9").post("/v1/ask", json=REFUSED)
        metrics = (await c.get("/metrics", headers=ADMIN)).text
    assert codes == [200, 200]
    assert r.status_code == 429
    assert 1 <= int(r.headers["retry-after"]) <= 60
    err = r.json()["error"]
    assert err["type"] == "rate_limited" and err["limit"] == "minute"
    assert other.status_code == 200  # another address has its own budget
    assert 'vouched_rate_limited_total{limit="minute"} 1.0' in metrics


async def test_health_metrics_and_page_are_not_rate_limited(site, tmp_path):
    app = create_app(limited(site, tmp_path, per_minute=1))
    async with asgi_client(app) as c:
        codes = {(await c.get(p, headers=ADMIN)).status_code for p in ("/healthz", "/metrics", "/", "/v1/config") for _ in range(3)}
    assert codes == {200}


async def test_x_forwarded_for_from_a_client_cannot_change_its_key(site, tmp_path):
    """A client talking to the service directly rotates X-Forwarded-For / Forwarded: still one key."""
    app = create_app(limited(site, tmp_path))
    async with asgi_client(app, peer="203.0.113.7") as c:
        codes = []
        for i in range(4):
            headers = {"X-Forwarded-For": f"10.0.0.{i}", "Forwarded": f"for=192.0.2.{i}", "X-Real-IP": f"10.1.1.{i}"}
            codes.append((await c.post("/v1/ask", json=REFUSED, headers=headers)).status_code)
    assert codes == [200, 200, 429, 429]


async def test_behind_a_trusted_proxy_the_forwarded_address_is_the_key(site, tmp_path):
    app = create_app(limited(site, tmp_path, trusted_proxies=["10.9.0.0/16"]))
    async with asgi_client(app, peer="10.9.0.5") as c:
        spoof_via_proxy = [(await c.post("/v1/ask", json=REFUSED, headers={"X-Forwarded-For": f"192.0.2.{i}"})).status_code
                           for i in range(4)]
        # the proxy appends the address it saw; a client-written hop to its left changes nothing
        chained = [(await c.post("/v1/ask", json=REFUSED, headers={"X-Forwarded-For": f"1.2.3.{i}, 198.51.100.1"})).status_code
                   for i in range(3)]
    assert spoof_via_proxy == [200, 200, 200, 200]  # four clients the proxy saw
    assert chained == [200, 200, 429]


def test_real_server_keys_by_the_peer_not_x_forwarded_for(site, tmp_path):
    """Over real TCP (uvicorn as `vouched serve` runs it), a client-written X-Forwarded-For is ignored."""
    app = create_app(limited(site, tmp_path))
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as c:
        codes = [c.post("/v1/ask", json=REFUSED, headers={"X-Forwarded-For": f"10.0.0.{i}"}).status_code for i in range(3)]
    assert codes == [200, 200, 429]
