"""Any server that speaks OpenAI's streaming Chat Completions: OpenAI, vLLM, llama.cpp, Ollama.

Wire format (POST {base_url}/chat/completions, `stream: true`): SSE `data: {json}` events,
each a `chat.completion.chunk` whose `choices[0].delta.content` carries text and whose
`choices[0].finish_reason` is set once; with `stream_options.include_usage` one more chunk
with `choices: []` (vLLM: `null`) carries `usage`; then `data: [DONE]`. Comments and `event:`
lines are ignored. Reasoning servers send `delta.reasoning_content` (vLLM, llama.cpp) or
`delta.reasoning` (Ollama): it is counted for spend, never yielded as answer text.

The output cap. OpenAI deprecated `max_tokens` for `max_completion_tokens`, and its
reasoning models (o1, o3-mini, o4-mini) reject `max_tokens` with HTTP 400, so sending both
fails there. llama.cpp read only `max_tokens`/`n_predict` until 2026 (ggml-org/llama.cpp
#19831); Ollama (ollama#14464 still open) and llama-cpp-python (#1907) ignore
`max_completion_tokens`: there the cap would be silently dropped and generation unbounded,
which breaks the spend reservation. So `max_tokens_field="auto"` sends
`max_completion_tokens` to api.openai.com and `max_tokens` everywhere else; set it
explicitly ("max_tokens", "max_completion_tokens" or "both") for other servers.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from vouched.llm import _http
from vouched.llm.base import Message, ProviderStream, StreamPiece, Usage
from vouched.llm.errors import ProviderAuthError, ProviderError, ProviderUnavailable

__all__ = ["OpenAICompatProvider", "normalise_finish_reason"]

MaxTokensField = Literal["auto", "max_tokens", "max_completion_tokens", "both"]


_FINISH_REASONS = {"eos": "stop", "eos_token": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def normalise_finish_reason(reason: str) -> str:
    """OpenAI, vLLM, llama.cpp and Ollama say "stop" / "length"; Hugging Face TGI has said
    "eos_token" and "stop_sequence"; a few proxies pass Anthropic's "max_tokens" through."""
    return _FINISH_REASONS.get(reason, reason)


class OpenAICompatProvider:
    """Streams from an OpenAI-compatible `/chat/completions` endpoint.

    `api_key` wins over the `api_key_env` variable. A key is required unless the server
    is on this machine (localhost, 127.0.0.0/8, ::1); `api_key_required` overrides that
    guess, e.g. False for a keyless vLLM on another host of a private network.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60,
        transport: httpx.AsyncBaseTransport | None = None,
        extra_headers: Mapping[str, str] | None = None,
        *,
        max_tokens_field: MaxTokensField = "auto",
        api_key_required: bool | None = None,
        max_retries: int = 0,
        retry_backoff: float = 0.5,
    ) -> None:
        if urlsplit(base_url).scheme not in ("http", "https"):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if max_tokens_field not in ("auto", "max_tokens", "max_completion_tokens", "both"):
            raise ValueError(f"unknown max_tokens_field {max_tokens_field!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self._url = f"{self.base_url}/chat/completions"
        self._transport = transport
        self._extra_headers = dict(extra_headers or {})
        self._api_key_env = api_key_env
        self._api_key = api_key if api_key is not None else os.environ.get(api_key_env) or None
        required = not _http.is_loopback(self.base_url) if api_key_required is None else api_key_required
        if required and not self._api_key:
            raise ProviderAuthError(
                f"no API key for the OpenAI-compatible server at {self.base_url}: "
                f"set {api_key_env}=... in the environment (export {api_key_env}=sk-...), "
                "or api_key in the config",
                provider=self.name,
            )
        if max_tokens_field == "auto":
            host = urlsplit(self.base_url).hostname or ""
            max_tokens_field = "max_completion_tokens" if host == "api.openai.com" else "max_tokens"
        self.max_tokens_field: MaxTokensField = max_tokens_field

    def __repr__(self) -> str:
        return f"OpenAICompatProvider(base_url={self.base_url!r}, model={self.model!r})"

    def stream(self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.0) -> ProviderStream:
        body = self.request_body(messages, max_tokens=max_tokens, temperature=temperature)
        return ProviderStream(lambda s: self._pieces(s, body), provider=self.name, model=self.model)

    def request_body(self, messages: Sequence[Message], *, max_tokens: int, temperature: float) -> dict[str, Any]:
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": temperature,
        }
        if self.max_tokens_field in ("max_tokens", "both"):
            body["max_tokens"] = max_tokens
        if self.max_tokens_field in ("max_completion_tokens", "both"):
            body["max_completion_tokens"] = max_tokens
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream", **self._extra_headers}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    async def _pieces(self, stream: ProviderStream, body: dict[str, Any]) -> AsyncGenerator[StreamPiece, None]:
        who = self.name
        hint = f"set {self._api_key_env}=... to a valid key, or api_key in the config"
        async with _http.client(self._transport, timeout=self.timeout, url=self._url) as c:
            response = await _http.open_stream(
                c, self._url, body=body, headers=self._headers(), who=who, auth_hint=hint,
                max_retries=self.max_retries, retry_backoff=self.retry_backoff,
            )
            try:
                finish: str | None = None
                usage: Usage | None = None
                done = False
                try:
                    async with aclosing(_http.events(response, who=who)) as events:
                        async for event in events:
                            if event.data.strip() == "[DONE]":
                                done = True
                                break
                            payload = _http.parse_json(event.data, who=who)
                            if payload.get("error"):
                                raise _stream_error(payload["error"], who)
                            if isinstance(payload.get("usage"), dict):
                                usage = _usage(payload["usage"])
                                stream.note_usage(usage)
                            text, reason = _read_choice(payload, stream)
                            if reason:
                                finish = normalise_finish_reason(reason)
                            if text:
                                yield StreamPiece(text=text)
                except ProviderUnavailable:
                    if finish is None:  # cut before the model finished: the caller must know
                        raise
                if not done and finish is None:
                    raise ProviderUnavailable(f"{who}: the stream from {self.base_url} ended before [DONE]", provider=who)
                yield StreamPiece(usage=usage, finish_reason=finish or "stop")
            finally:
                await response.aclose()


def _read_choice(payload: Mapping[str, Any], stream: ProviderStream) -> tuple[str, str | None]:
    """Text and finish reason of choice 0 (we never ask for n > 1)."""
    for choice in payload.get("choices") or ():
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue
        delta = choice.get("delta") or {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            stream.note_reasoning(reasoning)
        text = delta.get("content")
        reason = choice.get("finish_reason")
        return (text if isinstance(text, str) else ""), (reason if isinstance(reason, str) else None)
    return "", None


def _usage(raw: Mapping[str, Any]) -> Usage:
    details = raw.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=_http.as_int(raw.get("prompt_tokens")),
        output_tokens=_http.as_int(raw.get("completion_tokens")),
        reasoning_tokens=_http.as_int(reasoning),
    )


def _stream_error(error: Any, who: str) -> ProviderError:
    """An error sent inside the stream (OpenAI, vLLM: `data: {"error": {...}}`)."""
    message = error.get("message") if isinstance(error, dict) else str(error)
    code = error.get("code") if isinstance(error, dict) else None
    text = f"{who} failed mid-stream: {message}"  # who: the provider's name
    if code in (429, 500, 502, 503, 504, "server_error", "rate_limit_exceeded"):
        return ProviderUnavailable(text, provider=who)
    return ProviderError(text, provider=who)
