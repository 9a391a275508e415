"""The path of one question, in order (DESIGN.md): one async core that yields typed events.

    L1 refusal patterns → records route → retrieval → L2 evidence threshold
    → numbered sources (L3) → spend reservation → generation → L4/L5 gate → done

The two refusal layers run before any model call. Nothing heavy is touched before it is
needed: an L1 refusal builds no embedder, runs no store query and constructs no provider.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from contextlib import aclosing
import time
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import AsyncIterator, Callable, Sequence

from vouched.answer.events import (
    CitedSource, DoneEvent, Event, NoticeEvent, RefusalEvent, SentenceEvent, Usage,
)
from vouched.answer.cache import cacheable as cache_answer_parts
from vouched.answer.extractive import ExtractiveGenerator, stream_of
from vouched.answer.records import record_sentences, record_sources, select_records
from vouched.config import Config
from vouched.guard.prompt import PromptSource, build_messages, fit_sources, source_budget
from vouched.guard.threshold import decide, out_of_force_winner, scoring_queries
from vouched.retrieve.fusion import fused_order, rrf
from vouched.spend.budget import SpendGate
from vouched.types import Passage, SearchFilters, SearchResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Previous:
    """The previous turn of a conversation."""

    question: str
    answer: str = ""


@dataclass
class TraceRecord:
    """What happened to one question (persisted by vouched.trace when configured)."""

    id: str
    question: str
    created_at: str = ""
    tenant: str = ""
    as_of: str | None = None
    previous_question: str | None = None
    normalized: str = ""
    lang: str = ""
    route: str = ""
    layer: str | None = None
    category: str | None = None
    outcome: str = ""
    threshold: float = 0.0
    evidence: float = 0.0
    evidence_run: str = ""
    anchors: list[str] = field(default_factory=list)  # L2 coverage: "kind:text" of each anchor of the question
    anchors_found: list[str] = field(default_factory=list)
    anchors_missing: list[str] = field(default_factory=list)
    retrieved: list[dict] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)
    sentences: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    stages_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def passage_source(p: Passage, number: int) -> PromptSource:
    c = p.chunk
    return PromptSource(
        number=number, id=c.id, doc_id=c.doc_id, title=c.title, section=c.section,
        date=c.updated_at.isoformat() if c.updated_at else None, url=c.url, text=c.text, kind="passage", flags=c.flags,
    )


class Pipeline:
    def __init__(
        self,
        config: Config,
        *,
        retriever_factory: Callable[[], object],
        store_factory: Callable[[], object],
        embedder_factory: Callable[[], object],
        provider_factory: Callable[[], object] | None = None,
        spend: SpendGate | None = None,
        trace_sink: Callable[[TraceRecord], None] | None = None,
    ) -> None:
        from vouched.guard.packs import load_packs
        from vouched.text import LANGS

        self.config = config
        self._retriever_factory = retriever_factory
        self._store_factory = store_factory
        self._embedder_factory = embedder_factory
        self._provider_factory = provider_factory
        self.spend = spend
        self.trace_sink = trace_sink
        # L1 runs every language's pack: a reader may ask in any language, and safety must
        # not depend on language identification.
        from vouched.guard.kinds import packs_for_kind, texts_for_kind

        # ... of the categories in force for the site's kind (vouched.guard.kinds)
        self.packs = packs_for_kind(load_packs(LANGS, config.guard.extra_patterns or None), config.site_kind,
                                    config.site.refuse, config.guard.extra_patterns)
        self._texts = texts_for_kind(config.site_kind, config.guard.texts)
        s = config.subject
        self.subject_names = tuple(n for n in (s.name, *s.aliases) if n)
        self.last_trace: TraceRecord | None = None
        self.cache = None
        if config.cache.enabled:
            from vouched.answer.cache import SemanticCache
            from vouched.spend.metrics import CacheMetrics

            self.cache = SemanticCache.from_config(config, CacheMetrics())

    # -- helpers ---------------------------------------------------------------------------
    def text(self, key: str, lang: str) -> str:
        from vouched.guard.texts import fixed_text

        return fixed_text(key, lang, self._texts, default_lang=self.config.default_language)

    def _lang(self, question: str, lang: str | None) -> str:
        from vouched.text import detect_language

        if lang:
            return lang
        return detect_language(question, tuple(self.config.languages), self.config.default_language)

    def _refuse(self, trace: TraceRecord, layer: str | None, category: str, lang: str, key: str,
                usage: Usage | None = None) -> list[Event]:
        trace.layer, trace.category, trace.outcome = layer, category, "refused"
        return [
            RefusalEvent(layer=layer or "", category=category, text=self.text(key, lang)),
            DoneEvent(outcome="refused", sources=(), trace_id=trace.id, layer=layer, category=category, lang=lang,
                      usage=usage or Usage()),
        ]

    def _finish(self, trace: TraceRecord, t0: float) -> None:
        trace.stages_ms["total"] = (time.perf_counter() - t0) * 1000
        self.last_trace = trace
        if self.trace_sink:
            try:
                self.trace_sink(trace)
            except Exception:  # a trace must never break an answer
                log.exception("trace sink failed for %s", trace.id)

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
        from vouched.guard.refusal import match_refusal
        from vouched.guard.route import match_overview
        from vouched.text import normalize

        t0 = time.perf_counter()
        trace = TraceRecord(
            id=uuid.uuid4().hex, question=question, normalized=normalize(question),
            created_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            tenant=tenant or self.config.corpus.tenant, as_of=as_of.isoformat() if as_of else None,
            previous_question=previous.question if previous else None,
        )
        try:
            from vouched.answer.analysis import check_input, clarification, smalltalk, unsupported_language
            from vouched.answer.parts import split_question

            cfg = self.config
            question = check_input(question, max_bytes=cfg.server.max_question_bytes)
            given_lang = lang
            lang = self._lang(question, lang)
            trace.lang = lang
            prev_q = previous.question if previous else None
            l1 = dict(packs=self.packs, subject_names=self.subject_names, pronoun=cfg.subject.pronoun)

            m = match_refusal(question, previous_question=prev_q, **l1)
            parts = split_question(question) if cfg.guard.partial_answers else [question]
            refused_parts: list[tuple[str, str]] = []
            if m is not None and len(parts) > 1:
                # A part that matches is refused as L1 would; the others may still be answered.
                part_matches = [match_refusal(p, **l1) for p in parts]
                if any(pm is None for pm in part_matches) and any(pm is not None for pm in part_matches):
                    refused_parts = [(p, pm.category) for p, pm in zip(parts, part_matches) if pm is not None]
                    parts = [p for p, pm in zip(parts, part_matches) if pm is None]
                    m = None
            trace.stages_ms["l1"] = (time.perf_counter() - t0) * 1000
            if m is not None:
                trace.route = "refusal"
                for e in self._refuse(trace, "L1", m.category, lang, f"refusal.{m.category}"):
                    yield e
                return

            if not refused_parts:
                kind = smalltalk(question, self.subject_names)
                if kind is not None:
                    trace.route, trace.category, trace.outcome = "smalltalk", kind, "answered"
                    yield SentenceEvent(text=self.text(f"reply.{kind}", lang), sources=())
                    yield DoneEvent(outcome="answered", sources=(), trace_id=trace.id, category=kind, lang=lang)
                    return
                if given_lang is None:
                    foreign = unsupported_language(question, tuple(cfg.languages))
                    if foreign is not None:
                        trace.route = "unsupported_language"
                        trace.warnings.append(f"question language not served: {foreign}")
                        for e in self._refuse(trace, None, "unsupported_language", cfg.default_language,
                                              "refusal.unsupported_language"):
                            yield e
                        return

            ov = None if refused_parts else match_overview(
                question, subject_names=self.subject_names, pronoun=cfg.subject.pronoun, previous_question=prev_q)
            if ov is not None:
                trace.route = "records"
                async for e in self._records(trace, ov.topic, lang, tenant):
                    yield e
                return

            if not refused_parts and len(parts) == 1:
                why = clarification(question, has_previous=previous is not None,
                                    min_content_words=cfg.guard.clarify_min_content_words, lang=lang)
                if why is not None:
                    trace.route, trace.layer, trace.category, trace.outcome = "clarify", None, why, "refused"
                    trace.warnings.append(f"clarify: {why}")
                    yield NoticeEvent(kind="clarify", text=self.text("notice.clarify", lang))
                    yield DoneEvent(outcome="refused", sources=(), trace_id=trace.id, category="clarify", lang=lang)
                    return

            if len(parts) > 1 or refused_parts:
                trace.route = "partial"
                async for e in self._partial(trace, parts, refused_parts, previous, lang, tenant, as_of):
                    yield e
                return

            trace.route = "retrieval"
            async for e in self._retrieval(trace, question, previous, lang, tenant, as_of):
                yield e
        finally:
            self._finish(trace, t0)

    async def _partial(self, trace, parts: list[str], refused_parts: list[tuple[str, str]], previous, lang, tenant,
                       as_of) -> AsyncIterator[Event]:
        """A multi-part question: each part scored on its own; answer the covered parts only.

        A later part is also scored joined to the first ("… and what did it cost?" leans on
        it), as a follow-up is; the threshold is the same. Parts refused by L1 and parts
        without evidence are named in the fixed "uncovered" line and on the done event.
        """
        cfg = self.config
        filters = SearchFilters(tenant=tenant or cfg.corpus.tenant, as_of=as_of)
        covered: list[str] = []
        uncovered: list[str] = []
        lists: dict[str, list[Passage]] = {}
        t = time.perf_counter()
        for i, part in enumerate(parts):
            prev = previous if i == 0 or previous is not None else Previous(question=parts[0])
            runs = self._run_texts(part, prev, lang)
            decision, results = await asyncio.to_thread(self._score_runs, runs, lang, filters)
            if decision.passed:
                cov = self._coverage(trace, part, lang, results, decision.run, results[decision.run].passages)
                if cov is not None and not cov.passed:
                    trace.warnings.append(f"part {i + 1}: L2 coverage: {cov.reason}")
                    decision = dataclasses.replace(decision, passed=False)
            if decision.passed and decision.run == "joined" and prev is not previous:
                # Joined to the first part, the first part's words carry the score: count it
                # only if the passages also hold a word of this part's own.
                decision = _own_words_found(part, parts[0], results["joined"], lang, decision)
            if decision.passed and await self._out_of_force(trace, runs[decision.run],
                                                            results[decision.run].passages, filters, lang,
                                                            label=f"part {i + 1}: "):
                decision = dataclasses.replace(decision, passed=False)
            trace.warnings.append(f"part {i + 1}: evidence {decision.evidence:.3f} ({decision.run}), "
                                  f"{'covered' if decision.passed else 'not covered'}: {part}")
            if decision.passed:
                covered.append(part)
                lists[f"p{i}"] = list(results[decision.run].passages)
                if decision.evidence >= trace.evidence:
                    trace.evidence, trace.evidence_run = decision.evidence, decision.run
            else:
                uncovered.append(part)
            trace.threshold = decision.threshold
        trace.stages_ms["retrieve"] = (time.perf_counter() - t) * 1000
        for part, category in refused_parts:
            trace.warnings.append(f"part refused by L1 ({category}): {part}")
        if not covered:
            if refused_parts:
                category = refused_parts[0][1]
                for e in self._refuse(trace, "L1", category, lang, f"refusal.{category}"):
                    yield e
                return
            for e in self._refuse(trace, "L2", "no_evidence", lang, "refusal.no_evidence"):
                yield e
            return
        by_id = {p.chunk.id: p for ps in lists.values() for p in ps}
        fused = rrf({k: [p.chunk.id for p in ps] for k, ps in lists.items()}, {}, cfg.retrieval.rrf_k)
        passages = [by_id[i] for i in fused_order(fused)[: cfg.retrieval.top_k]]
        trace.retrieved = _trace_rows(passages)
        asked = " ".join(covered)
        sources, _conflicts = self._context(passages, asked, as_of, trace)
        done: DoneEvent | None = None
        async for e in self._generate(trace, asked, previous, sources, lang):
            if isinstance(e, DoneEvent):
                done = e
                continue
            yield e
        assert done is not None
        missing = [p for p in parts if p in uncovered] + [p for p, _ in refused_parts]
        if done.outcome == "refused" or not missing:
            yield done
            return
        for _part, category in refused_parts:
            yield RefusalEvent(layer="L1", category=category, text=self.text(f"refusal.{category}", lang))
        if uncovered:
            quoted = "; ".join(_quote(p, lang) for p in uncovered)
            yield NoticeEvent(kind="uncovered", text=self.text("notice.uncovered", lang).replace("{parts}", quoted))
        trace.category = trace.category or "insufficient_context"
        yield dataclasses.replace(done, status="insufficient_context", uncovered=tuple(missing))

    async def _records(self, trace: TraceRecord, topic: str, lang: str, tenant: str | None) -> AsyncIterator[Event]:
        store = self._store_factory()
        records = await asyncio.to_thread(store.records, tenant or self.config.corpus.tenant)
        chosen = select_records(records, topic, lang, self.config.answer.summary_records)
        sources = record_sources(chosen, lang)
        trace.source_ids = [s.id for s in sources]
        sentences = record_sentences(sources) if sources else ["NO_ANSWER"]
        async for e in self._gated(trace, stream_of(sentences), sources, lang, outcome="records", prompt_bytes=0):
            yield e

    async def _out_of_force(self, trace: TraceRecord, query: str, passages: Sequence[Passage], filters: SearchFilters,
                            lang: str, label: str = "") -> bool:
        """L2's out-of-force check (guard/threshold.out_of_force_winner) for a query that cleared
        the threshold: True when it must be refused all the same; the reason goes to the trace."""
        if not self.config.guard.out_of_force_check:
            return False
        t = time.perf_counter()
        wide = await asyncio.to_thread(self._search, query, dataclasses.replace(filters, any_time=True, include_drafts=True), lang)
        oof = out_of_force_winner(passages, wide.passages, filters.as_of or date.today())
        trace.stages_ms["out_of_force"] = trace.stages_ms.get("out_of_force", 0.0) + (time.perf_counter() - t) * 1000
        if oof is None:
            return False
        trace.warnings.append(
            f"{label}L2 out of force: the best source, {oof.doc_id} ({oof.why}, evidence {oof.evidence:.3f}), beats "
            f"every in-force source (best {oof.in_force_doc_id}, {oof.in_force_evidence:.3f}) and is not a version of it")
        return True

    def _search(self, query: str, filters: SearchFilters, lang: str) -> SearchResult:
        return self._retriever_factory().search(query, filters=filters, query_lang=lang)

    def _run_texts(self, question: str, previous: Previous | None, lang: str | None = None) -> dict[str, str]:
        from vouched.answer.followup import followup_reason
        from vouched.guard.route import is_ordinal, resolve_ordinal
        from vouched.text.anchors import question_anchors

        if previous is None:
            return {"question": question}
        item = resolve_ordinal(question, previous.answer)
        ordinal = item is not None or is_ordinal(question)
        if not ordinal:
            # Only a question that reads as a follow-up is also scored joined to the previous turn.
            own = question_anchors(question, lang or self._lang(question, None), exempt_names=self.subject_names)
            if followup_reason(question, own, packs=self.packs) is None:
                return {"question": question}
        return scoring_queries(question, previous.question, previous.answer, item, ordinal)

    def coverage_verdict(self, question: str, lang: str, results: dict, run: str, passages,
                         rare_cut: float | None = None):
        """L2 coverage of ``question``'s own anchors by ``passages`` (pure given the search results;
        calibration calls it with each candidate rare-word cut)."""
        from vouched.answer.coverage import check_coverage, passages_keys
        from vouched.text.anchors import question_anchors

        th = self.config.threshold
        own = results.get("question")
        df = own.doc_freq if own is not None else None
        cut = th.rare_cut if rare_cut is None else rare_cut
        anchors = question_anchors(question, lang, exempt_names=self.subject_names,
                                   doc_freq=df.df if df is not None else None, n_docs=df.n_docs if df is not None else 0,
                                   rare_cut=0.0 if run == "ordinal" else cut)
        return check_coverage(anchors, passages_keys(passages), rare_share=th.rare_share)

    def _coverage(self, trace: TraceRecord, question: str, lang: str, results: dict, run: str, passages):
        """L2 coverage of the question's OWN anchors by the passages that would be given
        (vouched.answer.coverage), whichever run passed; recorded on the trace. None when off."""
        if not self.config.threshold.coverage:
            return None
        t = time.perf_counter()
        verdict = self.coverage_verdict(question, lang, results, run, passages)
        trace.anchors.extend(a for a in verdict.anchors if a not in trace.anchors)
        trace.anchors_found.extend(a for a in verdict.found if a not in trace.anchors_found)
        trace.anchors_missing.extend(a for a in verdict.missing if a not in trace.anchors_missing)
        trace.stages_ms["coverage"] = trace.stages_ms.get("coverage", 0.0) + (time.perf_counter() - t) * 1000
        return verdict

    def score_evidence(self, question: str, previous: Previous | None, lang: str, filters: SearchFilters):
        """L2's input: the runs a question is scored as, each searched, and the decision.

        Synchronous (retrieval is): the pipeline runs it in a worker thread; calibration calls
        it directly, so a calibrated threshold is measured exactly as it is applied.
        """
        return self._score_runs(self._run_texts(question, previous, lang), lang, filters)

    def _score_runs(self, runs: dict[str, str], lang: str, filters: SearchFilters):
        results = {name: self._search(q, filters, lang) for name, q in runs.items()}
        return decide({n: r.evidence for n, r in results.items()}, self.config.threshold_in_force()), results

    async def _retrieval(self, trace, question, previous, lang, tenant, as_of) -> AsyncIterator[Event]:
        from vouched.guard.route import mentions_subject

        cfg = self.config
        filters = SearchFilters(tenant=tenant or cfg.corpus.tenant, as_of=as_of)
        t = time.perf_counter()
        # Retrieval is synchronous (SQLite, numpy, the embedder): run it off the event loop so
        # concurrent streams in the service do not wait on each other.
        runs = self._run_texts(question, previous, lang)
        decision, results = await asyncio.to_thread(self._score_runs, runs, lang, filters)
        trace.stages_ms["retrieve"] = (time.perf_counter() - t) * 1000
        # What the extractive generator looks for: the run that carried the evidence (for a
        # follow-up, the question joined to its context; for "the third one", that item).
        plan_question = runs.get(decision.run, question)
        for r in results.values():
            trace.warnings.extend(r.warnings)
        trace.threshold, trace.evidence, trace.evidence_run = decision.threshold, decision.evidence, decision.run
        best = results[decision.run]
        passages = list(best.passages)
        about_subject = mentions_subject(question, self.subject_names, cfg.subject.pronoun)
        if about_subject and cfg.subject.name and cfg.subject.name.lower() not in question.lower():
            # Ordering help only: this run never counts toward the threshold.
            aug = await asyncio.to_thread(self._search, f"{question} {cfg.subject.name}", filters, lang)
            passages = _merge_for_order(passages, list(aug.passages), cfg.retrieval.rrf_k, cfg.retrieval.top_k)
        trace.retrieved = _trace_rows(passages)
        if (decision.passed and decision.run == "joined" and previous is not None
                and runs["joined"].startswith(previous.question)):  # not an ordinal's context join
            # The previous turn's words carry a joined run: count it only if its passages also
            # hold a content word of the question's own.
            decision = _own_words_found(question, previous.question, best, lang, decision)
            if not decision.passed:
                trace.warnings.append("L2: the joined run's passages hold none of the question's own words")
        refuse = not decision.passed or await self._out_of_force(trace, plan_question, best.passages, filters, lang)
        category = "no_evidence"
        if not refuse:
            cov = self._coverage(trace, question, lang, results, decision.run, passages)
            if cov is not None and not cov.passed:
                trace.warnings.append(f"L2 coverage: {cov.reason}")
                refuse, category = True, "uncovered"
        if refuse:
            if about_subject:
                trace.route = "records_summary"
                async for e in self._records(trace, "overview", lang, tenant):
                    yield e
                return
            for e in self._refuse(trace, "L2", category, lang, "refusal.no_evidence"):
                yield e
            return

        cache_key = None
        if self.cache is not None and previous is None and as_of is None and best.corpus_version:
            embedder = self._embedder_factory()
            vector = await asyncio.to_thread(lambda: embedder.embed_queries([question])[0])
            cache_key = dict(question=question, tenant=filters.tenant, lang=lang, corpus_version=best.corpus_version,
                             model=getattr(embedder, "model_id", ""))
            hit = await asyncio.to_thread(self.cache.lookup, vector, **cache_key)
            if hit is not None:
                trace.route, trace.outcome = "cache", "answered"
                trace.source_ids = [s.id for s in hit.sources]
                trace.warnings.append(f"semantic cache hit: cosine {hit.similarity:.4f} to {hit.question!r}")
                for sentence in hit.sentences:
                    yield sentence
                yield DoneEvent(outcome="answered", sources=hit.sources, trace_id=trace.id, lang=lang)
                return
        sources, conflicts = self._context(passages, question, as_of, trace)
        events: list[Event] = []
        async for e in self._generate(trace, question, previous, sources, lang, plan_question=plan_question):
            if isinstance(e, DoneEvent) and conflicts:
                involved = {x for c in conflicts for x in (c.a, c.b)}
                cited = [s for s in e.sources if s.id in involved]
                if cited:
                    docs = "; ".join(dict.fromkeys(f"{s.title or s.doc_id}" + (f" ({s.date})" if s.date else "") for s in cited))
                    notice = NoticeEvent(kind="conflict", text=self.text("notice.conflict", lang).replace("{docs}", docs))
                    events.append(notice)
                    yield notice
            events.append(e)
            yield e
        if cache_key is not None:
            got = cache_answer_parts(events)
            if got is not None:
                await asyncio.to_thread(self.cache.put, vector, sentences=got[0], sources=got[1], **cache_key)

    def _context(self, passages, question: str, as_of, trace: TraceRecord):
        """Numbered sources: merged, within budget, conflicts flagged; ordered for the generator.

        For a model the assembled order ("lost in the middle": best first, second best last,
        documents by authority and date between); the extractive generator ranks sentences
        partly by source rank, so it gets the same sources in relevance order.
        """
        from vouched.answer.context import assemble_context

        cfg = self.config
        budget = source_budget(cfg.answer.context_tokens, question, cfg.answer.max_output_tokens)
        ctx = assemble_context(passages, max_sources=cfg.retrieval.top_k, budget_tokens=budget,
                               as_of=as_of or date.today())
        ordered = list(ctx.sources)
        if cfg.answer.provider == "extractive" or self._provider_factory is None:
            ordered.sort(key=lambda s: s.rank)
        sources = fit_sources([s.prompt_source(i) for i, s in enumerate(ordered, 1)], budget)
        trace.source_ids = [s.id for s in sources]
        for c in ctx.conflicts:
            trace.warnings.append(f"conflict ({c.reason}): {c.a} {list(c.only_a)} vs {c.b} {list(c.only_b)}")
        return sources, ctx.conflicts

    async def _generate(self, trace, question, previous, sources, lang, *, plan_question: str | None = None
                        ) -> AsyncIterator[Event]:
        cfg = self.config
        if cfg.answer.provider == "extractive" or self._provider_factory is None:
            gen = ExtractiveGenerator(self._embedder_factory(), cfg.answer.extractive_sentences, exclude=self.subject_names)
            t = time.perf_counter()
            sentences = await asyncio.to_thread(gen.plan, plan_question or question, sources, lang)
            trace.stages_ms["generate_plan"] = (time.perf_counter() - t) * 1000
            async for e in self._gated(trace, stream_of(sentences), sources, lang, outcome="answered", prompt_bytes=0):
                yield e
            return
        from vouched.llm.base import Message

        messages = build_messages(question, sources, subject=cfg.subject.name, pronoun=cfg.subject.pronoun, lang=lang,
                                  previous_question=previous.question if previous else None)
        prompt_bytes = sum(len(m["content"].encode("utf-8")) for m in messages)
        provider = self._provider_factory()
        max_out = cfg.answer.max_output_tokens + cfg.answer.reasoning_reserve_tokens
        reservation = None
        if self.spend is not None:
            reservation = await asyncio.to_thread(
                self.spend.reserve, model=provider.model, prompt_bytes=prompt_bytes, max_output_tokens=max_out)
            if reservation is None:
                trace.layer, trace.category, trace.outcome = "spend", "monthly_limit", "limited"
                yield NoticeEvent(kind="limit", text=self.text("notice.limit", lang))
                yield DoneEvent(outcome="limited", sources=(), trace_id=trace.id, layer="spend", category="monthly_limit", lang=lang)
                return
        stream = provider.stream([Message(**m) for m in messages], max_tokens=cfg.answer.max_output_tokens,
                                 temperature=cfg.answer.temperature)
        try:
            async for e in self._gated(trace, stream, sources, lang, outcome="answered", prompt_bytes=prompt_bytes):
                yield e
        finally:
            if reservation is not None:
                u = trace.usage
                await asyncio.to_thread(
                    self.spend.settle, reservation, model=provider.model,
                    input_tokens=u.get("input_tokens") or prompt_bytes, output_tokens=u.get("output_tokens") or 0)

    async def _gated(self, trace, stream, sources: Sequence[PromptSource], lang: str, *, outcome: str,
                     prompt_bytes: int) -> AsyncIterator[Event]:
        """Hold text until a sentence ends, check it, release it — or stop everything."""
        from vouched.guard.gate import SentenceGate
        from vouched.llm.base import settle_usage

        # early_stop (a model's stream: prompt_bytes > 0): a value or name in none of the sources stops
        # the stream as soon as it is complete; sentences copied from the sources (extractive,
        # records) cannot hold one.
        gate = SentenceGate({s.number: s.text for s in sources}, lang, allowed_names=self.subject_names,
                            early_stop=prompt_bytes > 0)
        by_number = {s.number: s for s in sources}
        cited: list[int] = []
        released = 0
        stop: tuple[str, str | None, str | None] | None = None  # (kind, rule, value)
        finish_reason = None
        t = time.perf_counter()
        try:
            async with aclosing(_verdict_batches(stream, gate)) as batches:
                async for verdicts, reason in batches:
                    finish_reason = reason or finish_reason
                    for v in verdicts:
                        if v.ok and v.cited:
                            v = self._beyond_gate(v, by_number, lang)
                        ev, stop = self._verdict(trace, v, cited)
                        if ev is not None:
                            released += 1
                            yield ev
                        if stop:
                            break
                    if stop:
                        break
        finally:
            await stream.aclose()
            trace.stages_ms["generate"] = (time.perf_counter() - t) * 1000
            usage = settle_usage(stream.usage, prompt_bytes=prompt_bytes, received_bytes=stream.received_bytes,
                                 reasoning_bytes=stream.reasoning_bytes)
            trace.usage = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                           "provider": stream.provider, "model": stream.model}
            price = self.config.spend.prices.get(stream.model)
            if price is not None:
                from vouched.spend.money import cost_usd

                trace.usage["cost_usd"] = cost_usd(usage.input_tokens or 0, usage.output_tokens or 0, price)
        done_sources = tuple(_cited_source(by_number[n]) for n in cited if n in by_number)
        usage_ev = Usage(trace.usage.get("input_tokens"), trace.usage.get("output_tokens"), stream.provider, stream.model)
        if stop and stop[0] == "no_answer" and released == 0:
            # the model's own NO_ANSWER: the refusal carries what the call used
            for e in self._refuse(trace, None, "no_answer", lang, "refusal.no_evidence", usage=usage_ev):
                yield e
            return
        if stop and stop[0] == "held":
            layer = "L5" if stop[1] == "first_person" else "L4"
            trace.layer, trace.category, trace.outcome = layer, stop[1], "held"
            key = "notice.held_name" if stop[1] == "unsupported_name" else "notice.held"
            yield NoticeEvent(kind="held", text=self.text(key, lang), rule=stop[1])
            yield DoneEvent(outcome="held", sources=done_sources, trace_id=trace.id, layer=layer, category=stop[1], usage=usage_ev, lang=lang)
            return
        if finish_reason == "length":
            trace.outcome = "truncated"
            yield NoticeEvent(kind="truncated", text=self.text("notice.truncated", lang))
            yield DoneEvent(outcome="truncated", sources=done_sources, trace_id=trace.id, usage=usage_ev, lang=lang)
            return
        trace.outcome = outcome
        yield DoneEvent(outcome=outcome, sources=done_sources, trace_id=trace.id, usage=usage_ev, lang=lang)  # type: ignore[arg-type]

    def _beyond_gate(self, v, by_number, lang: str):
        """Checks on a sentence the gate passed: flagged-only evidence, then personal data.

        ``injection``: every source the sentence cites was flagged at ingest as reading like
        instructions to a model (guard.injection.mode = "flag") — it is never the only
        evidence. ``pii``: an e-mail, phone, IBAN/card or national id that no public cited
        source contains, or a deployment's private value (guard/pii.py).
        """
        from vouched.guard.injection import sole_flagged_evidence
        from vouched.guard.pii import is_public_source, pii_verdict

        cited = [by_number[n] for n in v.cited if n in by_number]
        if sole_flagged_evidence(cited):
            return v._replace(ok=False, rule="injection", value=cited[0].id, released="")
        pii = self.config.guard.pii
        public = {s.number for s in cited if s.kind == "record" or is_public_source(s.doc_id, s.doc_id, pii.public_sources)}
        verdict = pii_verdict(v.released, {s.number: s.text for s in cited}, public, pii.private_values, lang)
        if verdict is not None:
            return v._replace(ok=False, rule="pii", value=f"{verdict.kind}: {verdict.value} ({verdict.reason})", released="")
        vs = self.config.guard.verify
        if vs.enabled and v.released:
            from vouched.guard.verify import verify_claim

            embedder = self._embedder_factory() if vs.use_embedder else None
            check = verify_claim(v.released, [s.text for s in cited], embedder=embedder, lang=lang)
            if check.verdict != "supported":
                value = f"{check.verdict}: {check.reason}"
                if vs.policy == "hold":
                    return v._replace(ok=False, rule="verify", value=value, released="")
                if vs.policy == "drop":
                    return v._replace(rule="verify_dropped", value=value, released="")
                return v._replace(rule="verify_marked", value=value)
        return v

    @staticmethod
    def _verdict(trace: TraceRecord, v, cited: list[int]):
        trace.sentences.append({"text": v.sentence, "ok": v.ok, "rule": v.rule, "value": v.value, "cited": list(v.cited)})
        if v.ok:
            if v.rule == "verify_dropped":  # left out by the verifier's "drop" policy
                return None, None
            for n in v.cited:
                if n not in cited:
                    cited.append(n)
            if not v.released.strip():
                return None, None
            return SentenceEvent(text=v.released, sources=tuple(v.cited), unverified=v.rule == "verify_marked"), None
        if v.rule == "no_answer":
            return None, ("no_answer", v.rule, v.value)
        return None, ("held", v.rule, v.value)


async def _verdict_batches(stream, gate):
    """(verdicts, finish reason) for each streamed piece, then the gate's flush at the end.

    A stream cut by the length limit is not flushed: its unfinished last sentence is never
    checked or released (the reader gets the "truncated" notice instead).
    """
    finish_reason = None
    async for piece in stream:
        finish_reason = piece.finish_reason or finish_reason
        yield (gate.feed(piece.text) if piece.text else []), piece.finish_reason
    if finish_reason != "length":
        yield gate.finish(), None


def _own_words_found(part: str, first: str, result: SearchResult, lang: str, decision):
    """``decision``, failed when no top passage of the joined run holds a word of ``part``'s own."""
    from vouched.text import analyze

    own = set(analyze(part, lang)) - set(analyze(first, lang))
    if not own:
        return decision
    for p in result.passages[:3]:
        if own & set(analyze(p.chunk.text, p.chunk.lang)):
            return decision
    return dataclasses.replace(decision, passed=False)


def _trace_rows(passages: Sequence[Passage]) -> list[dict]:
    return [
        {"id": p.chunk.id, "doc_id": p.chunk.doc_id, "rank": i, "fused": round(p.fused, 6), "dense": round(p.dense, 4),
         "keyword": round(p.keyword, 4), "evidence": round(p.evidence, 4)}
        for i, p in enumerate(passages, 1)
    ]


def _quote(part: str, lang: str) -> str:
    part = part.strip().rstrip("?？؟")
    return f"“{part}”" if lang in ("en", "zh", "hi") else f"«{part}»"


def _cited_source(s: PromptSource) -> CitedSource:
    return CitedSource(number=s.number, id=s.id, doc_id=s.doc_id, title=s.title, section=s.section, date=s.date,
                       url=s.url, kind="record" if s.kind == "record" else "passage")


def _merge_for_order(primary: list[Passage], extra: list[Passage], k: int, top_k: int) -> list[Passage]:
    by_id = {p.chunk.id: p for p in extra}
    by_id.update({p.chunk.id: p for p in primary})
    fused = rrf({"q": [p.chunk.id for p in primary], "subject": [p.chunk.id for p in extra]}, {}, k)
    return [by_id[i] for i in fused_order(fused)[:top_k]]
