"""The OpenAI-compatible face: vouched events as `chat.completion` and `chat.completion.chunk`.

The reader of a generic chat UI sees one assistant message. Released sentences are joined by
a space; a refusal or a notice (held, truncated, limit) is its own paragraph of that text,
so it is never lost — and never looks like a model's words to a client that reads the
`vouched` field, which every completion (and the last chunk of a stream) carries:

    "vouched": {
      "outcome":  "answered" | "records" | "refused" | "held" | "truncated" | "limited",
      "layer":    "L1" | "L2" | "L4" | "L5" | "spend" | null,   # who stopped it
      "category": "fees" | "no_evidence" | "citation" | ... | null,
      "sources":  [{"number", "id", "doc_id", "title", "section", "date", "url", "kind"}],
      "notices":  [{"kind", "text", "rule"}],
      "trace_id": "…", "lang": "en"
    }

`finish_reason` is "length" for a truncated answer, otherwise "stop". A failure after the
stream started is sent as `data: {"error": {...}}`, then `data: [DONE]`.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict
from typing import Any

from vouched.answer.events import DoneEvent, Event, NoticeEvent, RefusalEvent, SentenceEvent
from vouched.server.errors import error_body
from vouched.server.streaming import sse_frame


def piece_text(event: Event, started: bool) -> str:
    """The text an event adds to the assistant message (sentences joined, notices as paragraphs)."""
    if isinstance(event, SentenceEvent):
        return (" " if started else "") + event.text
    if isinstance(event, (NoticeEvent, RefusalEvent)):
        return ("\n\n" if started else "") + event.text
    return ""


def vouched_extra(done: DoneEvent, notices: list[NoticeEvent]) -> dict[str, Any]:
    return {
        "outcome": done.outcome, "layer": done.layer, "category": done.category,
        "sources": [asdict(s) for s in done.sources],
        "notices": [{"kind": n.kind, "text": n.text, "rule": n.rule} for n in notices],
        "trace_id": done.trace_id, "lang": done.lang,
    }


def usage_of(done: DoneEvent) -> dict[str, int]:
    prompt = done.usage.input_tokens or 0
    completion = done.usage.output_tokens or 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def finish_reason(done: DoneEvent) -> str:
    return "length" if done.outcome == "truncated" else "stop"


def completion(events: list[Event], *, model: str) -> dict[str, Any]:
    """A non-streaming `chat.completion` from the whole event list."""
    text = ""
    for e in events:
        text += piece_text(e, bool(text))
    done = next(e for e in events if isinstance(e, DoneEvent))
    notices = [e for e in events if isinstance(e, NoticeEvent)]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason(done)}],
        "usage": usage_of(done),
        "vouched": vouched_extra(done, notices),
    }


class ChunkStream:
    """Turns events into `chat.completion.chunk` frames, one per released piece of text."""

    def __init__(self, *, model: str, include_usage: bool = False) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model = model
        self.include_usage = include_usage
        self.started = False
        self.notices: list[NoticeEvent] = []
        self._usage: dict[str, int] | None = None

    def _chunk(self, delta: dict, finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}

    def encode(self, event: Event) -> bytes | None:
        frames = b""
        if not self.started and not isinstance(event, DoneEvent):
            frames += sse_frame(self._chunk({"role": "assistant", "content": ""}))
        if isinstance(event, NoticeEvent):
            self.notices.append(event)
        if isinstance(event, DoneEvent):
            self._usage = usage_of(event)
            if not self.started:
                frames += sse_frame(self._chunk({"role": "assistant", "content": ""}))
            return frames + sse_frame(self._chunk({}, finish_reason(event), vouched=vouched_extra(event, self.notices)))
        text = piece_text(event, self.started)
        self.started = True
        return frames + sse_frame(self._chunk({"content": text}))

    def encode_error(self, exc: BaseException) -> bytes:
        return sse_frame(error_body(exc))

    def trailer(self) -> bytes:
        tail = b""
        if self.include_usage and self._usage is not None:
            tail += sse_frame({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                               "model": self.model, "choices": [], "usage": self._usage})
        return tail + sse_frame("[DONE]")
