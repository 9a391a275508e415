"""Streaming an answer to a reader who may leave at any moment.

Two promises are kept here:

* **The reader leaves → the pipeline stops.** `SSEResponse` always listens for the ASGI
  `http.disconnect` message while it streams (Starlette only does so for servers announcing
  ASGI < 2.4; newer ones would tell us at the next write, which for a slow model can be many
  seconds and many paid tokens later). On disconnect the streaming task is cancelled once;
  the cancellation reaches the pipeline's async generator at its current await — the
  provider's stream — whose `finally` closes the upstream response. Cost is settled from
  what was received.
* **A deadline.** Each request has one deadline (server.request_timeout_s); an answer still
  streaming then is cut with an `error` event of type `timeout`, and the provider stream is
  closed the same way.

Before the response starts, the first event is awaited under the same two watches
(`guarded`), so a failure that happens before anything was said (no corpus, provider down)
is an HTTP status with a JSON error, not a 200 stream carrying an error.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from vouched.errors import VouchedError
from vouched.server.errors import RequestTimeout

log = logging.getLogger("vouched.server")
T = TypeVar("T")

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


from vouched.errors import ClientGone  # noqa: E402  (drawn in the one error tree; re-exported here)


def sse_frame(data: Any, event: str | None = None) -> bytes:
    """One Server-Sent Event; JSON is written on one line, so one `data:` line suffices."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode("utf-8")


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def guarded(work: Awaitable[T], request: Request, deadline: float) -> T:
    """Await `work` in its own task; cancel it if the reader leaves (ClientGone) or the deadline passes."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_disconnected(request.receive))
    try:
        done, _ = await asyncio.wait({task, watch}, timeout=max(0.0, deadline - loop.time()),
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)  # let the pipeline close its provider stream
    if task in done:
        return task.result()
    if watch in done:
        raise ClientGone()
    raise RequestTimeout("no answer within the request timeout")


async def next_event(events: AsyncIterator[T]) -> T:
    try:
        return await events.__anext__()
    except StopAsyncIteration:
        raise VouchedError("the answer stream ended without a done event") from None


async def event_body(
    first: T,
    events: AsyncIterator[T],
    deadline: float,
    encode: Callable[[T], bytes | None],
    encode_error: Callable[[BaseException], bytes],
    trailer: Callable[[], bytes | None] = lambda: None,
    on_close: Callable[[str], None] = lambda how: None,
) -> AsyncIterator[bytes]:
    """Frames for `first` and every later event until the stream ends or the deadline passes.

    A failure after the response started cannot change its status: it becomes an error frame.
    `on_close(how)` runs whatever happened: "done", "timeout", "error" or "gone" (the reader left).
    """
    how = "gone"
    try:
        frame = encode(first)
        if frame:
            yield frame
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    event = await events.__anext__()
            except StopAsyncIteration:
                break
            frame = encode(event)
            if frame:
                yield frame
        how = "done"
    except TimeoutError:
        how = "timeout"
        yield encode_error(RequestTimeout("the answer was cut at the request timeout"))
    except Exception as exc:  # noqa: BLE001 — the status is sent: all that is left is to say so
        how = "error"
        if isinstance(exc, VouchedError):
            log.warning("answer stream failed: %r", exc)
        else:
            log.exception("answer stream failed", exc_info=exc)
        yield encode_error(exc)
    finally:
        await events.aclose()  # type: ignore[attr-defined]
        on_close(how)
    tail = trailer()
    if tail:
        yield tail


class SSEResponse(StreamingResponse):
    """A text/event-stream response whose body is cancelled the moment the reader disconnects."""

    media_type = "text/event-stream"

    def __init__(self, content: AsyncIterator[bytes], status_code: int = 200, headers: dict[str, str] | None = None) -> None:
        super().__init__(content, status_code=status_code, headers={**SSE_HEADERS, **(headers or {})},
                         media_type=self.media_type)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stream = asyncio.ensure_future(self.stream_response(send))
        watch = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait({stream, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
            if not stream.done():
                # One cancellation, not a cancelled scope: the pipeline's cleanup may await
                # (closing an HTTP response upstream) without being cancelled again.
                stream.cancel()
                await asyncio.gather(stream, return_exceptions=True)
            # Cancelled while a frame was being written, the body generator is suspended at
            # its `yield`, not inside the pipeline: close it now rather than at collection.
            aclose = getattr(self.body_iterator, "aclose", None)
            if aclose is not None:
                await aclose()
        if not stream.cancelled() and stream.exception() is not None:
            exc = stream.exception()
            if not isinstance(exc, OSError):  # a write to a closed socket: the reader left
                raise exc  # type: ignore[misc]
        if self.background is not None:
            await self.background()
