"""One ASGI middleware: refuse oversized bodies early, count every request by route and status."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vouched.server.errors import PayloadTooLarge, error_body
from vouched.server.metrics import Metrics


class RequestGuard:
    def __init__(self, app: ASGIApp, *, metrics: Metrics, max_body_bytes: int) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        length = dict(scope.get("headers") or ()).get(b"content-length")
        try:
            if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
                status = 413
                await _send_json(send, 413, error_body(PayloadTooLarge(
                    f"the body is larger than the {self.max_body_bytes} bytes this service reads")))
                return

            async def counted_send(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = message["status"]
                await send(message)

            await self.app(scope, self._limited(receive), counted_send)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(route=path, method=scope.get("method", ""), status=str(status)).inc()

    def _limited(self, receive: Receive) -> Receive:
        """A chunked body without Content-Length is counted as it arrives."""
        seen = 0

        async def wrapped() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    raise PayloadTooLarge(f"the body is larger than the {self.max_body_bytes} bytes this service reads")
            return message

        return wrapped


async def _send_json(send: Send, status: int, body: dict) -> None:
    data = json.dumps(body).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})
