from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from tests.llm.contract import MESSAGES, ProviderContract, collect, run
from vouched.llm import (
    Message,
    Provider,
    ProviderError,
    ProviderUnavailable,
    ScriptedProvider,
    ScriptedResponse,
    Usage,
)


class TestScriptedContract(ProviderContract):
    @contextmanager
    def scripted(
        self, chunks: Sequence[str], *, finish: str = "stop", usage: Usage = Usage(12, 7), delay: float = 0.0
    ) -> Iterator[tuple[Provider, Any]]:
        yield ScriptedProvider(chunks, usage=usage, finish_reason=finish, delay=delay), None

    def assert_left_promptly(self, handle: Any, provider: Provider, closed_at: float) -> None:
        assert isinstance(provider, ScriptedProvider) and provider.cancelled


def test_records_calls_and_messages() -> None:
    provider = ScriptedProvider(["hello"])
    assert provider.calls == 0 and provider.requests == []
    run(collect(provider.stream(MESSAGES, max_tokens=5, temperature=0.2)))
    assert provider.calls == 1
    assert provider.requests[-1].messages == MESSAGES
    assert (provider.requests[-1].max_tokens, provider.requests[-1].temperature) == (5, 0.2)


def test_queue_plays_in_order_then_falls_back_to_default() -> None:
    provider = ScriptedProvider(["default"]).queue(
        [["first ", "answer"], "second", ScriptedResponse(["cut"], finish_reason="length")]
    )
    assert provider.pending == 3

    async def texts() -> list[tuple[str, str | None]]:
        out = []
        for _ in range(4):
            pieces = await collect(provider.stream(MESSAGES, max_tokens=5))
            out.append(("".join(p.text for p in pieces), pieces[-1].finish_reason))
        return out

    assert run(texts()) == [("first answer", "stop"), ("second", "stop"), ("cut", "length"), ("default", "stop")]
    assert provider.pending == 0 and provider.calls == 4


def test_cancelled_only_when_closed_before_the_end() -> None:
    provider = ScriptedProvider(["a", "b", "c"])

    async def close_after(n: int) -> None:
        stream = provider.stream(MESSAGES, max_tokens=5)
        for _ in range(n):
            await stream.__anext__()
        await stream.aclose()

    run(close_after(1))
    assert provider.cancelled
    run(close_after(4))  # three texts and the final piece: nothing was cut
    assert not provider.cancelled
    run(collect(provider.stream(MESSAGES, max_tokens=5)))
    assert not provider.cancelled


def test_default_usage_is_one_token_per_byte() -> None:
    provider = ScriptedProvider(["سلام", "!"])
    pieces = run(collect(provider.stream([Message("user", "hé")], max_tokens=5)))
    assert pieces[-1].usage == Usage(input_tokens=3, output_tokens=9)


def test_fail_after_drops_before_the_usage_piece() -> None:
    provider = ScriptedProvider(["one ", "two ", "three"], fail_after=2)
    stream = provider.stream([Message("user", "four")], max_tokens=5)
    seen: list[str] = []

    async def read() -> None:
        async for piece in stream:
            seen.append(piece.text)

    with pytest.raises(ProviderUnavailable):
        run(read())
    assert seen == ["one ", "two "]
    assert stream.closed and not stream.cancelled and isinstance(stream.error, ProviderUnavailable)
    assert stream.usage is None
    assert stream.settle(prompt_bytes=4) == Usage(input_tokens=4, output_tokens=8)


def test_fail_after_all_chunks_and_custom_error() -> None:
    boom = ProviderError("quota exhausted")
    provider = ScriptedProvider().queue([ScriptedResponse(["all"], fail_after=1, error=boom)])
    with pytest.raises(ProviderError, match="quota"):
        run(collect(provider.stream(MESSAGES, max_tokens=5)))


def test_unreported_usage_is_settled_from_bytes() -> None:
    provider = ScriptedProvider(["abc"], usage=Usage())
    stream = provider.stream(MESSAGES, max_tokens=5)
    run(collect(stream))
    assert stream.settle(prompt_bytes=40) == Usage(input_tokens=40, output_tokens=3)


def test_delay_paces_the_chunks() -> None:
    provider = ScriptedProvider(["a", "b", "c"], delay=0.02)

    async def timed() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await collect(provider.stream(MESSAGES, max_tokens=5))
        return loop.time() - start

    assert run(timed()) >= 0.05


def test_a_string_is_one_chunk() -> None:
    provider = ScriptedProvider("one chunk")
    pieces = run(collect(provider.stream(MESSAGES, max_tokens=5)))
    assert [p.text for p in pieces] == ["one chunk", ""]
