"""L2, decided: the runs a question is scored as, each searched; the threshold; the checks on a pass.

    runs (front.scoring_runs) → search each → guard.threshold.decide → own words of a joined run
    → out of force (guard.threshold.out_of_force_winner) → coverage of the question's anchors
    (answer.coverage.check_coverage) → pass, or refuse ("no_evidence" | "uncovered")

`Scoring.single` decides a one-part question, `Scoring.parts` each part of a multi-part one.
`score_evidence` and `coverage_verdict` are what calibration measures, so a calibrated
threshold is measured exactly as it is applied.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Mapping, Sequence

from vouched.answer.front import Previous, Question, Rules, scoring_runs
from vouched.guard.threshold import decide, out_of_force_winner
from vouched.retrieve.fusion import fused_order, rrf
from vouched.trace.record import TraceRecord
from vouched.types import Passage, SearchFilters, SearchResult

if TYPE_CHECKING:
    from vouched.answer.build import Lazy
    from vouched.retrieve import HybridRetriever


@dataclass(frozen=True)
class Scored:
    """A one-part question's L2 outcome."""

    passages: tuple[Passage, ...]  # what the context is built from (ordering help merged in)
    plan_question: str  # the run that carried the evidence: what the extractive generator looks for
    best: SearchResult  # the result of that run
    refuse: bool
    category: str = "no_evidence"  # why it is refused: "no_evidence" | "uncovered"
    about_subject: bool = False  # a refusal goes to the records summary instead


@dataclass(frozen=True)
class PartsScored:
    """A multi-part question's L2 outcome, part by part."""

    covered: tuple[str, ...]
    uncovered: tuple[str, ...]
    passages: tuple[Passage, ...]  # the covered parts' passages, fused


def trace_rows(passages: Sequence[Passage]) -> list[dict]:
    return [
        {"id": p.chunk.id, "doc_id": p.chunk.doc_id, "rank": i, "fused": round(p.fused, 6), "dense": round(p.dense, 4),
         "keyword": round(p.keyword, 4), "evidence": round(p.evidence, 4)}
        for i, p in enumerate(passages, 1)
    ]


def own_words_found(part: str, first: str, result: SearchResult, lang: str, decision):
    """``decision``, failed when no top passage of the joined run holds a word of ``part``'s own."""
    from vouched.text import analyze

    own = set(analyze(part, lang)) - set(analyze(first, lang))
    if not own:
        return decision
    for p in result.passages[:3]:
        if own & set(analyze(p.chunk.text, p.chunk.lang)):
            return decision
    return dataclasses.replace(decision, passed=False)


def merge_for_order(primary: list[Passage], extra: list[Passage], k: int, top_k: int) -> list[Passage]:
    by_id = {p.chunk.id: p for p in extra}
    by_id.update({p.chunk.id: p for p in primary})
    fused = rrf({"q": [p.chunk.id for p in primary], "subject": [p.chunk.id for p in extra]}, {}, k)
    return [by_id[i] for i in fused_order(fused)[:top_k]]


def fuse(lists: Mapping[str, Sequence[Passage]], k: int, top_k: int) -> list[Passage]:
    by_id = {p.chunk.id: p for ps in lists.values() for p in ps}
    fused = rrf({name: [p.chunk.id for p in ps] for name, ps in lists.items()}, {}, k)
    return [by_id[i] for i in fused_order(fused)[:top_k]]


class Scoring:
    """L2 for one deployment: its config, the front's rules, and its retriever (built on the
    first search: an L1 refusal builds none)."""

    def __init__(self, config, rules: Rules, retriever: "Lazy[HybridRetriever]") -> None:
        self.config = config
        self.rules = rules
        self._retriever = retriever

    def search(self, query: str, filters: SearchFilters, lang: str) -> SearchResult:
        return self._retriever.get().search(query, filters=filters, query_lang=lang)

    # -- what calibration measures ------------------------------------------------------------
    def score_runs(self, runs: Mapping[str, str], lang: str, filters: SearchFilters):
        results = {name: self.search(q, filters, lang) for name, q in runs.items()}
        return decide({n: r.evidence for n, r in results.items()}, self.config.threshold_in_force()), results

    def score_evidence(self, question: str, previous: Previous | None, lang: str, filters: SearchFilters):
        """L2's input for ``question``: its runs, each searched, and the decision (synchronous)."""
        return self.score_runs(scoring_runs(question, previous, lang, self.rules)[0], lang, filters)

    def coverage_verdict(self, question: str, lang: str, results: Mapping, run: str, passages,
                         rare_cut: float | None = None):
        """L2 coverage of ``question``'s own anchors by ``passages`` (pure given the search results;
        calibration calls it with each candidate rare-word cut)."""
        from vouched.answer.coverage import check_coverage, passages_keys
        from vouched.text.anchors import question_anchors

        th = self.config.threshold
        own = results.get("question")
        df = own.doc_freq if own is not None else None
        cut = th.rare_cut if rare_cut is None else rare_cut
        anchors = question_anchors(question, lang, exempt_names=self.rules.subject_names,
                                   doc_freq=df.df if df is not None else None, n_docs=df.n_docs if df is not None else 0,
                                   rare_cut=0.0 if run == "ordinal" else cut)
        return check_coverage(anchors, passages_keys(passages), rare_share=th.rare_share)

    # -- on the path -------------------------------------------------------------------------------
    def coverage(self, trace: TraceRecord, question: str, lang: str, results: Mapping, run: str, passages):
        """L2 coverage of the question's OWN anchors by the passages that would be given, whichever
        run passed; recorded on the trace. None when off."""
        if not self.config.threshold.coverage:
            return None
        t = time.perf_counter()
        verdict = self.coverage_verdict(question, lang, results, run, passages)
        trace.anchors.extend(a for a in verdict.anchors if a not in trace.anchors)
        trace.anchors_found.extend(a for a in verdict.found if a not in trace.anchors_found)
        trace.anchors_missing.extend(a for a in verdict.missing if a not in trace.anchors_missing)
        trace.add_stage("coverage", (time.perf_counter() - t) * 1000)
        return verdict

    async def out_of_force(self, trace: TraceRecord, query: str, passages: Sequence[Passage], filters: SearchFilters,
                           lang: str, label: str = "") -> bool:
        """L2's out-of-force check for a query that cleared the threshold: True when it must be
        refused all the same; the reason goes to the trace."""
        if not self.config.guard.out_of_force_check:
            return False
        t = time.perf_counter()
        wide = await asyncio.to_thread(self.search, query, dataclasses.replace(filters, any_time=True, include_drafts=True),
                                       lang)
        oof = out_of_force_winner(passages, wide.passages, filters.as_of or date.today())
        trace.add_stage("out_of_force", (time.perf_counter() - t) * 1000)
        if oof is None:
            return False
        trace.warnings.append(
            f"{label}L2 out of force: the best source, {oof.doc_id} ({oof.why}, evidence {oof.evidence:.3f}), beats "
            f"every in-force source (best {oof.in_force_doc_id}, {oof.in_force_evidence:.3f}) and is not a version of it")
        return True

    async def single(self, trace: TraceRecord, q: Question, filters: SearchFilters) -> Scored:
        """L2 for a one-part question (the trace gets the runs, the evidence and why)."""
        cfg, question, lang, previous = self.config, q.text, q.lang, q.previous
        t = time.perf_counter()
        # Retrieval is synchronous (SQLite, numpy, the embedder): run it off the event loop so
        # concurrent streams in the service do not wait on each other.
        runs = q.run_texts
        decision, results = await asyncio.to_thread(self.score_runs, runs, lang, filters)
        trace.stages_ms["retrieve"] = (time.perf_counter() - t) * 1000
        plan_question = runs.get(decision.run, question)
        for r in results.values():
            trace.warnings.extend(r.warnings)
        trace.threshold, trace.evidence, trace.evidence_run = decision.threshold, decision.evidence, decision.run
        best = results[decision.run]
        passages = list(best.passages)
        about_subject = q.about_subject
        if about_subject and cfg.subject.name and cfg.subject.name.lower() not in question.lower():
            # Ordering help only: this run never counts toward the threshold.
            aug = await asyncio.to_thread(self.search, f"{question} {cfg.subject.name}", filters, lang)
            passages = merge_for_order(passages, list(aug.passages), cfg.retrieval.rrf_k, cfg.retrieval.top_k)
        trace.retrieved = trace_rows(passages)
        if (decision.passed and decision.run == "joined" and previous is not None
                and runs["joined"].startswith(previous.question)):  # not an ordinal's context join
            # The previous turn's words carry a joined run: count it only if its passages also
            # hold a content word of the question's own.
            decision = own_words_found(question, previous.question, best, lang, decision)
            if not decision.passed:
                trace.warnings.append("L2: the joined run's passages hold none of the question's own words")
        refuse = not decision.passed or await self.out_of_force(trace, plan_question, best.passages, filters, lang)
        category = "no_evidence"
        if not refuse:
            cov = self.coverage(trace, question, lang, results, decision.run, passages)
            if cov is not None and not cov.passed:
                trace.warnings.append(f"L2 coverage: {cov.reason}")
                refuse, category = True, "uncovered"
        return Scored(tuple(passages), plan_question, best, refuse, category, about_subject)

    async def parts(self, trace: TraceRecord, parts: Sequence[str], previous: Previous | None, lang: str,
                    filters: SearchFilters) -> PartsScored:
        """Each part scored on its own (a later part also joined to the first, as a follow-up is;
        the threshold is the same); the covered parts' passages fused."""
        cfg = self.config
        covered: list[str] = []
        uncovered: list[str] = []
        lists: dict[str, list[Passage]] = {}
        t = time.perf_counter()
        for i, part in enumerate(parts):
            prev = previous if i == 0 or previous is not None else Previous(question=parts[0])
            runs = scoring_runs(part, prev, lang, self.rules)[0]
            decision, results = await asyncio.to_thread(self.score_runs, runs, lang, filters)
            if decision.passed:
                cov = self.coverage(trace, part, lang, results, decision.run, results[decision.run].passages)
                if cov is not None and not cov.passed:
                    trace.warnings.append(f"part {i + 1}: L2 coverage: {cov.reason}")
                    decision = dataclasses.replace(decision, passed=False)
            if decision.passed and decision.run == "joined" and prev is not previous:
                # Joined to the first part, the first part's words carry the score: count it
                # only if the passages also hold a word of this part's own.
                decision = own_words_found(part, parts[0], results["joined"], lang, decision)
            if decision.passed and await self.out_of_force(trace, runs[decision.run], results[decision.run].passages,
                                                           filters, lang, label=f"part {i + 1}: "):
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
        passages = fuse(lists, cfg.retrieval.rrf_k, cfg.retrieval.top_k) if covered else []
        return PartsScored(tuple(covered), tuple(uncovered), tuple(passages))
