"""Callers and tenants: keys, grants, the 401/403 answers, operator routes (in-process; the
randomized leak test against real `vouched serve` processes is test_tenant_leak.py)."""

from __future__ import annotations

import base64
import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.server.conftest import ADMIN, asgi_client, with_settings
from vouched.server import create_app
from vouched.server.auth import (
    FORBIDDEN_TENANT, ApiKey, Caller, KeyRing, hash_key, identify, new_key, presented_key, read_keys_file,
    tenant_for, write_keys_file,
)
from vouched.server.errors import Forbidden, Unauthorized

TENANTS = st.text(alphabet="abcdefgh.-_", min_size=1, max_size=6)


def test_a_new_key_is_random_and_only_its_hash_is_kept(tmp_path):
    (i1, k1), (i2, k2) = new_key(), new_key()
    assert k1 != k2 and i1 != i2 and k1.startswith(f"vk_{i1}_") and len(k1) > 50
    ring = KeyRing([ApiKey(id=i1, hash=hash_key(k1), tenants=("a",))])
    assert ring.find(k1).id == i1 and ring.find(k2) is None and ring.find(k1 + "x") is None
    path = tmp_path / "keys.toml"
    write_keys_file(path, ring.keys)
    text = path.read_text()
    assert k1 not in text and hashlib.sha256(k1.encode()).hexdigest() in text
    assert read_keys_file(path) == list(ring.keys)
    assert path.stat().st_mode & 0o077 == 0


def test_a_revoked_key_is_not_found():
    kid, key = new_key()
    assert KeyRing([ApiKey(id=kid, hash=hash_key(key), tenants=("a",), revoked_at="2026-12-01T00:00:00Z")]).find(key) is None


@pytest.mark.parametrize("header,expected", [
    (None, None), ("Bearer abc", "abc"), ("bearer  abc ", "abc"), ("Token abc", ""), ("Bearer", ""),
    ("Basic " + base64.b64encode(b"ops:abc").decode(), "abc"), ("Basic !!!", ""),
])
def test_presented_key(header, expected):
    headers = {} if header is None else {"Authorization": header}
    assert presented_key(headers) == expected


@settings(max_examples=300, deadline=None)
@given(granted=st.lists(TENANTS, max_size=4, unique=True), others=st.lists(TENANTS, max_size=4, unique=True),
       requested=st.one_of(st.none(), TENANTS, st.text(max_size=8)), default=TENANTS)
def test_a_tenant_is_served_only_when_granted_and_refusals_name_none(granted, others, requested, default):
    caller = Caller(ApiKey(id="k", hash="sha256:" + "0" * 64, tenants=tuple(granted)), tuple(granted))
    try:
        served = tenant_for(caller, requested, default)
    except (Forbidden, Unauthorized) as exc:
        assert str(exc) == FORBIDDEN_TENANT  # one fixed message: no tenant, granted or not, named
        assert requested not in granted or not granted
        return
    assert served in granted
    assert served == requested or (not requested and served == (default if default in granted else granted[0]))


def test_an_anonymous_caller_sees_only_public_tenants():
    ring = KeyRing()
    anon = identify(None, ring, ("site",))
    assert tenant_for(anon, None, "site") == "site"
    with pytest.raises(Forbidden):
        tenant_for(anon, "internal", "site")
    with pytest.raises(Unauthorized):
        tenant_for(identify(None, ring, ()), None, "site")  # a private deployment
    with pytest.raises(Unauthorized):
        identify("vk_wrong", ring, ("site",))  # a wrong or revoked key is never anonymous
    for placeholder in ("", "not-needed", "EMPTY", "sk-test"):  # what OpenAI SDK users put in api_key
        assert identify(placeholder, ring, ("site",)).key is None


REFUSED = {"question": "What are her day rates?"}  # L1: cheap, loads nothing


def _keyed(site, *, public=None, **key):
    kid, secret = new_key()
    ring = KeyRing([*KeyRing.load(site).keys, ApiKey(id=kid, hash=hash_key(secret), **key)])
    cfg = with_settings(site, server={"public_tenants": public}) if public is not None else site
    return cfg, ring, {"Authorization": f"Bearer {secret}"}


@pytest.mark.anyio
async def test_endpoints_answer_401_403_and_granted(site):
    cfg, ring, bearer = _keyed(site, public=[], tenants=("default",))
    app = create_app(cfg, keys=ring)
    chat = {"messages": [{"role": "user", "content": "What are her day rates?"}]}
    async with asgi_client(app) as c:
        anon = await c.post("/v1/ask", json=REFUSED)
        wrong = await c.post("/v1/ask", json=REFUSED, headers={"Authorization": "Bearer vk_nope_nope"})
        placeholder = await c.post("/v1/ask", json=REFUSED, headers={"Authorization": "Bearer not-needed"})
        ok = await c.post("/v1/ask", json=REFUSED, headers=bearer)
        ok_chat = await c.post("/v1/chat/completions", json=chat, headers=bearer)
        other = await c.post("/v1/ask", json={**REFUSED, "tenant": "secret-team"}, headers=bearer)
        other_chat = await c.post("/v1/chat/completions", json={**chat, "tenant": "secret-team"}, headers=bearer)
    assert anon.status_code == 401 and anon.headers["www-authenticate"].startswith("Bearer")
    assert wrong.status_code == 401 and anon.json()["error"]["type"] == "unauthorized"
    assert placeholder.status_code == 401  # anonymous, and this deployment has no public tenant
    assert ok.status_code == 200 and ok_chat.status_code == 200
    for r in (other, other_chat):
        assert r.status_code == 403 and r.json() == {"error": {"type": "forbidden", "message": FORBIDDEN_TENANT}}
        assert "secret-team" not in r.text and "default" not in r.text


@pytest.mark.anyio
async def test_operator_routes_need_an_admin_key(site):
    cfg, ring, bearer = _keyed(site, tenants=("default",))
    app = create_app(cfg, keys=ring)
    async with asgi_client(app) as c:
        anon = {p: (await c.get(p)).status_code for p in ("/metrics", "/docs", "/openapi.json")}
        user = {p: (await c.get(p, headers=bearer)).status_code for p in ("/metrics", "/docs", "/openapi.json")}
        admin = {p: (await c.get(p, headers=ADMIN)).status_code for p in ("/metrics", "/docs", "/openapi.json")}
        basic = base64.b64encode(("ops:" + ADMIN["Authorization"].split()[1]).encode()).decode()
        browser = (await c.get("/docs", headers={"Authorization": f"Basic {basic}"})).status_code
        health = (await c.get("/healthz")).status_code
    assert set(anon.values()) == {401} and set(user.values()) == {403} and set(admin.values()) == {200}
    assert browser == 200 and health == 200


@pytest.mark.anyio
async def test_with_an_ops_port_the_operator_routes_leave_the_main_app(site):
    from vouched.server.app import ops_app

    app = create_app(with_settings(site, server={"ops_port": 9109}))
    async with asgi_client(app) as c:
        main = {p: (await c.get(p, headers=ADMIN)).status_code for p in ("/metrics", "/docs", "/openapi.json")}
    async with asgi_client(ops_app(app)) as c:
        ops = {p: (await c.get(p)).status_code for p in ("/metrics", "/docs", "/openapi.json")}
    assert set(main.values()) == {404} and set(ops.values()) == {200}


@pytest.mark.anyio
async def test_per_key_rate_limit_counts_besides_the_address(site, tmp_path):
    cfg, ring, bearer = _keyed(with_settings(site, rate_limit={"enabled": True, "per_minute": 100, "per_hour": 0, "per_day": 0},
                                             spend={"path": tmp_path / "c.sqlite"}), tenants=("default",), per_minute=2)
    app = create_app(cfg, keys=ring)
    codes = []
    for i in range(3):  # three addresses, one key: the key's own limit stops the third
        async with asgi_client(app, peer=f"198.51.100.{i + 1}") as c:
            codes.append((await c.post("/v1/ask", json=REFUSED, headers=bearer)).status_code)
    async with asgi_client(app, peer="198.51.100.9") as c:
        anon = (await c.post("/v1/ask", json=REFUSED)).status_code
    assert codes == [200, 200, 429] and anon == 200


def test_keys_cli_create_list_revoke(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from vouched.cli import app

    (tmp_path / "vouched.toml").write_text('[corpus]\ntenant = "help"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VOUCHED_CONFIG", raising=False)
    monkeypatch.delenv("VOUCHED_KEYS_FILE", raising=False)
    run = CliRunner().invoke
    made = run(app, ["keys", "create", "--tenant", "help", "--tenant", "ops", "--name", "bot", "--per-minute", "5"])
    assert made.exit_code == 0, made.output
    key = made.stdout.strip().splitlines()[0]
    assert key.startswith("vk_")
    kid = key.split("_")[1]
    listed = run(app, ["keys", "list", "--json"])
    assert key not in listed.stdout and f'"{kid}"' in listed.stdout
    from vouched.config import load_config

    cfg = load_config(tmp_path / "vouched.toml")
    assert KeyRing.load(cfg).find(key).tenants == ("help", "ops")
    assert run(app, ["keys", "revoke", kid]).exit_code == 0
    assert KeyRing.load(cfg).find(key) is None
    assert run(app, ["keys", "create"]).exit_code == 2  # neither a tenant nor --admin


def test_the_official_openai_client_authenticates_with_its_api_key(site):
    """The OpenAI client's `api_key` is the vouched key: granted, wrong and ungranted tenant."""
    import openai

    from tests.server.conftest import running

    cfg, ring, bearer = _keyed(site, public=[], tenants=("default",))
    key = bearer["Authorization"].split()[1]
    with running(create_app(cfg, keys=ring)) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)
        done = client.chat.completions.create(model="vouched", messages=[{"role": "user", "content": "What are her day rates?"}])
        assert done.choices[0].message.content
        stream = client.chat.completions.create(model="vouched", stream=True,
                                                messages=[{"role": "user", "content": "What are her day rates?"}])
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=f"{url}/v1", api_key="vk_wrong", max_retries=0).chat.completions.create(
                model="vouched", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.PermissionDeniedError) as denied:
            client.chat.completions.create(model="vouched", messages=[{"role": "user", "content": "hi"}],
                                           extra_body={"tenant": "someone-else"})
        assert "someone-else" not in str(denied.value)
