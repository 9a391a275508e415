"""The behaviour every Provider owes its caller; each implementation's tests inherit it.

A subclass says how to stand up a provider that will answer with given chunks
(`scripted(...)`), and what "the upstream saw us leave" means for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from vouched.llm import Message, Provider, StreamPiece, Usage

MESSAGES = (Message("system", "Answer only from the numbered sources."), Message("user", "What did she build?"))
PERSIAN = ["او سامانه‌ی ", "نوبت‌دهی بیمارستان را ", "در ۱۴۰۱ ساخت [1]."]
SLOW_CHUNKS = [f"part {i}. " for i in range(40)]  # 4 s at one chunk per 100 ms


def run(coro: Any, timeout: float = 10) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def collect(stream: Any) -> list[StreamPiece]:
    return [piece async for piece in stream]


class ProviderContract:
    @contextmanager
    def scripted(
        self, chunks: Sequence[str], *, finish: str = "stop", usage: Usage = Usage(12, 7), delay: float = 0.0
    ) -> Iterator[tuple[Provider, Any]]:
        raise NotImplementedError

    def upstream_requests(self, handle: Any) -> int | None:
        """Requests the upstream received; None where there is no upstream to ask."""
        return None

    def assert_left_promptly(self, handle: Any, provider: Provider, closed_at: float) -> None:
        """The upstream saw the consumer go within 100 ms of `closed_at` and sent little after."""

    # --- the contract ----------------------------------------------------------------------

    def test_text_pieces_then_one_final_piece(self) -> None:
        with self.scripted(["Ada built ", "the scheduler [1]."], usage=Usage(12, 7)) as (provider, _):
            stream = provider.stream(MESSAGES, max_tokens=64)
            pieces = run(collect(stream))
        assert "".join(p.text for p in pieces) == "Ada built the scheduler [1]."
        *texts, final = pieces
        assert all(p.text and p.usage is None and p.finish_reason is None for p in texts)
        assert final.text == "" and final.finish_reason == "stop"
        assert (final.usage.input_tokens, final.usage.output_tokens) == (12, 7)
        assert stream.closed and not stream.cancelled and stream.error is None
        assert stream.finish_reason == "stop"
        assert stream.received_bytes == len("Ada built the scheduler [1].".encode())
        settled = stream.settle(prompt_bytes=10_000)
        assert (settled.input_tokens, settled.output_tokens) == (12, 7)  # provider figures win

    def test_length_cut_surfaces_as_length(self) -> None:
        with self.scripted(["It was cut"], finish="length") as (provider, _):
            pieces = run(collect(provider.stream(MESSAGES, max_tokens=3)))
        assert pieces[-1].finish_reason == "length"

    def test_multibyte_text_arrives_whole(self) -> None:
        with self.scripted(PERSIAN) as (provider, _):
            stream = provider.stream(MESSAGES, max_tokens=64)
            text = run(stream.text())
        assert text == "".join(PERSIAN)
        assert stream.received_bytes == len(text.encode("utf-8"))

    def test_nothing_is_sent_until_iterated(self) -> None:
        with self.scripted(["never read"]) as (provider, handle):
            stream = provider.stream(MESSAGES, max_tokens=8)
            run(stream.aclose())
            assert self.upstream_requests(handle) in (None, 0)
        assert stream.closed and stream.received_bytes == 0

    def test_consumer_close_stops_the_stream_promptly(self) -> None:
        with self.scripted(SLOW_CHUNKS, delay=0.1) as (provider, handle):
            stream = provider.stream(MESSAGES, max_tokens=512)

            async def read_two_then_close() -> float:
                got = [await stream.__anext__(), await stream.__anext__()]
                assert [p.text for p in got] == SLOW_CHUNKS[:2]
                closed_at = time.monotonic()
                await stream.aclose()
                await asyncio.sleep(0.3)  # stay in the loop: its shutdown must not be what closes
                return closed_at

            closed_at = run(read_two_then_close())
            assert stream.closed and stream.cancelled and stream.finish_reason is None
            assert stream.received_bytes == len("".join(SLOW_CHUNKS[:2]).encode())
            with pytest.raises(StopAsyncIteration):
                run(stream.__anext__())
            self.assert_left_promptly(handle, provider, closed_at)

    def test_cancelling_the_reading_task_stops_the_stream(self) -> None:
        """The reader disconnected: the server framework cancels the task that iterates."""
        with self.scripted(SLOW_CHUNKS, delay=0.1) as (provider, handle):
            stream = provider.stream(MESSAGES, max_tokens=512)
            two = asyncio.Event()

            async def reader() -> None:
                n = 0
                async for _ in stream:
                    n += 1
                    if n == 2:
                        two.set()

            async def main() -> float:
                task = asyncio.create_task(reader())
                await two.wait()
                closed_at = time.monotonic()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                await asyncio.sleep(0.3)
                return closed_at

            closed_at = run(main())
            assert stream.closed and stream.cancelled
            self.assert_left_promptly(handle, provider, closed_at)

    def test_async_with_closes(self) -> None:
        with self.scripted(["one ", "two ", "three"]) as (provider, _):

            async def first() -> str:
                async with provider.stream(MESSAGES, max_tokens=8) as stream:
                    async for piece in stream:
                        return piece.text
                return ""

            assert run(first()) == "one "
