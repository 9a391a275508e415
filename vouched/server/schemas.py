"""Request bodies, and the limits that depend on the config.

Pydantic checks the shape (types, a non-blank question, a safe tenant name, hard ceilings);
`check_limits` checks what the deployment configures: the question's size in UTF-8 bytes
(a Persian character is two bytes, a Chinese one three: characters would let a reader send
three times the intended text), the previous turn's size, and the language.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vouched.answer.pipeline import Previous
from vouched.config import Config
from vouched.server.errors import InvalidRequest

TENANT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
LANG_PATTERN = r"^[a-z]{2}$"
# A ceiling before the configured byte limits are read: pydantic counts characters, and a
# character is at most 4 UTF-8 bytes, so nothing the config allows is cut by these.
_HARD_MAX_CHARS = 1_000_000
MAX_CHAT_MESSAGES = 1000


def _not_blank(v: str) -> str:
    if not v.strip():
        raise ValueError("must not be empty or only white space")
    return v


class PreviousTurn(BaseModel):
    """The previous turn of the conversation, for follow-ups ("and the second one?")."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(max_length=_HARD_MAX_CHARS, description="The previous question.")
    answer: str = Field(default="", max_length=_HARD_MAX_CHARS, description="The answer the reader saw (sentences only).")


class AskRequest(BaseModel):
    """POST /v1/ask."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [
            {"question": "Which database did the Tessera Health search run on?"},
            {"question": "and the second one?", "previous": {"question": "Which libraries does she maintain?",
                                                              "answer": "She maintains pakneviss, rrfuse and qrelkit."}},
            {"question": "هزینه‌ی همکاری با لیلا چقدر است؟", "lang": "fa"},
        ]},
    )
    question: str = Field(min_length=1, max_length=_HARD_MAX_CHARS,
                          description="The question, in any configured language; at most server.max_question_bytes UTF-8 bytes.")
    previous: PreviousTurn | None = Field(default=None, description="The previous turn; question + answer at most server.max_history_bytes UTF-8 bytes.")
    lang: str | None = Field(default=None, pattern=LANG_PATTERN, description="Reader's language, one of the config's `languages` (default: detected).")
    tenant: str | None = Field(default=None, pattern=TENANT_PATTERN, description="Tenant to answer from (default: corpus.tenant).")

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, v: str) -> str:
        return _not_blank(v)


class ChatMessage(BaseModel):
    """An OpenAI chat message; content may be a string or a list of parts."""

    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.get("text", "") for p in self.content if p.get("type") in ("text", "input_text"))


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    """POST /v1/chat/completions: an OpenAI request body. Fields not listed are accepted and ignored."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={"examples": [
            {"model": "vouched", "stream": True, "messages": [{"role": "user", "content": "Which languages does she speak?"}]},
        ]},
    )
    model: str | None = Field(default=None, description="Echoed back; the configured generator answers whatever is named.")
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_CHAT_MESSAGES,
                                        description="The conversation; the last message must be the user's question. "
                                                    "System messages are ignored: the guarded assistant keeps its own instructions.")
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(default=None, ge=1, description="Most tokens of released text (whole sentences; o200k_base); finish_reason 'length' when it cut.")
    max_completion_tokens: int | None = Field(default=None, ge=1, description="Same as max_tokens (the newer name); the smaller wins when both are sent.")
    lang: str | None = Field(default=None, pattern=LANG_PATTERN, description="vouched extension: the reader's language.")
    tenant: str | None = Field(default=None, pattern=TENANT_PATTERN, description="vouched extension: the tenant.")


    def token_cap(self) -> int | None:
        caps = [c for c in (self.max_tokens, self.max_completion_tokens) if c is not None]
        return min(caps) if caps else None


class ErrorDetail(BaseModel):
    type: str = Field(description="invalid_request, payload_too_large, rate_limited, timeout, provider_unavailable, "
                                  "provider_error, provider_auth, store_unavailable, embedder_unavailable, not_found, "
                                  "method_not_allowed, config_error, internal_error")
    message: str = Field(description="For 4xx, what to change; for 5xx a fixed public sentence.")
    param: str | None = Field(default=None, description="The field at fault (invalid_request).")
    limit: str | None = Field(default=None, description="minute, hour or day (rate_limited).")
    retry_after_s: float | None = Field(default=None, description="Seconds to wait (rate_limited; also the Retry-After header).")


class ErrorBody(BaseModel):
    """Every error the service answers with."""

    error: ErrorDetail


def utf8_len(s: str) -> int:
    return len(s.encode("utf-8"))


def check_limits(config: Config, question: str, previous: Previous | None, lang: str | None) -> None:
    """Raise InvalidRequest naming the field and the limit, or return None."""
    s = config.server
    size = utf8_len(question)
    if size > s.max_question_bytes:
        raise InvalidRequest(f"question is {size} UTF-8 bytes; the limit is {s.max_question_bytes}", param="question")
    if previous is not None:
        hist = utf8_len(previous.question) + utf8_len(previous.answer)
        if hist > s.max_history_bytes:
            raise InvalidRequest(f"previous question and answer are {hist} UTF-8 bytes; the limit is {s.max_history_bytes}",
                                 param="previous")
    if lang is not None and lang not in config.languages:
        raise InvalidRequest(f"lang {lang!r} is not served here; use one of {config.languages}", param="lang")


def chat_turns(messages: list[ChatMessage]) -> tuple[str, Previous | None]:
    """The question (the last message, a user's) and the previous user/assistant pair."""
    turns = [m for m in messages if m.role in ("user", "assistant")]
    if not turns or turns[-1].role != "user":
        raise InvalidRequest("the last message must have role 'user' and carry the question", param="messages")
    question = turns[-1].text()
    if not question.strip():
        raise InvalidRequest("the last user message is empty", param="messages")
    previous = None
    if len(turns) >= 3 and turns[-2].role == "assistant" and turns[-3].role == "user":
        previous = Previous(question=turns[-3].text(), answer=turns[-2].text())
    return question, previous

