"""POST /v1/ask: the SSE schema, limits, and errors mapped to statuses."""

from __future__ import annotations

import pytest

from tests.server.conftest import RecordingSpend, asgi_client, parse_sse, scripted_assistant, with_settings
from vouched.llm.errors import ProviderUnavailable
from vouched.llm.scripted import ScriptedProvider, ScriptedResponse
from vouched.server import create_app

pytestmark = pytest.mark.anyio

Q = "Which database did the Tessera Health search run on?"
OPEN_SOURCE = "Which open-source libraries does she maintain?"


async def ask(app, body, **kw):
    async with asgi_client(app, **kw) as c:
        return await c.post("/v1/ask", json=body)


async def test_answer_streams_sentences_then_done_with_sources(site):
    r = await ask(create_app(site), {"question": OPEN_SOURCE})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-cache"
    frames = parse_sse(r.text)
    kinds = [e for e, _ in frames]
    assert kinds[-1] == "done" and kinds.count("done") == 1
    assert set(kinds[:-1]) == {"sentence"}
    sentences = [d for e, d in frames if e == "sentence"]
    assert len(sentences) >= 1 and any("open-source" in s["text"] for s in sentences)
    done = frames[-1][1]
    assert done["type"] == "done" and done["outcome"] == "answered" and done["lang"] == "en"
    assert done["trace_id"] and done["sources"]
    numbers = {s["number"] for s in done["sources"]}
    assert all(set(s["sources"]) <= numbers for s in sentences)  # every cited number is listed
    src = done["sources"][0]
    assert {"number", "id", "doc_id", "title", "section", "date", "url", "kind"} <= set(src)


@pytest.mark.parametrize("question,lang,category", [
    ("What are Leila Navid's day rates?", "en", "fees"),
    ("هزینه‌ی همکاری با لیلا چقدر است؟", "fa", "fees"),
])
async def test_l1_refusal_is_a_refusal_event_in_the_readers_language(site, question, lang, category):
    frames = parse_sse((await ask(create_app(site), {"question": question})).text)
    assert [e for e, _ in frames] == ["refusal", "done"]
    refusal, done = frames[0][1], frames[1][1]
    assert refusal["layer"] == "L1" and refusal["category"] == category and refusal["text"]
    assert done["outcome"] == "refused" and done["lang"] == lang and done["sources"] == []


async def test_off_topic_is_refused_by_l2(site):
    frames = parse_sse((await ask(create_app(site), {"question": "What's the weather in Paris today?"})).text)
    assert frames[0][0] == "refusal" and frames[0][1]["layer"] == "L2"


async def test_previous_turn_reaches_the_pipeline(site):
    # "and his rates?" is only a fee question together with the previous question
    body = {"question": "And what does that cost?", "previous": {"question": "What are her day rates?", "answer": ""}}
    frames = parse_sse((await ask(create_app(site), body)).text)
    assert frames[0][0] == "refusal" and frames[0][1]["category"] == "fees"


async def test_notice_event_for_a_held_answer(site):
    provider = ScriptedProvider(["The search ran on postgres with pgvector [1]. ", "I built it in 1999 [1]. Then more text."])
    app = create_app(site, assistant=scripted_assistant(site, provider, RecordingSpend()))
    frames = parse_sse((await ask(app, {"question": Q})).text)
    kinds = [e for e, _ in frames]
    assert kinds == ["sentence", "notice", "done"]
    assert frames[1][1]["kind"] == "held" and frames[1][1]["rule"]
    assert frames[2][1]["outcome"] == "held"


# -- input limits -----------------------------------------------------------------------------

async def test_question_limit_counts_utf8_bytes(site):
    cfg = with_settings(site, server={"max_question_bytes": 40})
    app = create_app(cfg)
    fa = "پ" * 15  # 15 characters, 30 bytes: allowed
    assert (await ask(app, {"question": fa})).status_code == 200
    r = await ask(app, {"question": "پ" * 21})  # 21 characters, 42 bytes
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["type"] == "invalid_request" and err["param"] == "question"
    assert "42 UTF-8 bytes" in err["message"] and "40" in err["message"]


@pytest.mark.parametrize("body,param", [
    ({"question": ""}, "question"),
    ({"question": "   \n"}, "question"),
    ({}, "question"),
    ({"question": 42}, "question"),
    ({"question": "hi", "tenant": "../etc"}, "tenant"),
    ({"question": "hi", "lang": "english"}, "lang"),
    ({"question": "hi", "colour": "blue"}, "colour"),
    ({"question": "hi", "previous": {"answer": "x"}}, "previous.question"),
])
async def test_bad_bodies_are_400_with_the_field_named(site, body, param):
    r = await ask(create_app(site), body)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "invalid_request" and param in err["message"]


async def test_language_must_be_served(site):
    r = await ask(create_app(site), {"question": "Wer ist sie?", "lang": "de"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "lang"
    assert "['en', 'es', 'fa']" in r.json()["error"]["message"]


async def test_history_limit(site):
    app = create_app(with_settings(site, server={"max_history_bytes": 100}))
    r = await ask(app, {"question": "and then?", "previous": {"question": "q" * 50, "answer": "a" * 51}})
    assert r.status_code == 400 and r.json()["error"]["param"] == "previous"


async def test_malformed_json_and_wrong_method_and_unknown_path(site):
    app = create_app(site)
    async with asgi_client(app) as c:
        bad = await c.post("/v1/ask", content=b"{not json", headers={"content-type": "application/json"})
        get = await c.get("/v1/ask")
        missing = await c.get("/nowhere")
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request"
    assert get.status_code == 405 and get.json()["error"]["type"] == "method_not_allowed"
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found"


async def test_oversized_body_is_413_before_parsing(site):
    app = create_app(with_settings(site, server={"max_question_bytes": 100, "max_history_bytes": 0}))
    async with asgi_client(app) as c:
        r = await c.post("/v1/ask", content=b"x" * 1_100_000, headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["type"] == "payload_too_large"


# -- errors, before and after the stream starts ----------------------------------------------

async def test_no_corpus_is_503_json_not_a_stream(site, tmp_path):
    cfg = with_settings(site, store={"path": tmp_path / "empty.sqlite"})
    r = await ask(create_app(cfg), {"question": Q})
    assert r.status_code == 503
    assert r.headers["content-type"] == "application/json"
    err = r.json()["error"]
    assert err["type"] == "store_unavailable"
    assert str(tmp_path) not in err["message"]  # 5xx messages are fixed public sentences


async def test_provider_down_before_the_first_sentence_is_503(site):
    provider = ScriptedProvider(["never"], fail_after=0)
    app = create_app(site, assistant=scripted_assistant(site, provider, RecordingSpend()))
    r = await ask(app, {"question": Q})
    assert r.status_code == 503 and r.json()["error"]["type"] == "provider_unavailable"


async def test_provider_failure_mid_stream_is_an_error_event(site):
    provider = ScriptedProvider().queue([ScriptedResponse(
        ["The search ran on postgres with pgvector [1]. It used hnsw indexes [1]. ", "More"], fail_after=1,
        error=ProviderUnavailable("dropped"))])
    app = create_app(site, assistant=scripted_assistant(site, provider, RecordingSpend()))
    r = await ask(app, {"question": Q})
    frames = parse_sse(r.text)
    assert r.status_code == 200
    assert frames[0][0] == "sentence"
    assert frames[-1] == ("error", {"error": {"type": "provider_unavailable",
                                              "message": "The answer service is unavailable. Please try again later."}})


async def test_timeout_before_the_first_event_is_504(site):
    provider = ScriptedProvider(["The search ran on postgres [1]. It used hnsw indexes [1]."], delay=30)
    cfg = with_settings(site, server={"request_timeout_s": 1.0})
    app = create_app(cfg, assistant=scripted_assistant(cfg, provider, RecordingSpend()))
    r = await ask(app, {"question": Q})
    assert r.status_code == 504 and r.json()["error"]["type"] == "timeout"
    # The provider stream was closed, not left running. On a loaded machine the deadline can pass
    # before the pipeline opened (or first read) the stream; then there is nothing to cancel, but
    # any stream it did open must still be closed.
    assert provider.calls <= 1 and all(s.closed and s.cancelled for s in provider.streams)


async def test_timeout_mid_stream_cuts_with_an_error_event(site):
    chunks = ["The search ran on postgres with pgvector [1]. It used hnsw indexes", " [1].", " More"] + [" text"] * 20
    provider = ScriptedProvider(chunks, delay=0.15)  # ~3.5 s of stream: cut at 1.5 s even when retrieval is slow
    cfg = with_settings(site, server={"request_timeout_s": 1.5})
    spend = RecordingSpend()
    app = create_app(cfg, assistant=scripted_assistant(cfg, provider, spend))
    r = await ask(app, {"question": Q})
    frames = parse_sse(r.text)
    assert frames[0][0] == "sentence"
    assert frames[-1][0] == "error" and frames[-1][1]["error"]["type"] == "timeout"
    assert provider.cancelled
    assert len(spend.settled) == 1  # settled even though the stream was cut
