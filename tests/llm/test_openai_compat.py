"""OpenAICompatProvider against a loopback server speaking the real Chat Completions stream."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from tests.llm.contract import MESSAGES, PERSIAN, SLOW_CHUNKS, ProviderContract, collect, run
from tests.llm.wire import Reply, WireServer, openai_events, resplit, sse
from vouched.errors import VouchedError
from vouched.llm import (
    Message,
    OpenAICompatProvider,
    Provider,
    ProviderAuthError,
    ProviderError,
    ProviderProtocolError,
    ProviderUnavailable,
    Usage,
)

USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}


def local(server: WireServer, **kw: Any) -> OpenAICompatProvider:
    return OpenAICompatProvider(f"{server.url}/v1", "qwen2.5-7b", **kw)


def play(events: Sequence[bytes], **reply: Any) -> tuple[list[Any], Any, WireServer]:
    """Serve one reply, stream it to the end; return (pieces or the error, stream, server)."""
    with WireServer([Reply(parts=list(events), **reply)]) as server:
        stream = local(server).stream(MESSAGES, max_tokens=64)
        pieces: list[Any] = []

        async def read() -> None:
            async for piece in stream:
                pieces.append(piece)

        try:
            run(read())
        except ProviderError as exc:
            pieces.append(exc)
    return pieces, stream, server


class TestOpenAIContract(ProviderContract):
    @contextmanager
    def scripted(
        self, chunks: Sequence[str], *, finish: str = "stop", usage: Usage = Usage(12, 7), delay: float = 0.0
    ) -> Iterator[tuple[Provider, Any]]:
        wire_usage = {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens}
        with WireServer([Reply(parts=openai_events(chunks, finish=finish, usage=wire_usage), delay=delay)]) as server:
            yield local(server), server

    def upstream_requests(self, handle: WireServer) -> int:
        return len(handle.seen)

    def assert_left_promptly(self, handle: WireServer, provider: Provider, closed_at: float) -> None:
        assert handle.wait_client_closed(1.0), "the server never saw the connection close"
        seen = handle.seen[0]
        assert seen.client_closed_at is not None and seen.client_closed_at - closed_at < 0.1
        assert not seen.finished and seen.parts_sent <= 5  # role chunk, two texts, at most one more


def test_request_is_an_openai_streaming_request() -> None:
    with WireServer([Reply(parts=openai_events(["ok"], usage=USAGE))]) as server:
        run(collect(local(server).stream(MESSAGES, max_tokens=64, temperature=0.3)))
    seen = server.seen[0]
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.body == {
        "model": "qwen2.5-7b",
        "messages": [{"role": "system", "content": MESSAGES[0].content}, {"role": "user", "content": MESSAGES[1].content}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.3,
        "max_tokens": 64,
    }
    assert "authorization" not in seen.headers  # a local server needs no key
    assert seen.headers["accept"] == "text/event-stream"


def test_key_and_extra_headers_are_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_LLM_KEY", "sk-local")
    with WireServer([Reply(parts=openai_events(["ok"], usage=USAGE))]) as server:
        provider = local(server, api_key_env="LOCAL_LLM_KEY", extra_headers={"x-tenant": "acme"})
        run(collect(provider.stream(MESSAGES, max_tokens=8)))
    assert server.seen[0].headers["authorization"] == "Bearer sk-local"
    assert server.seen[0].headers["x-tenant"] == "acme"


def test_max_tokens_field_defaults() -> None:
    openai = OpenAICompatProvider("https://api.openai.com/v1", "o4-mini", api_key="sk-x")
    body = openai.request_body(MESSAGES, max_tokens=100, temperature=0)
    assert body["max_completion_tokens"] == 100 and "max_tokens" not in body
    vllm = OpenAICompatProvider("http://10.0.0.5:8000/v1", "m", api_key="k")
    assert "max_completion_tokens" not in vllm.request_body(MESSAGES, max_tokens=5, temperature=0)
    both = OpenAICompatProvider("http://localhost:8000/v1", "m", max_tokens_field="both")
    assert {"max_tokens", "max_completion_tokens"} <= set(both.request_body(MESSAGES, max_tokens=5, temperature=0))


def test_missing_key_for_a_remote_server_says_how_to_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderAuthError) as info:
        OpenAICompatProvider("https://api.openai.com/v1", "gpt-4o-mini")
    assert "OPENAI_API_KEY=" in str(info.value) and "api_key" in str(info.value)
    assert isinstance(info.value, VouchedError)
    # Keyless servers elsewhere on a private network can opt out of the guess.
    OpenAICompatProvider("http://10.0.0.5:8000/v1", "m", api_key_required=False)
    for url in ("http://localhost:11434/v1", "http://127.0.0.1:8080/v1", "http://[::1]:8000/v1"):
        OpenAICompatProvider(url, "m")


def test_constructing_opens_no_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be sent")

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    provider = OpenAICompatProvider("https://api.openai.com/v1", "gpt-4o-mini", transport=httpx.MockTransport(refuse))
    stream = provider.stream(MESSAGES, max_tokens=5)
    run(stream.aclose())


def test_usage_reasoning_and_vllm_null_choices() -> None:
    usage = {**USAGE, "completion_tokens_details": {"reasoning_tokens": 4}}
    reasoning = sse({"choices": [{"index": 0, "delta": {"reasoning_content": "think"}, "finish_reason": None}]})
    events = openai_events(["Answer [1]."], usage=usage, choices_null=True)
    pieces, stream, _ = play([events[0], reasoning, *events[1:]])
    assert [p.text for p in pieces] == ["Answer [1].", ""]
    assert pieces[-1].usage == Usage(input_tokens=12, output_tokens=7, reasoning_tokens=4)
    assert stream.reasoning_bytes == 5 and stream.received_bytes == len("Answer [1].")


def test_comments_keepalives_and_event_lines_are_ignored() -> None:
    events = openai_events(["a", "b"], usage=USAGE)
    noisy = [b": ping\n\n", events[0], b"event: chunk\n" + events[1], b":keepalive\n\n", *events[2:]]
    pieces, _, _ = play(noisy)
    assert "".join(p.text for p in pieces) == "ab"


@pytest.mark.parametrize("sizes", [[1], [2, 3, 5, 7], [13, 1, 4], [64]])
def test_bytes_split_anywhere_even_inside_a_letter(sizes: list[int]) -> None:
    events = [e.replace(b"\n", b"\r\n") for e in openai_events(PERSIAN, usage=USAGE)] if sizes == [64] else openai_events(PERSIAN, usage=USAGE)
    pieces, stream, _ = play(resplit(events, sizes))
    assert "".join(p.text for p in pieces) == "".join(PERSIAN)
    assert pieces[-1].usage == Usage(12, 7) and stream.error is None


def test_cut_before_usage_raises_and_keeps_what_was_received() -> None:
    events = openai_events(["Ada built ", "the sched"], finish=None, usage=None, done=False)
    pieces, stream, _ = play(events, cut=True)
    assert [p.text for p in pieces[:-1]] == ["Ada built ", "the sched"]
    assert isinstance(pieces[-1], ProviderUnavailable)
    assert stream.closed and stream.usage is None and stream.finish_reason is None
    prompt = sum(len(m.content.encode()) for m in MESSAGES)
    assert stream.settle(prompt_bytes=prompt) == Usage(input_tokens=prompt, output_tokens=len("Ada built the sched"))


def test_cut_after_finish_but_before_usage_ends_normally() -> None:
    pieces, stream, _ = play(openai_events(["done."], finish="stop", usage=None, done=False), cut=True)
    assert pieces[-1].finish_reason == "stop" and pieces[-1].usage is None and stream.error is None


def test_eof_without_done_is_a_cut() -> None:
    events = openai_events(["half"], finish=None, usage=None, done=False)
    pieces, _, _ = play(events, chunked=False)
    assert isinstance(pieces[-1], ProviderUnavailable) and "[DONE]" in str(pieces[-1])


def test_length_finish_with_usage() -> None:
    pieces, stream, _ = play(openai_events(["trunc"], finish="length", usage=USAGE))
    assert pieces[-1].finish_reason == "length" and stream.finish_reason == "length"


@pytest.mark.parametrize(
    ("reply", "error", "words"),
    [
        (Reply.json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
         ProviderAuthError, "OPENAI_API_KEY"),
        (Reply.json(500, {"error": {"message": "The server had an error"}}), ProviderUnavailable, "server had an error"),
        (Reply.json(429, {"error": {"message": "Rate limit reached"}}), ProviderUnavailable, "Rate limit"),
        (Reply.json(404, {"error": {"message": "model 'x' not found"}}), ProviderError, "base_url and model"),
        (Reply.json(400, {"error": {"message": "Unsupported parameter: 'max_tokens'"}}), ProviderError, "max_tokens"),
        (Reply.json(200, {"choices": []}), ProviderProtocolError, "event stream"),
    ],
)
def test_http_errors_map_onto_the_tree(reply: Reply, error: type, words: str) -> None:
    with WireServer([reply]) as server:
        with pytest.raises(error, match=words) as info:
            run(collect(local(server).stream(MESSAGES, max_tokens=5)))
    assert type(info.value) is error


def test_error_inside_the_stream() -> None:
    events = openai_events(["par"], finish=None, usage=None, done=False)
    pieces, stream, _ = play([*events, sse({"error": {"message": "model overloaded mid-way", "code": 503}})])
    assert pieces[0].text == "par" and isinstance(pieces[-1], ProviderUnavailable)
    assert "overloaded mid-way" in str(pieces[-1]) and stream.error is pieces[-1]


def test_malformed_json_is_a_protocol_error() -> None:
    pieces, _, _ = play([b"data: {not json\n\n"])
    assert isinstance(pieces[-1], ProviderProtocolError)


def test_connection_refused_is_unavailable() -> None:
    with WireServer([]) as server:
        url = f"{server.url}/v1"
    provider = OpenAICompatProvider(url, "m")  # the server is gone: nothing listens there now
    with pytest.raises(ProviderUnavailable, match="cannot reach"):
        run(collect(provider.stream(MESSAGES, max_tokens=5)))


def test_a_stalled_stream_times_out() -> None:
    events = openai_events(["slow"], usage=USAGE)
    with WireServer([Reply(parts=events, delay=2.0)]) as server:
        provider = local(server, timeout=0.3)
        start = time.monotonic()
        with pytest.raises(ProviderUnavailable):
            run(collect(provider.stream(MESSAGES, max_tokens=5)))
        assert time.monotonic() - start < 1.5


def test_retries_before_the_first_byte_only() -> None:
    ok = Reply(parts=openai_events(["second try"], usage=USAGE))
    with WireServer([Reply.json(503, {"error": {"message": "busy"}}), ok]) as server:
        provider = local(server, max_retries=1, retry_backoff=0.01)
        pieces = run(collect(provider.stream(MESSAGES, max_tokens=5)))
    assert pieces[0].text == "second try" and len(server.seen) == 2


def test_close_with_a_shared_pooled_transport_drops_the_connection() -> None:
    """With connection reuse, an unfinished response must not go back to the pool."""
    with WireServer([Reply(parts=openai_events(SLOW_CHUNKS, usage=USAGE), delay=0.1)]) as server:

        async def main() -> float:
            async with httpx.AsyncHTTPTransport() as transport:
                stream = local(server, transport=transport).stream(MESSAGES, max_tokens=64)
                await stream.__anext__()
                await stream.__anext__()
                closed_at = time.monotonic()
                await stream.aclose()
                await asyncio.sleep(0.15)  # the transport stays open meanwhile
                return closed_at

        closed_at = run(main())
        assert server.wait_client_closed(1.0)
        assert server.seen[0].client_closed_at - closed_at < 0.1


def test_only_choice_zero_is_read() -> None:
    other = sse({"choices": [{"index": 1, "delta": {"content": "IGNORED"}, "finish_reason": None}]})
    events = openai_events(["kept"], usage=USAGE)
    pieces, _, _ = play([events[0], other, *events[1:]])
    assert "".join(p.text for p in pieces) == "kept"


def test_message_roles_are_checked() -> None:
    with pytest.raises(ValueError):
        Message("tool", "x")  # type: ignore[arg-type]
