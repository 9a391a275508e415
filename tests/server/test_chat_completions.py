"""POST /v1/chat/completions: an OpenAI client sees one assistant message; vouched's facts ride along."""

from __future__ import annotations

import pytest

from tests.server.conftest import RecordingSpend, asgi_client, parse_sse, scripted_assistant
from vouched.answer.events import CitedSource, DoneEvent, NoticeEvent, RefusalEvent, SentenceEvent
from vouched.llm.scripted import ScriptedProvider
from vouched.server import create_app
from vouched.server.openai import ChunkStream, completion
from vouched.server.schemas import ChatMessage, chat_turns

pytestmark = pytest.mark.anyio

OPEN_SOURCE = "Which open-source libraries does she maintain?"


async def post(app, body):
    async with asgi_client(app) as c:
        return await c.post("/v1/chat/completions", json=body)


async def test_non_streaming_completion_with_vouched_field(site):
    r = await post(create_app(site), {"model": "gpt-4o", "temperature": 0.3,
                                      "messages": [{"role": "system", "content": "Be terse."},
                                                   {"role": "user", "content": OPEN_SOURCE}]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "chat.completion" and body["model"] == "gpt-4o"
    choice = body["choices"][0]
    assert choice["message"]["role"] == "assistant" and "open-source" in choice["message"]["content"]
    assert choice["finish_reason"] == "stop"
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    v = body["vouched"]
    assert v["outcome"] == "answered" and v["trace_id"] and v["sources"] and v["notices"] == []
    assert {"title", "section", "date", "url"} <= set(v["sources"][0])


async def test_streaming_chunks_end_with_done_and_match_the_non_streaming_text(site):
    app = create_app(site)
    messages = [{"role": "user", "content": [{"type": "text", "text": OPEN_SOURCE}]}]
    whole = (await post(app, {"messages": messages})).json()
    r = await post(app, {"messages": messages, "stream": True, "stream_options": {"include_usage": True}})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    frames = [d for _, d in parse_sse(r.text)]
    assert frames[-1] == "[DONE]"
    chunks = frames[:-1]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == whole["choices"][0]["message"]["content"]
    final = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert len(final) == 1 and final[0]["choices"][0]["finish_reason"] == "stop"
    assert final[0]["vouched"]["sources"] == whole["vouched"]["sources"]
    usage = chunks[-1]
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] >= 0


async def test_refusal_arrives_as_assistant_text(site):
    body = (await post(create_app(site), {"messages": [{"role": "user", "content": "What are her day rates?"}]})).json()
    assert body["choices"][0]["message"]["content"]
    assert body["vouched"]["outcome"] == "refused" and body["vouched"]["layer"] == "L1"
    assert body["vouched"]["category"] == "fees"


async def test_previous_pair_is_the_last_user_assistant_exchange(site):
    provider = ScriptedProvider(["The search ran on postgres with pgvector [1]."])
    app = create_app(site, assistant=scripted_assistant(site, provider, RecordingSpend()))
    messages = [
        {"role": "user", "content": "old question"}, {"role": "assistant", "content": "old answer"},
        {"role": "user", "content": "What did she build for Tessera Health?"},
        {"role": "assistant", "content": "A multilingual search."},
        {"role": "user", "content": "Which database did it run on?"},
    ]
    r = await post(app, {"messages": messages})
    assert r.status_code == 200
    prompt = "\n".join(m.content for m in provider.requests[-1].messages)
    assert "What did she build for Tessera Health?" in prompt and "old question" not in prompt


def test_chat_turns_rules():
    m = lambda role, content: ChatMessage(role=role, content=content)  # noqa: E731
    assert chat_turns([m("user", "q")]) == ("q", None)
    q, prev = chat_turns([m("system", "s"), m("user", "a"), m("assistant", "b"), m("user", "c")])
    assert q == "c" and prev.question == "a" and prev.answer == "b"
    for bad in ([m("user", "q"), m("assistant", "a")], [m("system", "s")], [m("user", "  ")]):
        with pytest.raises(Exception) as info:
            chat_turns(bad)
        assert "messages" == info.value.param


@pytest.mark.parametrize("body", [
    {"messages": []},
    {"messages": [{"role": "assistant", "content": "hi"}]},
    {"messages": "hello"},
    {},
])
async def test_bad_chat_bodies_are_400(site, body):
    r = await post(create_app(site), body)
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request"


async def test_models_list(site):
    async with asgi_client(create_app(site)) as c:
        r = await c.get("/v1/models")
    assert r.json()["data"][0]["id"] == "vouched"


def test_translation_of_every_event_kind():
    src = CitedSource(number=1, id="c1", doc_id="d", title="T", section="S", date="2024-01-01", url="https://x.test/t")
    events = [
        SentenceEvent(text="One.", sources=(1,)), SentenceEvent(text="Two.", sources=(1,)),
        NoticeEvent(kind="truncated", text="The answer was cut."),
        DoneEvent(outcome="truncated", sources=(src,), trace_id="t1"),
    ]
    whole = completion(events, model="m")
    assert whole["choices"][0]["message"]["content"] == "One. Two.\n\nThe answer was cut."
    assert whole["choices"][0]["finish_reason"] == "length"
    assert whole["vouched"]["notices"] == [{"kind": "truncated", "text": "The answer was cut.", "rule": None}]
    stream = ChunkStream(model="m")
    frames = b"".join(stream.encode(e) or b"" for e in events) + stream.trailer()
    parsed = [d for _, d in parse_sse(frames.decode())]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in parsed[:-1])
    assert text == whole["choices"][0]["message"]["content"]
    refusal_only = completion([RefusalEvent(layer="L1", category="fees", text="No."),
                               DoneEvent(outcome="refused", sources=(), trace_id="t2", layer="L1", category="fees")], model="m")
    assert refusal_only["choices"][0]["message"]["content"] == "No."


def test_builder_outcomes_and_cap_without_a_server():
    from vouched.server.openai import FaceOptions, count_tokens

    src = CitedSource(number=1, id="c1", doc_id="d", title="T", section="S", url="https://x.test/t")
    src2 = CitedSource(number=2, id="c2", doc_id="e", title="U")
    one, two = SentenceEvent(text="Alpha beta gamma.", sources=(1,)), SentenceEvent(text="Delta epsilon.", sources=(2,))
    held = completion([one, NoticeEvent(kind="held", text="Held."), DoneEvent(outcome="held", sources=(src,), trace_id="t")])
    assert held["choices"][0]["finish_reason"] == "content_filter" and held["choices"][0]["message"]["refusal"] is None
    capped = completion([one, two, DoneEvent(outcome="answered", sources=(src, src2), trace_id="t")],
                        options=FaceOptions(max_tokens=count_tokens("Alpha beta gamma.")))
    msg = capped["choices"][0]["message"]
    assert msg["content"] == "Alpha beta gamma." and capped["choices"][0]["finish_reason"] == "length"
    assert [s["id"] for s in capped["vouched"]["sources"]] == ["c1"]  # the cut sentence's source is not listed
    assert msg["annotations"] == [{"type": "url_citation", "url_citation": {
        "start_index": 0, "end_index": 17, "title": "T › S", "url": "https://x.test/t"}}]
    inline = completion([one, two, DoneEvent(outcome="answered", sources=(src, src2), trace_id="t")],
                        options=FaceOptions(inline_citations=True))
    content = inline["choices"][0]["message"]["content"]
    assert content == ("Alpha beta gamma. [1] Delta epsilon. [2]\n\nSources:\n[1] T — S · https://x.test/t\n[2] U")
    spans = [content[a["url_citation"]["start_index"]:a["url_citation"]["end_index"]] for a in inline["choices"][0]["message"]["annotations"]]
    assert spans == ["Alpha beta gamma.", "Delta epsilon."]
