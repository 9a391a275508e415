"""The provider contract: what a streamed answer looks like, and how its cost is settled.

A `Provider` turns messages into a `ProviderStream`, an async iterator of `StreamPiece`s:

* zero or more text pieces (`text` non-empty, `usage` and `finish_reason` None), then
* exactly one final piece with `text == ""`, `finish_reason` set and `usage` carrying the
  provider's own figures (None where it reported none).

`finish_reason` is normalised: "stop" (the model ended), "length" (the `max_tokens` cap cut
it: OpenAI's "length", Anthropic's "max_tokens"), or the provider's own word for anything
else ("content_filter", "refusal", "tool_use", ...).

Calling `stream()` opens nothing: the request is sent on the first `__anext__`. The caller
may stop at any point with `await stream.aclose()` (the sentence gate found a violation, the
reader left); that closes the HTTP response and its connection at once, so no more tokens
are generated for us. Close from the task that iterates, or cancel that task: an async
generator cannot be closed while another task is inside `__anext__`.

A failure raises a `ProviderError` (see `vouched.llm.errors`), after any pieces already
yielded, and is kept in `stream.error`. A stream cut after the model said it finished
(finish reason seen, usage not yet) ends normally; its final piece carries whatever usage
had arrived, often None.

Settling cost ("Spend and abuse" in DESIGN.md): whatever happened, the stream object keeps

    received_bytes   UTF-8 bytes of the text pieces handed to the consumer
    reasoning_bytes  UTF-8 bytes of reasoning/thinking text received (never yielded)
    usage            the provider's figures so far, merged: e.g. Anthropic's input tokens
                     from message_start survive a stream cut before message_delta
    finish_reason    None unless the final piece arrived
    closed           True once exhausted, failed or closed
    cancelled        True when the consumer stopped it before the final piece

and `settle(prompt_bytes=...)` (the pure `settle_usage`; `prompt_bytes(messages)` gives the
argument) returns provider figures where they
were reported and one token per UTF-8 byte only for the gaps: input tokens fall back to the
prompt's bytes, output tokens to the received text plus reasoning bytes. Output tokens
include reasoning tokens, as both OpenAI and Anthropic report them. For a cut stream these
figures are a floor, not the truth: the provider may have generated tokens that never
reached us; the reservation made before the call is the ceiling.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Literal, Protocol, runtime_checkable

from vouched.llm.errors import ProviderError

__all__ = [
    "Message",
    "Provider",
    "ProviderStream",
    "StreamPiece",
    "Usage",
    "merge_usage",
    "prompt_bytes",
    "settle_usage",
]

Role = Literal["system", "user", "assistant"]
_ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class Usage:
    """Token counts as the provider reported them; None means "not reported"."""

    input_tokens: int | None = None
    output_tokens: int | None = None  # includes reasoning tokens
    reasoning_tokens: int | None = None


@dataclass(frozen=True)
class StreamPiece:
    """One step of a streamed answer: text, or the final piece with usage and finish reason."""

    text: str = ""
    usage: Usage | None = None
    finish_reason: str | None = None


@dataclass(frozen=True)
class Message:
    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ValueError(f"message role must be one of {_ROLES}, not {self.role!r}")


@runtime_checkable
class Provider(Protocol):
    """A streaming text generator. Constructing one opens no connection."""

    name: str
    model: str

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.0
    ) -> ProviderStream: ...


def merge_usage(old: Usage | None, new: Usage | None) -> Usage | None:
    """Later figures win field by field; a field the new report leaves out keeps its value."""
    if old is None:
        return new
    if new is None:
        return old
    return Usage(
        input_tokens=new.input_tokens if new.input_tokens is not None else old.input_tokens,
        output_tokens=new.output_tokens if new.output_tokens is not None else old.output_tokens,
        reasoning_tokens=new.reasoning_tokens if new.reasoning_tokens is not None else old.reasoning_tokens,
    )


def settle_usage(
    usage: Usage | None, *, prompt_bytes: int, received_bytes: int, reasoning_bytes: int = 0
) -> Usage:
    """Provider figures where reported; one token per UTF-8 byte only for the gaps."""
    reported = usage or Usage()
    output_gap = reported.output_tokens is None
    reasoning = reported.reasoning_tokens
    if reasoning is None and output_gap and reasoning_bytes:
        reasoning = reasoning_bytes
    return Usage(
        input_tokens=reported.input_tokens if reported.input_tokens is not None else prompt_bytes,
        output_tokens=received_bytes + reasoning_bytes if output_gap else reported.output_tokens,
        reasoning_tokens=reasoning,
    )


PieceSource = Callable[["ProviderStream"], AsyncGenerator[StreamPiece, None]]


class ProviderStream(AsyncIterator[StreamPiece]):
    """An answer being streamed, and the running account needed to pay for it.

    `source` is the provider's async generator function; it receives this object so it can
    record figures that arrive before they can be yielded (`note_usage`, `note_reasoning`).
    Text bytes, final usage and finish reason are counted here, from the pieces themselves.
    """

    def __init__(self, source: PieceSource, *, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.received_bytes = 0
        self.reasoning_bytes = 0
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.closed = False
        self.cancelled = False
        self.error: ProviderError | None = None
        self._pieces = source(self)

    # --- what providers call -------------------------------------------------------------

    def note_usage(self, usage: Usage) -> None:
        self.usage = merge_usage(self.usage, usage)

    def note_reasoning(self, text: str) -> None:
        self.reasoning_bytes += len(text.encode("utf-8"))

    # --- what consumers call -------------------------------------------------------------

    def __aiter__(self) -> ProviderStream:
        return self

    async def __anext__(self) -> StreamPiece:
        if self.closed:
            raise StopAsyncIteration
        try:
            piece = await self._pieces.__anext__()
        except StopAsyncIteration:
            self.closed = True
            raise
        except ProviderError as exc:
            self.closed = True
            self.error = exc
            raise
        except asyncio.CancelledError:  # the consuming task was cancelled (reader left)
            self.closed = True
            self.cancelled = self.finish_reason is None
            raise
        except BaseException:
            self.closed = True
            raise
        if piece.text:
            self.received_bytes += len(piece.text.encode("utf-8"))
        if piece.usage is not None:
            self.usage = merge_usage(self.usage, piece.usage)
        if piece.finish_reason is not None:
            self.finish_reason = piece.finish_reason
        return piece

    async def aclose(self) -> None:
        """Stop now: the provider's response and connection are closed before this returns."""
        if self.closed:
            return
        self.closed = True
        self.cancelled = self.finish_reason is None
        await self._pieces.aclose()

    async def __aenter__(self) -> ProviderStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def text(self) -> str:
        """Read the whole answer (a convenience for tests and the CLI)."""
        return "".join([piece.text async for piece in self])

    def settle(self, *, prompt_bytes: int) -> Usage:
        """The figures to charge: see the module docstring."""
        return settle_usage(
            self.usage,
            prompt_bytes=prompt_bytes,
            received_bytes=self.received_bytes,
            reasoning_bytes=self.reasoning_bytes,
        )

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return (
            f"<ProviderStream {self.provider}:{self.model} {state} received_bytes={self.received_bytes}"
            f" usage={self.usage} finish_reason={self.finish_reason!r}>"
        )


def prompt_bytes(messages: Sequence[Message]) -> int:
    """UTF-8 bytes of the messages' contents: the gap-fill for unreported input tokens."""
    return sum(len(m.content.encode("utf-8")) for m in messages)

