"""The OpenAI-compatible face: vouched events as `chat.completion` and `chat.completion.chunk`.

A generic OpenAI client must be able to tell what vouched did without knowing vouched, so the
outcome is said in OpenAI's own fields:

- **refusal** (L1, L2, no answer): `message.refusal` holds the fixed refusal text (streaming:
  `delta.refusal`). `content` carries the same text, because many chat UIs and LangChain's
  streaming path read only `content`, and a reader must never see an empty bubble.
- **held** (the gate stopped the answer): the released sentences, then the fixed notice as
  its own paragraph; `finish_reason` is `"content_filter"`.
- **truncated** (the generator hit its length limit) or cut by the request's `max_tokens` /
  `max_completion_tokens`: `finish_reason` is `"length"`. `max_tokens` caps the *released*
  text: whole sentences are released while the content stays within that many tokens
  (o200k_base); the generator still runs under answer.max_output_tokens, so the answer's trace
  is complete.
- **citations**: `message.annotations` holds one `url_citation` per (sentence, source it
  cites): `{"type": "url_citation", "url_citation": {"start_index", "end_index", "title",
  "url"}}`, the indices spanning the sentence in `content` (Python string indices, end
  exclusive). Streaming: a source's title and URL are known once the answer is complete, so
  one delta just before the final chunk carries them all (`delta.annotations`, same indices).
  A source without a public URL (no `corpus.base_url`, no page url) has `url` "".
  With `server.openai.inline_citations = true`, each sentence is followed by its markers
  (" [1][2]") and the content ends with a "Sources:" list — what a LangChain user, whose
  client keeps only `content`, then sees of the sources.
- **usage**: the provider's reported tokens when a model answered; otherwise (extractive
  generator, L1/L2 refusals) the tokens of the request's messages and of the released content,
  counted with o200k_base — real counts, never zeros.

Every completion (and the last chunk of a stream) also carries the `vouched` field:

    "vouched": {
      "outcome":  "answered" | "records" | "refused" | "held" | "truncated" | "limited",
      "layer":    "L1" | "L2" | "L4" | "L5" | "spend" | null,   # who stopped it
      "category": "fees" | "no_evidence" | "citation" | ... | null,
      "sources":  [{"number", "id", "doc_id", "title", "section", "date", "url", "kind"}],
      "notices":  [{"kind", "text", "rule"}],
      "trace_id": "…", "lang": "en", "capped": false
    }

A failure after the stream started is sent as `data: {"error": {...}}`, then `data: [DONE]`.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from vouched.answer.events import CitedSource, DoneEvent, Event, NoticeEvent, RefusalEvent, SentenceEvent
from vouched.server.errors import error_body
from vouched.server.streaming import sse_frame

SOURCES_HEADING = "Sources:"


def count_tokens(text: str) -> int:
    from vouched.guard.prompt import count_tokens as _count

    return _count(text) if text else 0


@dataclass(frozen=True)
class FaceOptions:
    """What one request asks of the face."""

    model: str = "vouched"
    max_tokens: int | None = None
    inline_citations: bool = False
    prompt_text: str = ""  # the request's messages, for usage when the generator reports none


def markers(numbers: tuple[int, ...]) -> str:
    return "".join(f"[{n}]" for n in dict.fromkeys(numbers))


def source_line(s: CitedSource, lang: str = "en") -> str:
    from vouched.text.dates import display_date

    # a date or URL in a right-to-left answer keeps its left-to-right order (LRI … PDI)
    meta = " · ".join(x for x in (s.section, display_date(s.date, lang), display_date(s.url, lang)) if x)
    return f"[{s.number}] {s.title}" + (f" — {meta}" if meta else "")


def annotation(source: CitedSource, start: int, end: int) -> dict[str, Any]:
    title = source.title + (f" › {source.section}" if source.section else "")
    return {"type": "url_citation",
            "url_citation": {"start_index": start, "end_index": end, "title": title, "url": source.url or ""}}


@dataclass
class MessageBuilder:
    """Builds the one assistant message from the event stream; `feed` returns each event's delta."""

    options: FaceOptions = field(default_factory=FaceOptions)
    content: str = ""
    refusal: str | None = None
    capped: bool = False
    notices: list[NoticeEvent] = field(default_factory=list)
    spans: list[tuple[int, int, tuple[int, ...]]] = field(default_factory=list)  # (start, end, source numbers)
    annotations: list[dict[str, Any]] = field(default_factory=list)
    done: DoneEvent | None = None

    def _append(self, piece: str) -> bool:
        """Add `piece` unless it would pass max_tokens (then the message is capped from here on)."""
        if self.capped:
            return False
        cap = self.options.max_tokens
        if cap is not None and count_tokens(self.content + piece) > cap:
            self.capped = True
            return False
        self.content += piece
        return True

    def feed(self, event: Event) -> dict[str, Any] | None:
        sep = (" " if isinstance(event, SentenceEvent) else "\n\n") if self.content else ""
        if isinstance(event, SentenceEvent):
            tail = (" " + markers(event.sources)) if self.options.inline_citations and event.sources else ""
            start = len(self.content) + len(sep)
            if not self._append(sep + event.text + tail):
                return None
            self.spans.append((start, start + len(event.text), tuple(event.sources)))
            return {"content": sep + event.text + tail}
        if isinstance(event, NoticeEvent):
            self.notices.append(event)
            return {"content": sep + event.text} if self._append(sep + event.text) else None
        if isinstance(event, RefusalEvent):
            self.refusal = event.text
            self.capped = False  # a fixed refusal text is never cut
            self.content += sep + event.text
            return {"content": sep + event.text, "refusal": event.text}
        if isinstance(event, DoneEvent):
            self.done = self._released(event)
            return self._finish()
        return None

    def _released(self, done: DoneEvent) -> DoneEvent:
        """The done event with only the sources the released sentences cite, when max_tokens cut some."""
        if not self.capped:
            return done
        cited = {n for _, _, numbers in self.spans for n in numbers}
        return replace(done, sources=tuple(s for s in done.sources if s.number in cited))

    def _finish(self) -> dict[str, Any] | None:
        by_number = {s.number: s for s in self.done.sources}  # type: ignore[union-attr]
        self.annotations = [annotation(by_number[n], start, end)
                            for start, end, numbers in self.spans for n in dict.fromkeys(numbers) if n in by_number]
        if not (self.options.inline_citations and self.spans and by_number):
            return None
        cited = [by_number[n] for n in sorted({n for _, _, numbers in self.spans for n in numbers}) if n in by_number]
        listing = "\n\n" + SOURCES_HEADING + "\n" + "\n".join(source_line(s, self.done.lang) for s in cited)
        self.content += listing  # the list is never cut by max_tokens: it is what makes the text checkable
        return {"content": listing}

    @property
    def finish_reason(self) -> str:
        outcome = self.done.outcome if self.done else None
        if outcome == "held":
            return "content_filter"
        if outcome == "truncated" or self.capped:
            return "length"
        return "stop"

    def usage(self) -> dict[str, int]:
        u = self.done.usage if self.done else None
        model_ran = u is not None and u.provider != "extractive"  # extractive and refusals: no model, count the text
        prompt = u.input_tokens if model_ran and u.input_tokens is not None else count_tokens(self.options.prompt_text)
        completion = u.output_tokens if model_ran and u.output_tokens is not None else count_tokens(self.content)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def vouched(self) -> dict[str, Any]:
        done = self.done
        assert done is not None
        return {
            "outcome": done.outcome, "layer": done.layer, "category": done.category,
            "sources": [asdict(s) for s in done.sources],
            "notices": [{"kind": n.kind, "text": n.text, "rule": n.rule} for n in self.notices],
            "trace_id": done.trace_id, "lang": done.lang, "capped": self.capped,
        }

    def message(self) -> dict[str, Any]:
        return {"role": "assistant", "content": self.content, "refusal": self.refusal, "annotations": self.annotations}


def completion(events: list[Event], *, model: str = "vouched", options: FaceOptions | None = None) -> dict[str, Any]:
    """A non-streaming `chat.completion` from the whole event list."""
    b = MessageBuilder(options or FaceOptions(model=model))
    for e in events:
        b.feed(e)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
        "model": b.options.model,
        "choices": [{"index": 0, "message": b.message(), "finish_reason": b.finish_reason, "logprobs": None}],
        "usage": b.usage(),
        "vouched": b.vouched(),
    }


class ChunkStream:
    """Turns events into `chat.completion.chunk` frames, one per released piece of text, then
    (on done) the annotations, the inline sources list if asked, and the final chunk."""

    def __init__(self, *, model: str = "vouched", include_usage: bool = False, options: FaceOptions | None = None) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.options = options or FaceOptions(model=model)
        self.model = self.options.model
        self.include_usage = include_usage
        self.started = False
        self.builder = MessageBuilder(self.options)
        self._usage: dict[str, int] | None = None

    def _chunk(self, delta: dict, finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra}

    def encode(self, event: Event) -> bytes | None:
        frames = b""
        if not self.started:
            frames += sse_frame(self._chunk({"role": "assistant", "content": ""}))
            self.started = True
        delta = self.builder.feed(event)
        if isinstance(event, DoneEvent):
            b = self.builder
            self._usage = b.usage()
            if b.annotations:
                frames += sse_frame(self._chunk({"content": "", "annotations": b.annotations}))
            if delta:
                frames += sse_frame(self._chunk(delta))
            return frames + sse_frame(self._chunk({}, b.finish_reason, vouched=b.vouched()))
        if delta is None:
            return frames or None
        return frames + sse_frame(self._chunk(delta))

    def encode_error(self, exc: BaseException) -> bytes:
        return sse_frame(error_body(exc))

    def trailer(self) -> bytes:
        tail = b""
        if self.include_usage and self._usage is not None:
            tail += sse_frame({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                               "model": self.model, "choices": [], "usage": self._usage})
        return tail + sse_frame("[DONE]")
