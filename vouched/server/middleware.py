"""One ASGI middleware: read bodies within a size and a time limit, count every request by route and status.

A request with a body (a declared Content-Length, or chunked) is read here in full before the
app sees it, so that
  - a body larger than `max_body_bytes` is a 413 whether it was declared or chunked (the
    read stops at the limit and the connection is closed: the rest is never read);
  - a body that does not arrive within `body_timeout_s` (a slow or stalled sender) is a 408
    and the connection is closed;
and the app then receives the body at once, followed by the real channel (so a disconnect
during the answer is still seen by the streaming code).
"""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vouched.server.errors import BodyTimeout, PayloadTooLarge, error_body
from vouched.server.metrics import Metrics


class RequestGuard:
    def __init__(self, app: ASGIApp, *, metrics: Metrics, max_body_bytes: int, body_timeout_s: float = 10.0) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        headers = dict(scope.get("headers") or ())
        length = headers.get(b"content-length")
        chunked = b"chunked" in headers.get(b"transfer-encoding", b"").lower()
        try:
            if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
                status = 413
                await _send_json(send, 413, error_body(self._too_large()), close=True)
                return
            if (length is not None and int(length) > 0) or chunked:
                try:
                    body, more = await self._read_body(receive)
                except (PayloadTooLarge, BodyTimeout) as exc:
                    status = 413 if isinstance(exc, PayloadTooLarge) else 408
                    await _send_json(send, status, error_body(exc), close=True)
                    return
                if body is None:  # the client left while sending
                    status = 499
                    return
                receive = _replay(body, more, receive)

            async def counted_send(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = message["status"]
                await send(message)

            await self.app(scope, receive, counted_send)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(route=path, method=scope.get("method", ""), status=str(status)).inc()

    def _too_large(self) -> PayloadTooLarge:
        return PayloadTooLarge(f"the body is larger than the {self.max_body_bytes} bytes this service reads")

    async def _read_body(self, receive: Receive) -> tuple[bytes | None, bool]:
        """The whole body, read within the size and time limits; (None, _) if the client left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout_s
        parts: list[bytes] = []
        seen = 0
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise BodyTimeout(f"the request body did not arrive within {self.body_timeout_s:g} s")
            try:
                message = await asyncio.wait_for(receive(), left)
            except (asyncio.TimeoutError, TimeoutError):
                raise BodyTimeout(f"the request body did not arrive within {self.body_timeout_s:g} s") from None
            if message["type"] == "http.disconnect":
                return None, False
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_body_bytes:
                raise self._too_large()
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts), False


def _replay(body: bytes, more: bool, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return replayed


async def _send_json(send: Send, status: int, body: dict, *, close: bool = False) -> None:
    data = json.dumps(body).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if close:  # the rest of the body is never read: the connection cannot carry another request
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
