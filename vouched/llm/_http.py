"""HTTP plumbing shared by the streaming providers: open, map errors, read events.

One `httpx.AsyncClient` per stream, built when the stream starts and closed when it ends:
no client outlives an event loop, and closing a stream closes its connection. A caller who
wants connection reuse passes its own transport (e.g. one `httpx.AsyncHTTPTransport` per
loop); it is borrowed, never closed here. A response closed before its end is never put
back in httpcore's pool: the connection is dropped, which is what stops generation.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from vouched.llm.errors import (
    ProviderAuthError,
    ProviderError,
    ProviderProtocolError,
    ProviderUnavailable,
)
from vouched.llm.sse import SSEDecoder, SSEEvent

_RETRY_STATUSES = frozenset({408, 409, 425, 429, 529})
_ERROR_BODY_LIMIT = 64 * 1024


def is_loopback(url: str) -> bool:
    """True for http(s)://localhost, 127.0.0.0/8 and ::1: a local server needs no key."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Borrowed(httpx.AsyncBaseTransport):
    """Wraps a caller's transport so that closing our client leaves theirs open."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        return None


def client(transport: httpx.AsyncBaseTransport | None, *, timeout: float, url: str) -> httpx.AsyncClient:
    """A client for one stream; use it as `async with`. (A plain object, not a generator-based
    context manager: the loop's async-generator finaliser must have nothing of ours to
    close out of order.)"""
    return httpx.AsyncClient(
        transport=_Borrowed(transport) if transport is not None else None,
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        follow_redirects=False,
        # Proxy and CA settings from the environment apply to remote providers; a server on
        # this machine is never sent through a proxy.
        trust_env=not is_loopback(url),
    )


async def open_stream(
    c: httpx.AsyncClient,
    url: str,
    *,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    who: str,  # the provider's name: first word of every message, and `ProviderError.provider`
    auth_hint: str,
    max_retries: int = 0,
    retry_backoff: float = 0.5,
) -> httpx.Response:
    """POST and return a 2xx event-stream response, open; raise a ProviderError otherwise.

    Retries (if any) happen only here, before a single byte of the answer was read, so a
    retry never pays twice for text already shown.
    """
    for attempt in range(max_retries + 1):
        try:
            response = await c.send(c.build_request("POST", url, json=body, headers=dict(headers)), stream=True)
        except httpx.TimeoutException:
            error: ProviderError = ProviderUnavailable(f"{who}: no answer from {url} within the timeout", provider=who)
        except httpx.TransportError as exc:
            error = ProviderUnavailable(f"{who}: cannot reach {url}: {exc or type(exc).__name__}", provider=who)
        else:
            if 200 <= response.status_code < 300:
                kind = response.headers.get("content-type", "")
                if kind.split(";")[0].strip().lower() == "text/event-stream":
                    return response
                snippet = (await _read_capped(response))[:200].decode("utf-8", "replace")
                raise ProviderProtocolError(
                    f"{who}: expected an event stream from {url}, got {kind or 'no content type'}: {snippet!r}",
                    status=response.status_code,
                    provider=who,
                )
            error = status_error(response.status_code, await _read_capped(response), who=who, url=url, auth_hint=auth_hint)
        if not isinstance(error, ProviderUnavailable) or attempt == max_retries:
            raise error
        await asyncio.sleep(retry_backoff * 2**attempt)
    raise AssertionError("unreachable")


async def _read_capped(response: httpx.Response) -> bytes:
    body = bytearray()
    try:
        async for part in response.aiter_bytes():
            body += part
            if len(body) >= _ERROR_BODY_LIMIT:
                break
    except httpx.HTTPError:
        pass
    finally:
        await response.aclose()
    return bytes(body[:_ERROR_BODY_LIMIT])


def error_message(body: bytes) -> str:
    """The provider's own words: `error.message` in both OpenAI and Anthropic bodies."""
    text = body.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return text[:300] or "(empty body)"
    if isinstance(payload, dict):
        err = payload.get("error", payload)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
    return text[:300]


def status_error(status: int, body: bytes, *, who: str, url: str, auth_hint: str) -> ProviderError:
    said = error_message(body)
    if status in (401, 403):
        return ProviderAuthError(f"{who} at {url} rejected the API key (HTTP {status}: {said}); {auth_hint}", status=status, provider=who)
    if status in _RETRY_STATUSES or status >= 500:
        return ProviderUnavailable(f"{who} at {url} cannot serve now (HTTP {status}: {said})", status=status, provider=who)
    if status == 404:
        return ProviderError(f"{who}: {url} not found (HTTP 404: {said}); check base_url and model", status=status, provider=who)
    return ProviderError(f"{who} at {url} refused the request (HTTP {status}: {said})", status=status, provider=who)


async def events(response: httpx.Response, *, who: str) -> AsyncIterator[SSEEvent]:
    """The response's SSE events. A broken connection or a stall raises ProviderUnavailable;
    a clean end of body simply ends the iteration (the provider decides if it was early)."""
    decoder = SSEDecoder()
    try:
        async for raw in response.aiter_bytes():
            for event in decoder.feed(raw):
                yield event
    except httpx.TimeoutException as exc:
        raise ProviderUnavailable(f"{who}: the stream stalled past the timeout", provider=who) from exc
    except httpx.TransportError as exc:
        raise ProviderUnavailable(f"{who}: the stream was cut: {exc or type(exc).__name__}", provider=who) from exc
    for event in decoder.close():
        yield event


def parse_json(data: str, *, who: str) -> dict[str, Any]:
    try:
        payload = json.loads(data)
    except ValueError as exc:
        raise ProviderProtocolError(f"{who}: an event is not JSON: {data[:120]!r}", provider=who) from exc
    if not isinstance(payload, dict):
        raise ProviderProtocolError(f"{who}: an event is not a JSON object: {data[:120]!r}", provider=who)
    return payload


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
