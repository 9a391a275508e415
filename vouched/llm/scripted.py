"""The test stand-in: a provider that replays scripted text, with no network.

    provider = ScriptedProvider(["Ada built it [1]. ", "It shipped in 2021 [1]."])
    provider.queue([["first answer"], ScriptedResponse(["cut"], finish_reason="length")])

Each `stream()` call takes the next queued response, or the default one when the queue is
empty (as simonw/llm's MockModel.enqueue). It yields the chunks, then one final piece with
the usage and finish reason, exactly as the HTTP providers do. Usage defaults to one token
per UTF-8 byte of the messages and of the chunks; pass `usage=Usage()` to play a provider
that reports nothing. `fail_after=n` raises ProviderUnavailable after n chunks (a dropped
connection: no final piece). `cancelled` tells whether the consumer stopped the last stream
before its end.

What each call was asked is recorded, in order, in `requests` (one `ScriptedRequest` per
`stream()` call: the messages, max_tokens and temperature); `calls` is their number. Tests
read `provider.requests[-1].messages`; nothing is left on the provider as a `last_*` value.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Iterable, Sequence
from dataclasses import dataclass

from vouched.llm.base import Message, ProviderStream, StreamPiece, Usage, prompt_bytes
from vouched.llm.errors import ProviderError, ProviderUnavailable

__all__ = ["ScriptedProvider", "ScriptedRequest", "ScriptedResponse"]


@dataclass(frozen=True)
class ScriptedRequest:
    """What one `stream()` call was given."""

    messages: tuple[Message, ...]
    max_tokens: int
    temperature: float


@dataclass(frozen=True)
class ScriptedResponse:
    """One scripted answer. `chunks` may be a list of strings or one string (one chunk)."""

    chunks: Sequence[str] | str
    usage: Usage | None = None
    finish_reason: str = "stop"
    delay: float = 0.0
    fail_after: int | None = None
    error: ProviderError | None = None  # what fail_after raises; ProviderUnavailable if None

    def __post_init__(self) -> None:
        chunks = (self.chunks,) if isinstance(self.chunks, str) else tuple(self.chunks)
        object.__setattr__(self, "chunks", chunks)


class ScriptedProvider:
    name = "scripted"

    def __init__(
        self,
        chunks: Sequence[str] | str = (),
        *,
        usage: Usage | None = None,
        finish_reason: str = "stop",
        delay: float = 0.0,
        fail_after: int | None = None,
        model: str = "scripted",
    ) -> None:
        self.model = model
        self.default = ScriptedResponse(chunks, usage=usage, finish_reason=finish_reason, delay=delay, fail_after=fail_after)
        self._queue: deque[ScriptedResponse] = deque()
        self.requests: list[ScriptedRequest] = []  # one per stream() call, in order
        self.cancelled = False
        self.streams: list[ProviderStream] = []

    def queue(self, responses: Iterable[ScriptedResponse | Sequence[str] | str]) -> ScriptedProvider:
        """Add responses for the next calls, in order; a plain string is one chunk."""
        for response in responses:
            self._queue.append(response if isinstance(response, ScriptedResponse) else ScriptedResponse(response))
        return self

    @property
    def pending(self) -> int:
        return len(self._queue)

    @property
    def calls(self) -> int:
        """How many times `stream()` was called."""
        return len(self.requests)

    def stream(self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.0) -> ProviderStream:
        self.requests.append(ScriptedRequest(tuple(messages), max_tokens, temperature))
        self.cancelled = False
        script = self._queue.popleft() if self._queue else self.default
        stream = ProviderStream(
            lambda s: self._pieces(script, prompt_bytes(messages)), provider=self.name, model=self.model
        )
        self.streams.append(stream)
        return stream

    async def _pieces(self, script: ScriptedResponse, prompt_size: int) -> AsyncGenerator[StreamPiece, None]:
        finished = False
        try:
            for i, chunk in enumerate(script.chunks):
                if script.fail_after is not None and i >= script.fail_after:
                    break
                if script.delay:
                    await asyncio.sleep(script.delay)
                yield StreamPiece(text=chunk)
            if script.fail_after is not None:  # dropped before the usage event
                sent = min(script.fail_after, len(script.chunks))
                raise script.error or ProviderUnavailable(f"scripted failure after {sent} chunks", provider=self.name)
            usage = script.usage
            if usage is None:
                output = sum(len(c.encode("utf-8")) for c in script.chunks)
                usage = Usage(input_tokens=prompt_size, output_tokens=output)
            finished = True
            yield StreamPiece(usage=usage, finish_reason=script.finish_reason)
        except (GeneratorExit, asyncio.CancelledError):
            self.cancelled = not finished
            raise
