"""One typed event model for everything a guarded answer stream yields.

    sentence  released text (markers stripped) and the sources it cited
    notice    held | truncated | limit | clarify | uncovered | conflict — shown apart from the answer
    refusal   layer, category and the fixed text (never model output)
    done      outcome, cited sources with document/section/date/URL, trace id, usage

`Answer` is what the sync/async convenience methods collect from the events.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Literal, Union

if TYPE_CHECKING:
    from vouched.trace.record import TraceRecord

Outcome = Literal["answered", "records", "refused", "held", "truncated", "limited"]
Layer = Literal["L1", "L2", "L4", "L5", "spend"]


@dataclass(frozen=True)
class CitedSource:
    """A source as the reader sees it under an answer."""

    number: int
    id: str  # chunk id or "record:<id>"
    doc_id: str
    title: str
    section: str = ""
    date: str | None = None  # updated_at for pages, start/end for records
    url: str | None = None
    kind: Literal["passage", "record"] = "passage"


@dataclass(frozen=True)
class SentenceEvent:
    text: str
    sources: tuple[int, ...]
    unverified: bool = False  # released under guard.verify.policy = "mark"
    type: Literal["sentence"] = "sentence"


@dataclass(frozen=True)
class NoticeEvent:
    kind: Literal["held", "truncated", "limit", "unavailable", "clarify", "uncovered", "conflict"]
    text: str
    rule: str | None = None  # for held: the gate rule that failed
    type: Literal["notice"] = "notice"


@dataclass(frozen=True)
class RefusalEvent:
    layer: str
    category: str
    text: str
    type: Literal["refusal"] = "refusal"


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    provider: str = "extractive"
    model: str = ""


@dataclass(frozen=True)
class DoneEvent:
    outcome: Outcome
    sources: tuple[CitedSource, ...]
    trace_id: str
    layer: str | None = None
    category: str | None = None
    usage: Usage = field(default_factory=Usage)
    lang: str = "en"
    # "insufficient_context" when only some parts of the question were answered; the
    # parts the sources do not cover (or that L1 refused) are in ``uncovered``.
    status: str | None = None
    uncovered: tuple[str, ...] = ()
    type: Literal["done"] = "done"
    # What happened to the question (the path returns it with the answer; never serialised
    # with the event: event_to_dict and Answer.to_dict leave it out).
    trace: "TraceRecord | None" = field(default=None, repr=False, compare=False)


Event = Union[SentenceEvent, NoticeEvent, RefusalEvent, DoneEvent]


def event_to_dict(e: Event) -> dict:
    """The event as sent to a reader (a done event's trace left out)."""
    if isinstance(e, DoneEvent):
        d = asdict(replace(e, trace=None))
        del d["trace"]
        return d
    return asdict(e)


@dataclass(frozen=True)
class Answer:
    outcome: Outcome
    layer: str | None
    category: str | None
    text: str
    sentences: tuple[str, ...]
    sources: tuple[CitedSource, ...]
    trace_id: str
    lang: str = "en"
    notices: tuple[NoticeEvent, ...] = ()
    usage: Usage = field(default_factory=Usage)
    status: str | None = None
    uncovered: tuple[str, ...] = ()
    refusals: tuple[RefusalEvent, ...] = ()
    trace: "TraceRecord | None" = field(default=None, repr=False, compare=False)  # what happened (not in to_dict)

    @classmethod
    def from_events(cls, events: list[Event]) -> "Answer":
        sentences = tuple(e.text for e in events if isinstance(e, SentenceEvent))
        notices = tuple(e for e in events if isinstance(e, NoticeEvent))
        refusals = tuple(e for e in events if isinstance(e, RefusalEvent))
        done = next(e for e in events if isinstance(e, DoneEvent))
        parts = list(sentences)
        parts.extend(r.text for r in refusals)
        parts.extend(n.text for n in notices)
        return cls(
            outcome=done.outcome, layer=done.layer, category=done.category, text=" ".join(parts).strip(),
            sentences=sentences, sources=done.sources, trace_id=done.trace_id, lang=done.lang, notices=notices, usage=done.usage,
            status=done.status, uncovered=done.uncovered, refusals=refusals, trace=done.trace,
        )

    def to_dict(self) -> dict:
        d = asdict(replace(self, trace=None))
        del d["trace"]
        return d
