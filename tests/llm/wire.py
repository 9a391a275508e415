"""A loopback HTTP/1.1 server that plays scripted replies over real sockets.

It runs its own event loop in a thread, so the client under test shares nothing with it but
the socket. Each request takes the next `Reply`; what the server saw (request line,
headers, JSON body, parts written, when the client went away) is kept in `server.seen`.
Times are `time.monotonic()`, the same clock in both threads.

Builders for both wire formats are here too: `openai_events(...)`, `anthropic_events(...)`
return one `bytes` per SSE event; `resplit(events, sizes)` cuts them at arbitrary bytes.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable", 529: "Overloaded"}


@dataclass
class Reply:
    status: int = 200
    parts: Sequence[bytes] = ()
    delay: float = 0.0  # before each part
    content_type: str = "text/event-stream"
    chunked: bool = True  # False: no length, body ends when the socket closes
    cut: bool = False  # close the socket after the parts, without finishing the body
    headers: dict[str, str] = field(default_factory=dict)
    hold: Any = None  # a threading.Event: the last part waits until it is set (a stream kept open on cue)

    @classmethod
    def json(cls, status: int, payload: Any) -> Reply:
        return cls(status=status, parts=[json.dumps(payload).encode()], content_type="application/json", chunked=False)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    parts_sent: int = 0
    last_part_at: float | None = None
    client_closed_at: float | None = None
    finished: bool = False


class WireServer:
    def __init__(self, replies: Iterable[Reply]) -> None:
        self._replies = list(replies)
        self.seen: list[Seen] = []
        self.port = 0
        self._ready = threading.Event()
        self._closed_event = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> WireServer:
        self._thread.start()
        if not self._ready.wait(5):
            raise RuntimeError("wire server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)

    def wait_client_closed(self, timeout: float) -> bool:
        return self._closed_event.wait(timeout)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                seen = Seen(*request)
                self.seen.append(seen)
                reply = self._replies.pop(0) if self._replies else Reply(status=500, parts=[b"no reply scripted"])
                if not await self._send(reply, reader, writer, seen):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _send(self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: Seen) -> bool:
        """Write the reply; return True when the connection may carry another request."""
        head = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}", f"content-type: {reply.content_type}"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        body_len = sum(len(p) for p in reply.parts)
        if reply.chunked:
            head.append("transfer-encoding: chunked")
        elif not reply.cut and reply.content_type != "text/event-stream":
            head += [f"content-length: {body_len}", "connection: close"]
        else:
            head.append("connection: close")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        # The client going away shows as end-of-file on our side of the socket.
        watch = asyncio.ensure_future(reader.read(1))
        try:
            for i, part in enumerate(reply.parts):
                if reply.delay:
                    await asyncio.wait([watch], timeout=reply.delay)
                if reply.hold is not None and i == len(reply.parts) - 1:
                    while not reply.hold.is_set() and not watch.done():
                        await asyncio.wait([watch], timeout=0.02)
                if watch.done():
                    return self._client_left(seen)
                writer.write(b"%x\r\n%s\r\n" % (len(part), part) if reply.chunked else part)
                await writer.drain()
                seen.parts_sent += 1
                seen.last_part_at = time.monotonic()
            if reply.cut or not reply.chunked:
                return False
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            seen.finished = True
            await asyncio.sleep(0)
            if watch.done():
                return self._client_left(seen) if not watch.result() else False
            return True
        except ConnectionError:
            return self._client_left(seen)
        finally:
            if not watch.done():
                watch.cancel()
                # A cancelled read is still the reader's waiter until the loop runs it; reading the
                # next request before then raised "readuntil() called while another coroutine is
                # already waiting for incoming data".
                await asyncio.wait([watch])
            if not watch.cancelled():
                watch.exception()  # a reset is an expected way for a client to leave

    def _client_left(self, seen: Seen) -> bool:
        seen.client_closed_at = time.monotonic()
        self._closed_event.set()
        return False


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], Any] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if line:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
    raw = await reader.readexactly(int(headers.get("content-length", "0")))
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        body = raw
    return method, path, headers, body


# --- wire formats ------------------------------------------------------------------------


def sse(data: Any, event: str | None = None) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return ((f"event: {event}\n" if event else "") + f"data: {text}\n\n").encode("utf-8")


def openai_events(
    texts: Sequence[str],
    *,
    finish: str | None = "stop",
    usage: dict[str, Any] | None = None,
    done: bool = True,
    choices_null: bool = False,
) -> list[bytes]:
    """What OpenAI sends: a role chunk, text chunks, a finish chunk, a usage chunk, [DONE]."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        return sse({**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}],
                    "usage": None})

    events = [chunk({"role": "assistant", "content": ""})] + [chunk({"content": t}) for t in texts]
    if finish is not None:
        events.append(chunk({}, finish))
    if usage is not None:
        events.append(sse({**base, "choices": None if choices_null else [], "usage": usage}))
    if done:
        events.append(b"data: [DONE]\n\n")
    return events


def anthropic_events(
    texts: Sequence[str],
    *,
    stop_reason: str | None = "end_turn",
    input_tokens: int = 25,
    output_tokens: int | None = 15,
    stop: bool = True,
) -> list[bytes]:
    """What Anthropic sends: message_start, ping, one text block, message_delta, message_stop."""
    start = {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-x",
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}
    events = [sse(start, "message_start"),
              sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                  "content_block_start"),
              sse({"type": "ping"}, "ping")]
    events += [sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}},
                   "content_block_delta") for t in texts]
    events.append(sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    if stop_reason is not None:
        events.append(sse({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                           "usage": {"output_tokens": output_tokens}}, "message_delta"))
    if stop:
        events.append(sse({"type": "message_stop"}, "message_stop"))
    return events


def resplit(events: Sequence[bytes], sizes: Iterable[int]) -> list[bytes]:
    """The same bytes, cut into parts of the given sizes (cycled), ignoring event bounds."""
    data = b"".join(events)
    sizes = list(sizes)
    parts, i, k = [], 0, 0
    while i < len(data):
        n = max(1, sizes[k % len(sizes)])
        parts.append(data[i : i + n])
        i += n
        k += 1
    return parts
