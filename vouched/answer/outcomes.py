"""How an answer ends: the fixed texts, the refusal and notice endings, the trace finished.

Every ending of the path is built here, so the events a reader gets for a refusal, a held
answer, a truncated one or a spend limit have one source (the texts: guard/texts.py).
"""

from __future__ import annotations

import logging
import time
from typing import Callable

from vouched.answer.events import CitedSource, DoneEvent, Event, NoticeEvent, RefusalEvent, Usage
from vouched.guard.prompt import PromptSource
from vouched.trace.record import TraceRecord

log = logging.getLogger(__name__)


class Texts:
    """The deployment's fixed texts (refusals, notices, replies), by key and language."""

    def __init__(self, config) -> None:
        from vouched.guard.kinds import texts_for_kind

        self._texts = texts_for_kind(config.site_kind, config.guard.texts)
        self._default = config.default_language

    def __call__(self, key: str, lang: str) -> str:
        from vouched.guard.texts import fixed_text

        return fixed_text(key, lang, self._texts, default_lang=self._default)


def refuse(trace: TraceRecord, text: Texts, layer: str | None, category: str, lang: str, key: str,
           usage: Usage | None = None) -> list[Event]:
    """A refusal's events: the fixed text, then done; the trace says who refused and why."""
    trace.layer, trace.category, trace.outcome = layer, category, "refused"
    return [
        RefusalEvent(layer=layer or "", category=category, text=text(key, lang)),
        DoneEvent(outcome="refused", sources=(), trace_id=trace.id, layer=layer, category=category, lang=lang,
                  usage=usage or Usage(), trace=trace),
    ]


def clarify(trace: TraceRecord, text: Texts, why: str, lang: str) -> list[Event]:
    trace.route, trace.layer, trace.category, trace.outcome = "clarify", None, why, "refused"
    trace.warnings.append(f"clarify: {why}")
    return [NoticeEvent(kind="clarify", text=text("notice.clarify", lang)),
            DoneEvent(outcome="refused", sources=(), trace_id=trace.id, category="clarify", lang=lang, trace=trace)]


# Why the spend gate refused (vouched.spend.budget.REFUSALS) -> (trace category, notice kind, text key).
LIMITS = {
    "cap": ("monthly_limit", "limit", "notice.limit"),
    "caller_cap": ("key_limit", "limit", "notice.key_limit"),
    "store": ("spend_unavailable", "unavailable", "notice.unavailable"),
}


def limited(trace: TraceRecord, text: Texts, lang: str, reason: str = "cap") -> list[Event]:
    """The spend reservation was refused: a fixed notice, no call made. ``reason``: the month's
    cap, the API key's own budget, or the counter store down (fail closed: "try again shortly",
    never "the monthly limit is reached")."""
    category, kind, key = LIMITS.get(reason, LIMITS["cap"])
    trace.layer, trace.category, trace.outcome = "spend", category, "limited"
    return [NoticeEvent(kind=kind, text=text(key, lang)),  # type: ignore[arg-type]
            DoneEvent(outcome="limited", sources=(), trace_id=trace.id, layer="spend", category=category,
                      lang=lang, trace=trace)]


def held(trace: TraceRecord, text: Texts, rule: str | None, lang: str, sources: tuple[CitedSource, ...],
         usage: Usage) -> list[Event]:
    """The gate (L4) or the voice check (L5) stopped the answer."""
    layer = "L5" if rule == "first_person" else "L4"
    trace.layer, trace.category, trace.outcome = layer, rule, "held"
    key = "notice.held_name" if rule == "unsupported_name" else "notice.held"
    return [NoticeEvent(kind="held", text=text(key, lang), rule=rule),
            DoneEvent(outcome="held", sources=sources, trace_id=trace.id, layer=layer, category=rule, usage=usage,
                      lang=lang, trace=trace)]


def truncated(trace: TraceRecord, text: Texts, lang: str, sources: tuple[CitedSource, ...], usage: Usage) -> list[Event]:
    trace.outcome = "truncated"
    return [NoticeEvent(kind="truncated", text=text("notice.truncated", lang)),
            DoneEvent(outcome="truncated", sources=sources, trace_id=trace.id, usage=usage, lang=lang, trace=trace)]


def done(trace: TraceRecord, outcome: str, lang: str, sources: tuple[CitedSource, ...] = (),
         usage: Usage | None = None, category: str | None = None) -> DoneEvent:
    trace.outcome = outcome
    return DoneEvent(outcome=outcome, sources=sources, trace_id=trace.id, usage=usage or Usage(),  # type: ignore[arg-type]
                     lang=lang, category=category, trace=trace)


def finish(trace: TraceRecord, t0: float, sink: Callable[[TraceRecord], None] | None) -> None:
    """Total time, then the trace to its sink (a trace must never break an answer)."""
    trace.stages_ms["total"] = (time.perf_counter() - t0) * 1000
    if sink:
        try:
            sink(trace)
        except Exception:
            log.exception("trace sink failed for %s", trace.id)


def cited_source(s: PromptSource) -> CitedSource:
    return CitedSource(number=s.number, id=s.id, doc_id=s.doc_id, title=s.title, section=s.section, date=s.date,
                       url=s.url, kind="record" if s.kind == "record" else "passage")


def quote(part: str, lang: str) -> str:
    part = part.strip().rstrip("?？؟")
    return f"“{part}”" if lang in ("en", "zh", "hi") else f"«{part}»"


def conflict_notice(text: Texts, conflicts, sources: tuple[CitedSource, ...], lang: str) -> NoticeEvent | None:
    """The notice naming the cited documents that disagree (answer.context conflicts), or None."""
    if not conflicts:
        return None
    involved = {x for c in conflicts for x in (c.a, c.b)}
    cited = [s for s in sources if s.id in involved]
    if not cited:
        return None
    docs = "; ".join(dict.fromkeys(f"{s.title or s.doc_id}" + (f" ({s.date})" if s.date else "") for s in cited))
    return NoticeEvent(kind="conflict", text=text("notice.conflict", lang).replace("{docs}", docs))
