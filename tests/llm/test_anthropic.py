"""AnthropicProvider against a loopback server speaking the real Messages event stream."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from tests.llm.contract import MESSAGES, PERSIAN, ProviderContract, collect, run
from tests.llm.wire import Reply, WireServer, anthropic_events, resplit, sse
from vouched.llm import (
    AnthropicProvider,
    Message,
    Provider,
    ProviderAuthError,
    ProviderError,
    ProviderProtocolError,
    ProviderUnavailable,
    Usage,
)

_WIRE_STOP = {"stop": "end_turn", "length": "max_tokens"}


def local(server: WireServer, **kw: Any) -> AnthropicProvider:
    return AnthropicProvider("claude-test", api_key="sk-ant-test", base_url=server.url, **kw)


def play(parts: Sequence[bytes], **reply: Any) -> tuple[list[Any], Any, WireServer]:
    with WireServer([Reply(parts=list(parts), **reply)]) as server:
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


class TestAnthropicContract(ProviderContract):
    @contextmanager
    def scripted(
        self, chunks: Sequence[str], *, finish: str = "stop", usage: Usage = Usage(12, 7), delay: float = 0.0
    ) -> Iterator[tuple[Provider, Any]]:
        events = anthropic_events(chunks, stop_reason=_WIRE_STOP[finish], input_tokens=usage.input_tokens,
                                  output_tokens=usage.output_tokens)
        with WireServer([Reply(parts=events, delay=delay)]) as server:
            yield local(server), server

    def upstream_requests(self, handle: WireServer) -> int:
        return len(handle.seen)

    def assert_left_promptly(self, handle: WireServer, provider: Provider, closed_at: float) -> None:
        assert handle.wait_client_closed(1.0), "the server never saw the connection close"
        seen = handle.seen[0]
        assert seen.client_closed_at is not None and seen.client_closed_at - closed_at < 0.1
        assert not seen.finished and seen.parts_sent <= 6  # start, block start, ping, two texts, one more


def test_request_follows_the_messages_api() -> None:
    with WireServer([Reply(parts=anthropic_events(["ok"]))]) as server:
        run(collect(local(server).stream(MESSAGES, max_tokens=64, temperature=0.2)))
    seen = server.seen[0]
    assert (seen.method, seen.path) == ("POST", "/v1/messages")
    assert seen.headers["x-api-key"] == "sk-ant-test"
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert seen.headers["content-type"] == "application/json"
    assert seen.body == {
        "model": "claude-test",
        "max_tokens": 64,
        "system": MESSAGES[0].content,
        "messages": [{"role": "user", "content": MESSAGES[1].content}],
        "stream": True,
        "temperature": 0.2,
    }


def test_usage_comes_from_message_start_and_message_delta() -> None:
    pieces, stream, _ = play(anthropic_events(["Hi [1]."], input_tokens=472, output_tokens=15))
    assert pieces[-1].usage == Usage(input_tokens=472, output_tokens=15)
    assert stream.usage == Usage(input_tokens=472, output_tokens=15)


def test_cumulative_message_delta_input_tokens_replace_the_start_figure() -> None:
    events = anthropic_events(["x"], stop_reason=None, stop=False)
    delta = sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                 "usage": {"input_tokens": 30, "cache_read_input_tokens": 100, "output_tokens": 9}}, "message_delta")
    pieces, _, _ = play([*events, delta, sse({"type": "message_stop"}, "message_stop")])
    assert pieces[-1].usage == Usage(input_tokens=130, output_tokens=9)


def test_max_tokens_surfaces_as_length() -> None:
    pieces, stream, _ = play(anthropic_events(["cut sh"], stop_reason="max_tokens"))
    assert pieces[-1].finish_reason == "length" and stream.finish_reason == "length"


def test_cut_before_message_delta_keeps_the_input_tokens() -> None:
    events = anthropic_events(["Ada built ", "the sch"], stop_reason=None, stop=False, input_tokens=25)
    pieces, stream, _ = play(events, cut=True)
    assert [p.text for p in pieces[:-1]] == ["Ada built ", "the sch"]
    assert isinstance(pieces[-1], ProviderUnavailable)
    assert stream.usage == Usage(input_tokens=25)  # message_start's placeholder output count is not used
    assert stream.settle(prompt_bytes=999) == Usage(input_tokens=25, output_tokens=len("Ada built the sch"))


def test_eof_before_message_stop_is_a_cut() -> None:
    events = anthropic_events(["half"], stop_reason=None, stop=False)
    pieces, _, _ = play(events, chunked=False)
    assert isinstance(pieces[-1], ProviderUnavailable) and "message_stop" in str(pieces[-1])


@pytest.mark.parametrize("sizes", [[1], [3, 1, 4, 1, 5, 9, 2, 6], [17]])
def test_bytes_split_anywhere_even_inside_a_letter(sizes: list[int]) -> None:
    pieces, stream, _ = play(resplit(anthropic_events(PERSIAN), sizes))
    assert "".join(p.text for p in pieces) == "".join(PERSIAN) and stream.error is None


def test_thinking_is_counted_not_yielded() -> None:
    events = anthropic_events(["Answer."])
    thinking = sse({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": "let me see"}}, "content_block_delta")
    pieces, stream, _ = play([*events[:3], thinking, *events[3:]])
    assert "".join(p.text for p in pieces) == "Answer." and stream.reasoning_bytes == len("let me see")


@pytest.mark.parametrize(
    ("kind", "error"),
    [("overloaded_error", ProviderUnavailable), ("invalid_request_error", ProviderError),
     ("authentication_error", ProviderAuthError)],
)
def test_error_event(kind: str, error: type) -> None:
    events = anthropic_events(["par"], stop_reason=None, stop=False)
    err = sse({"type": "error", "error": {"type": kind, "message": "Overloaded right now"}}, "error")
    pieces, stream, _ = play([*events[:4], err])
    assert pieces[0].text == "par"
    assert type(pieces[-1]) is error and "Overloaded right now" in str(pieces[-1])
    assert stream.usage == Usage(input_tokens=25)


@pytest.mark.parametrize(
    ("status", "error", "words"),
    [(401, ProviderAuthError, "ANTHROPIC_API_KEY"), (500, ProviderUnavailable, "api_error"),
     (529, ProviderUnavailable, "Overloaded"), (400, ProviderError, "max_tokens")],
)
def test_http_errors(status: int, error: type, words: str) -> None:
    messages = {401: "invalid x-api-key", 500: "api_error: internal", 529: "Overloaded", 400: "max_tokens: too big"}
    body = {"type": "error", "error": {"type": "x", "message": messages[status]}}
    with WireServer([Reply.json(status, body)]) as server:
        with pytest.raises(error, match=words) as info:
            run(collect(local(server).stream(MESSAGES, max_tokens=5)))
    assert type(info.value) is error and info.value.status == status


def test_retries_an_overloaded_start() -> None:
    overloaded = Reply.json(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    with WireServer([overloaded, Reply(parts=anthropic_events(["again"]))]) as server:
        pieces = run(collect(local(server, max_retries=2, retry_backoff=0.01).stream(MESSAGES, max_tokens=5)))
    assert pieces[0].text == "again" and len(server.seen) == 2


def test_no_retry_by_default_and_not_for_client_errors() -> None:
    bad = Reply.json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})
    with WireServer([bad, Reply(parts=anthropic_events(["never"]))]) as server:
        with pytest.raises(ProviderError):
            run(collect(local(server, max_retries=3, retry_backoff=0.01).stream(MESSAGES, max_tokens=5)))
    assert len(server.seen) == 1


def test_missing_key_says_how_to_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY=") as info:
        AnthropicProvider("claude-test")
    assert "api_key" in str(info.value)


def test_key_from_the_environment_and_no_connection_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be sent")

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    provider = AnthropicProvider("claude-test", transport=httpx.MockTransport(refuse))
    assert provider._headers()["x-api-key"] == "sk-ant-env"
    run(provider.stream(MESSAGES, max_tokens=5).aclose())


def test_mock_transport_is_enough_for_a_unit_test() -> None:
    body = b"".join(anthropic_events(["via mock"]))

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    provider = AnthropicProvider("claude-test", api_key="k", transport=httpx.MockTransport(reply))
    assert run(provider.stream([Message("user", "hi")], max_tokens=5).text()) == "via mock"


def test_not_an_event_stream() -> None:
    with WireServer([Reply.json(200, {"content": []})]) as server:
        with pytest.raises(ProviderProtocolError):
            run(collect(local(server).stream(MESSAGES, max_tokens=5)))


def test_a_stalled_stream_times_out() -> None:
    with WireServer([Reply(parts=anthropic_events(["slow"]), delay=2.0)]) as server:
        start = time.monotonic()
        with pytest.raises(ProviderUnavailable):
            run(collect(local(server, timeout=0.3).stream(MESSAGES, max_tokens=5)))
        assert time.monotonic() - start < 1.5
