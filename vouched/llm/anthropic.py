"""Anthropic's Messages API, streamed (POST {base_url}/v1/messages, `stream: true`).

Named SSE events, each JSON with a matching `type`:

    message_start        message.usage.input_tokens (+ cache_* input tokens); its
                         output_tokens is a placeholder, not a count, and is ignored
    content_block_start  a block opens (text, thinking, ...)
    content_block_delta  delta.type "text_delta" → delta.text (yielded);
                         "thinking_delta" → delta.thinking (counted, never yielded)
    content_block_stop   a block closes
    message_delta        delta.stop_reason; usage.output_tokens, cumulative (and, on newer
                         API versions, input_tokens, which then replace message_start's)
    message_stop         the end
    ping                 keep-alive
    error                error.type / error.message, e.g. overloaded_error

Stop reasons: "end_turn" and "stop_sequence" → "stop"; "max_tokens" and
"model_context_window_exceeded" → "length"; others ("refusal", "tool_use", "pause_turn")
pass through. System messages go to the top-level `system` field, joined by blank lines.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

import httpx

from vouched.llm import _http
from vouched.llm.base import Message, ProviderStream, StreamPiece, Usage
from vouched.llm.errors import ProviderAuthError, ProviderError, ProviderUnavailable

__all__ = ["ANTHROPIC_VERSION", "AnthropicProvider", "normalise_stop_reason"]

ANTHROPIC_VERSION = "2023-06-01"

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
_UNAVAILABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
_AUTH_ERRORS = frozenset({"authentication_error", "permission_error"})


def normalise_stop_reason(reason: str) -> str:
    return _STOP_REASONS.get(reason, reason)


class AnthropicProvider:
    """Streams from Anthropic's Messages API. A key is always required."""

    name = "anthropic"

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        base_url: str = "https://api.anthropic.com",
        max_retries: int = 0,
        transport: httpx.AsyncBaseTransport | None = None,
        *,
        timeout: float = 60,
        extra_headers: Mapping[str, str] | None = None,
        retry_backoff: float = 0.5,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.timeout = timeout
        self._url = f"{self.base_url}/v1/messages"
        self._transport = transport
        self._extra_headers = dict(extra_headers or {})
        self._api_key_env = api_key_env
        self._api_key = api_key if api_key is not None else os.environ.get(api_key_env) or None
        if not self._api_key:
            raise ProviderAuthError(
                f"no Anthropic API key: set {api_key_env}=... in the environment "
                f"(export {api_key_env}=sk-ant-...), or api_key in the config",
                provider=self.name,
            )

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self.model!r}, base_url={self.base_url!r})"

    def stream(self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.0) -> ProviderStream:
        body = self.request_body(messages, max_tokens=max_tokens, temperature=temperature)
        return ProviderStream(lambda s: self._pieces(s, body), provider=self.name, model=self.model)

    def request_body(self, messages: Sequence[Message], *, max_tokens: int, temperature: float) -> dict[str, Any]:
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in messages if m.role != "system"],
            "stream": True,
            "temperature": temperature,
        }
        if system:
            body["system"] = system
        return body

    def _headers(self) -> dict[str, str]:
        return {
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
            **self._extra_headers,
            "x-api-key": self._api_key or "",
        }

    async def _pieces(self, stream: ProviderStream, body: dict[str, Any]) -> AsyncGenerator[StreamPiece, None]:
        who = "anthropic"
        hint = f"set {self._api_key_env}=... to a valid key, or api_key in the config"
        async with _http.client(self._transport, timeout=self.timeout, url=self._url) as c:
            response = await _http.open_stream(
                c, self._url, body=body, headers=self._headers(), who=who, auth_hint=hint,
                max_retries=self.max_retries, retry_backoff=self.retry_backoff,
            )
            try:
                state = _State()
                try:
                    async with aclosing(_http.events(response, who=who)) as events:
                        async for event in events:
                            payload = _http.parse_json(event.data, who=who)
                            text = state.read(payload, event.event, stream)
                            if text:
                                yield StreamPiece(text=text)
                            if state.stopped:
                                break
                except ProviderUnavailable:
                    if state.finish is None:
                        raise
                if not state.stopped and state.finish is None:
                    raise ProviderUnavailable(f"{who}: the stream ended before message_stop", provider=who)
                yield StreamPiece(usage=state.usage(), finish_reason=state.finish or "stop")
            finally:
                await response.aclose()


class _State:
    """What the events have told us so far."""

    def __init__(self) -> None:
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.finish: str | None = None
        self.stopped = False

    def usage(self) -> Usage:
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens)

    def read(self, payload: Mapping[str, Any], event_name: str, stream: ProviderStream) -> str:
        """Apply one event; return the answer text it carries, if any."""
        kind = payload.get("type") or event_name
        if kind == "content_block_start":
            block = payload.get("content_block") or {}
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                return block["text"]  # normally "", but the schema allows a head start
        elif kind == "content_block_delta":
            delta = payload.get("delta") or {}
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                return delta["text"]
            if delta.get("type") == "thinking_delta" and isinstance(delta.get("thinking"), str):
                stream.note_reasoning(delta["thinking"])
        elif kind == "message_start":
            usage = (payload.get("message") or {}).get("usage") or {}
            self.input_tokens = _input_tokens(usage)
            stream.note_usage(Usage(input_tokens=self.input_tokens))
        elif kind == "message_delta":
            reason = (payload.get("delta") or {}).get("stop_reason")
            if isinstance(reason, str):
                self.finish = normalise_stop_reason(reason)
            usage = payload.get("usage") or {}
            if _http.as_int(usage.get("output_tokens")) is not None:
                self.output_tokens = usage["output_tokens"]
            if _http.as_int(usage.get("input_tokens")) is not None:
                self.input_tokens = _input_tokens(usage)
            stream.note_usage(self.usage())
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise _event_error(payload.get("error"))
        return ""  # ping, content_block_stop, and event types added after this was written


def _input_tokens(usage: Mapping[str, Any]) -> int | None:
    """Prompt tokens billed: plain input plus cache writes and reads (all are input)."""
    parts = [_http.as_int(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    return None if parts[0] is None else sum(p or 0 for p in parts)


def _event_error(error: Any) -> ProviderError:
    kind = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else str(error)
    text = f"anthropic failed mid-stream ({kind or 'error'}): {message}"
    if kind in _UNAVAILABLE_ERRORS:
        return ProviderUnavailable(text, provider="anthropic")
    if kind in _AUTH_ERRORS:
        return ProviderAuthError(text, provider="anthropic")
    return ProviderError(text, provider="anthropic")
