"""Health, metrics, OpenAPI docs, the chat page's files, and start-up checks."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.server.conftest import ADMIN, RecordingSpend, asgi_client, scripted_assistant, with_settings
from vouched.errors import StoreError
from vouched.llm.scripted import ScriptedProvider
from vouched.server import create_app
from vouched.server.cli import check_corpus
from vouched.server.errors import error_status

pytestmark = pytest.mark.anyio


async def test_healthz_loads_nothing(site):
    app = create_app(site)
    async with asgi_client(app) as c:
        r = await c.get("/healthz")
    assert r.json()["status"] == "ok"
    assert app.state.services._assistant is None  # models load lazily


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


async def test_metrics_count_requests_outcomes_stages_and_gate_stops(site):
    provider = ScriptedProvider(["The search ran on postgres with pgvector [1]. ", "I built it myself [1]. More words here."])
    app = create_app(site, assistant=scripted_assistant(site, provider, RecordingSpend()))
    async with asgi_client(app) as c:
        await c.post("/v1/ask", json={"question": "Which database did the Tessera Health search run on?"})
        await c.post("/v1/ask", json={"question": "What are her day rates?"})
        await c.post("/v1/ask", json={"question": ""})
        r = await c.get("/metrics", headers=ADMIN)
    assert r.headers["content-type"].startswith("text/plain")
    m = samples(r.text)
    assert m[("vouched_http_requests_total", (("method", "POST"), ("route", "/v1/ask"), ("status", "200")))] == 2
    assert m[("vouched_http_requests_total", (("method", "POST"), ("route", "/v1/ask"), ("status", "400")))] == 1
    assert m[("vouched_answers_total", (("layer", "L1"), ("outcome", "refused")))] == 1
    assert m[("vouched_answers_total", (("layer", "L5"), ("outcome", "held")))] == 1
    assert m[("vouched_gate_stops_total", (("rule", "first_person"),))] == 1
    assert m[("vouched_stage_seconds_count", (("stage", "l1"),))] == 2
    assert ("vouched_stage_seconds_count", (("stage", "retrieve"),)) in m
    assert m[("vouched_time_to_first_event_seconds_count", (("endpoint", "ask"),))] == 2


async def test_spend_counters_are_exported_from_the_built_spend_module(site, tmp_path):
    cfg = with_settings(site, spend={"path": tmp_path / "c.sqlite"}, rate_limit={"enabled": True})
    app = create_app(cfg)
    async with asgi_client(app) as c:
        await c.post("/v1/ask", json={"question": "What are her day rates?"})
        text = (await c.get("/metrics", headers=ADMIN)).text
    for name in ("vouched_spend_reservations_total", "vouched_spend_settled_microusd_total",
                 "vouched_rate_allowed_total", "vouched_rate_store_errors_total"):
        assert name in text
    assert samples(text)[("vouched_rate_allowed_total", ())] == 1


async def test_two_apps_have_separate_registries(site):
    a, b = create_app(site), create_app(site)
    async with asgi_client(a) as c:
        await c.get("/healthz")
    assert a.state.metrics.registry is not b.state.metrics.registry
    assert "/healthz" not in b.state.metrics.render().decode()


async def test_openapi_documents_the_event_schema(site):
    async with asgi_client(create_app(site)) as c:
        spec = (await c.get("/openapi.json", headers=ADMIN)).json()
        docs = await c.get("/docs", headers=ADMIN)
    ask = spec["paths"]["/v1/ask"]["post"]
    assert "event: sentence" in ask["description"] and "event: done" in ask["description"]
    assert "text/event-stream" in ask["responses"]["200"]["content"]
    assert "vouched" in spec["paths"]["/v1/chat/completions"]["post"]["description"]
    assert docs.status_code == 200


async def test_chat_page_and_its_files_are_self_contained(site):
    async with asgi_client(create_app(site)) as c:
        page = await c.get("/")
        files = {p: await c.get(f"/static/{p}") for p in ("chat.js", "chat.css")}
        cfg = (await c.get("/v1/config")).json()
    assert page.status_code == 200 and "default-src 'none'" in page.headers["content-security-policy"]
    html = page.text
    assert '"suggested_questions"' in html and "{{CONFIG}}" not in html
    for body in [html, *(r.text for r in files.values())]:
        assert "http://" not in body and "https://" not in body  # no external assets
    assert all(r.status_code == 200 for r in files.values())
    assert cfg["languages"] == ["en", "es", "fa"] and cfg["suggested_questions"]["fa"]


def test_errors_map_to_statuses_in_one_place():
    from vouched.llm.errors import ProviderAuthError, ProviderUnavailable
    from vouched.server.errors import InvalidRequest, RateLimited, RequestTimeout

    assert error_status(InvalidRequest("x")) == (400, "invalid_request")
    assert error_status(RateLimited("x", retry_after_s=3, limit="minute")) == (429, "rate_limited")
    assert error_status(RequestTimeout("x")) == (504, "timeout")
    assert error_status(ProviderUnavailable("x")) == (503, "provider_unavailable")
    assert error_status(ProviderAuthError("x")) == (502, "provider_auth")
    assert error_status(StoreError("x")) == (503, "store_unavailable")
    assert error_status(KeyError("x")) == (500, "internal_error")


def test_serve_refuses_to_start_without_a_corpus(site, tmp_path):
    check_corpus(site)
    with pytest.raises(StoreError, match="vouched ingest"):
        check_corpus(with_settings(site, store={"path": tmp_path / "none.sqlite"}))


def test_load_run_reports_throughput_and_time_to_first_sentence(site):
    from tests.server.conftest import running
    from vouched.server.loadtest import run_load

    with running(create_app(site)) as url:
        report = run_load(url, clients=3, requests_per_client=2, question="Which open-source libraries does she maintain?")
    assert report["requests"] == 6 and report["ok"] == 6, report
    assert report["outcomes"] == {"answered": 6}
    assert report["requests_per_s"] > 0
    assert 0 < report["ttfs_p50_ms"] <= report["ttfs_p95_ms"]


async def test_the_page_says_when_the_corpus_is_not_calibrated(site):
    """Issue 19: until a corpus is calibrated the chat page says so; a calibrated one shows nothing."""
    from tests.server.conftest import with_settings

    uncalibrated = with_settings(site, threshold={"value": 0.0})
    calibrated = with_settings(site, threshold={"value": 0.5})
    async with asgi_client(create_app(uncalibrated)) as c:
        assert (await c.get("/v1/config")).json()["calibrated"] is False
        html = (await c.get("/")).text
    async with asgi_client(create_app(calibrated)) as c:
        assert (await c.get("/v1/config")).json()["calibrated"] is True
    assert 'id="uncalibrated"' in html and "vouched calibrate --auto --write" in html
