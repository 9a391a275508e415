"""From passages that passed L2 to released sentences.

    semantic cache → numbered sources (answer.context, L3 budget) → spend reservation
    → generation (extractive, or a provider's stream) → the gate loop: each sentence checked
    (guard.gate, then guard.final.final_verdict) before release; a violation stops everything

The records route and the cache's hits end here too. Every ending is built by
answer/outcomes.py.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from datetime import date
from typing import TYPE_CHECKING, AsyncIterator, Sequence

from vouched.answer import outcomes
from vouched.answer.cache import cacheable as cache_answer_parts
from vouched.answer.events import DoneEvent, Event, SentenceEvent, Usage
from vouched.answer.extractive import ExtractiveGenerator, stream_of
from vouched.answer.front import Previous
from vouched.answer.outcomes import Texts, cited_source
from vouched.answer.records import record_sentences, record_sources, select_records
from vouched.guard.gate_markers import drop_citation_lead
from vouched.guard.prompt import PromptSource, build_messages, fit_sources, gate_text, source_budget
from vouched.trace.record import TraceRecord
from vouched.types import Passage

if TYPE_CHECKING:
    from vouched.answer.build import Lazy
    from vouched.answer.cache import SemanticCache
    from vouched.embed import Embedder
    from vouched.llm.base import Provider
    from vouched.spend.budget import SpendGate
    from vouched.store import Store


class Generation:
    """The back half of the path for one deployment."""

    def __init__(self, config, texts: Texts, subject_names: tuple[str, ...], *, embedder: "Lazy[Embedder]",
                 store: "Lazy[Store]", provider: "Lazy[Provider] | None", spend: "SpendGate | None" = None,
                 cache: "SemanticCache | None" = None) -> None:
        self.config = config
        self.text = texts
        self.subject_names = subject_names
        self._embedder = embedder
        self._store = store
        self._provider = provider
        self.spend = spend
        self.cache = cache
        self._llm_verifier = None  # [guard.verify] backend = "llm": built on the first claim it checks

    def llm_verifier(self):
        """The second-model verifier (guard.verify_llm.LLMVerifier), once per deployment."""
        if self._llm_verifier is None:
            from vouched.guard.verify_llm import llm_verifier

            self._llm_verifier = llm_verifier(self.config.guard.verify)
        return self._llm_verifier

    @property
    def extractive(self) -> bool:
        return self.config.answer.provider == "extractive" or self._provider is None

    # -- the routes that end here ----------------------------------------------------------------
    async def records(self, trace: TraceRecord, topic: str, lang: str, tenant: str | None) -> AsyncIterator[Event]:
        store = self._store.get()
        records = await asyncio.to_thread(store.records, tenant or self.config.corpus.tenant)
        chosen = select_records(records, topic, lang, self.config.answer.summary_records)
        sources = record_sources(chosen, lang)
        trace.source_ids = [s.id for s in sources]
        sentences = record_sentences(sources) if sources else ["NO_ANSWER"]
        async for e in self.gated(trace, stream_of(sentences), sources, lang, outcome="records", prompt_bytes=0):
            yield e

    async def answer(self, trace: TraceRecord, question: str, previous: Previous | None, passages: Sequence[Passage],
                     lang: str, *, tenant: str, as_of: date | None, corpus_version: str | None,
                     plan_question: str) -> AsyncIterator[Event]:
        """A one-part question that passed L2: the cache, else context, generation and the gate."""
        cache_key = vector = None
        if self.cache is not None and previous is None and as_of is None and corpus_version:
            embedder = self._embedder.get()
            vector = await asyncio.to_thread(lambda: embedder.embed_queries([question])[0])
            cache_key = dict(question=question, tenant=tenant, lang=lang, corpus_version=corpus_version,
                             model=getattr(embedder, "model_id", ""))
            hit = await asyncio.to_thread(self.cache.lookup, vector, **cache_key)
            if hit is not None:
                trace.route = "cache"
                trace.source_ids = [s.id for s in hit.sources]
                trace.warnings.append(f"semantic cache hit: cosine {hit.similarity:.4f} to {hit.question!r}")
                for sentence in hit.sentences:
                    yield sentence
                yield outcomes.done(trace, "answered", lang, hit.sources)
                return
        sources, conflicts = self.context(passages, question, as_of, trace)
        events: list[Event] = []
        async for e in self.generate(trace, question, previous, sources, lang, plan_question=plan_question):
            if isinstance(e, DoneEvent):
                notice = outcomes.conflict_notice(self.text, conflicts, e.sources, lang)
                if notice is not None:
                    events.append(notice)
                    yield notice
            events.append(e)
            yield e
        if cache_key is not None:
            got = cache_answer_parts(events)
            if got is not None:
                await asyncio.to_thread(self.cache.put, vector, sentences=got[0], sources=got[1], **cache_key)

    # -- the stops ---------------------------------------------------------------------------------
    def context(self, passages, question: str, as_of, trace: TraceRecord):
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
        if self.extractive:
            ordered.sort(key=lambda s: s.rank)
        sources = fit_sources([s.prompt_source(i) for i, s in enumerate(ordered, 1)], budget)
        trace.source_ids = [s.id for s in sources]
        for c in ctx.conflicts:
            trace.warnings.append(f"conflict ({c.reason}): {c.a} {list(c.only_a)} vs {c.b} {list(c.only_b)}")
        return sources, ctx.conflicts

    async def generate(self, trace, question, previous, sources, lang, *, plan_question: str | None = None
                       ) -> AsyncIterator[Event]:
        cfg = self.config
        if self.extractive:
            gen = ExtractiveGenerator(self._embedder.get(), cfg.answer.extractive_sentences, exclude=self.subject_names)
            t = time.perf_counter()
            sentences = await asyncio.to_thread(gen.plan, plan_question or question, sources, lang)
            trace.stages_ms["generate_plan"] = (time.perf_counter() - t) * 1000
            async for e in self.gated(trace, stream_of(sentences), sources, lang, outcome="answered", prompt_bytes=0):
                yield e
            return
        from vouched.llm.base import Message

        messages = build_messages(question, sources, subject=cfg.subject.name, pronoun=cfg.subject.pronoun, lang=lang,
                                  previous_question=previous.question if previous else None)
        prompt_bytes = sum(len(m["content"].encode("utf-8")) for m in messages)
        assert self._provider is not None  # not extractive
        provider = self._provider.get()
        max_out = cfg.answer.max_output_tokens + cfg.answer.reasoning_reserve_tokens
        reservation = None
        if self.spend is not None:
            # Why a reservation was refused decides the reader's notice: a store outage is not a spent
            # budget (a SpendGate without reserve_or_reason: read as the cap).
            admit = getattr(self.spend, "reserve_or_reason", None)
            if admit is not None:
                reservation, why = await asyncio.to_thread(
                    admit, model=provider.model, prompt_bytes=prompt_bytes, max_output_tokens=max_out)
            else:
                reservation, why = await asyncio.to_thread(
                    self.spend.reserve, model=provider.model, prompt_bytes=prompt_bytes, max_output_tokens=max_out), "cap"
            if reservation is None:
                for e in outcomes.limited(trace, self.text, lang, why or "cap"):
                    yield e
                return
        stream = provider.stream([Message(**m) for m in messages], max_tokens=cfg.answer.max_output_tokens,
                                 temperature=cfg.answer.temperature)
        try:
            async for e in self.gated(trace, stream, sources, lang, outcome="answered", prompt_bytes=prompt_bytes):
                yield e
        finally:
            if reservation is not None:
                u = trace.usage
                await asyncio.to_thread(
                    self.spend.settle, reservation, model=provider.model,
                    input_tokens=u.get("input_tokens") or prompt_bytes, output_tokens=u.get("output_tokens") or 0)

    async def gated(self, trace, stream, sources: Sequence[PromptSource], lang: str, *, outcome: str,
                    prompt_bytes: int) -> AsyncIterator[Event]:
        """Hold text until a sentence ends, check it, release it — or stop everything."""
        from vouched.guard.final import final_verdict
        from vouched.guard.gate import SentenceGate
        from vouched.llm.base import settle_usage

        # early_stop (a model's stream: prompt_bytes > 0): a value or name in none of the sources stops
        # the stream as soon as it is complete; sentences copied from the sources (extractive,
        # records) cannot hold one.
        g = self.config.guard
        gate = SentenceGate({s.number: gate_text(s) for s in sources}, lang, allowed_names=self.subject_names,
                            early_stop=prompt_bytes > 0, attribute_quotes=g.attribute_quotes)
        by_number = {s.number: s for s in sources}
        embedder = None
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
                            if embedder is None and g.verify.enabled and g.verify.use_embedder and v.released:
                                embedder = self._embedder.get()
                            cited_sources = [by_number[n] for n in v.cited if n in by_number]
                            verification = None
                            if g.verify.enabled and g.verify.backend == "llm" and v.released:
                                verification = await self.llm_verifier().averify(
                                    v.released, [s.text for s in cited_sources], lang)
                            v = final_verdict(v, cited_sources, lang=lang, pii=g.pii, verify=g.verify,
                                              embedder=embedder, verification=verification)
                        ev, stop = _release(trace, v, cited)
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
        done_sources = tuple(cited_source(by_number[n]) for n in cited if n in by_number)
        usage_ev = Usage(trace.usage.get("input_tokens"), trace.usage.get("output_tokens"), stream.provider, stream.model)
        if stop and stop[0] == "no_answer" and released == 0:
            # the model's own NO_ANSWER: the refusal carries what the call used
            for e in outcomes.refuse(trace, self.text, None, "no_answer", lang, "refusal.no_evidence", usage=usage_ev):
                yield e
            return
        if stop and stop[0] == "held":
            for e in outcomes.held(trace, self.text, stop[1], lang, done_sources, usage_ev):
                yield e
            return
        if finish_reason == "length":
            for e in outcomes.truncated(trace, self.text, lang, done_sources, usage_ev):
                yield e
            return
        if released == 0:
            # nothing with words came through (a model that wrote only markers, "[1]", or nothing):
            # that is no answer, not an empty "answered"; the trace keeps what it wrote
            for e in outcomes.refuse(trace, self.text, None, "no_answer", lang, "refusal.no_evidence", usage=usage_ev):
                yield e
            return
        yield outcomes.done(trace, outcome, lang, done_sources, usage_ev)


def _release(trace: TraceRecord, v, cited: list[int]):
    """(the sentence event to release or None, the stop or None) for one final verdict."""
    trace.sentences.append({"text": v.sentence, "ok": v.ok, "rule": v.rule, "value": v.value, "cited": list(v.cited)})
    if v.ok:
        if v.rule == "verify_dropped":  # left out by the verifier's "drop" policy
            return None, None
        for n in v.cited:
            if n not in cited:
                cited.append(n)
        if not any(ch.isalnum() for ch in v.released):  # nothing but markers, spaces, punctuation
            return None, None
        return SentenceEvent(text=drop_citation_lead(v.sentence, v.released), sources=tuple(v.cited),
                             unverified=v.rule == "verify_marked"), None
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
