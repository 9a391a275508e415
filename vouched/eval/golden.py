"""Golden sets: labelled questions run through the real pipeline, scored per language and category.

`vouched eval GOLDEN.jsonl` calls `golden_command`; the pieces are importable on their own:
`load_golden` (the file → cases), `run_golden` (an Assistant + cases → per-case results),
`summarize` (results → the figures, a pure function), `vouched.eval.report.write_html_report`.

The file. JSON Lines, one case a line (blank lines and lines starting with ``#`` are skipped):

    {"id": "fees-en-1", "question": "What are her rates?", "lang": "en",
     "expect": {"kind": "refuse_pattern", "category": "fees"}}
    {"id": "off-1", "question": "Who won the 2018 World Cup?", "expect": "refuse_no_evidence"}
    {"id": "now-es", "question": "¿A qué se dedica actualmente?", "expect": {"kind": "records",
     "relevant": ["cv-independent"]}}
    {"id": "db-en", "question": "Which database did the Tessera Health search run on?",
     "expect": {"kind": "answer", "relevant": ["en/projects/multilingual-search"],
                "must_contain": ["PostgreSQL"]}}
    {"id": "fu-1", "question": "and what did it cost?", "previous": {"question": "...", "answer": "..."},
     "tenant": "ops", "as_of": "2024-03-01", "expect": "refuse_pattern"}

Keys: ``id`` (unique), ``question``, optional ``lang`` (the case's language for the
breakdowns — it is NOT passed to the pipeline, which detects the language as it would for a
reader; when absent it is detected over all ten languages), optional ``previous``
(``{question, answer}``), optional ``tenant`` and ``as_of`` (YYYY-MM-DD), and ``expect``: a
kind, or an object with ``kind`` and its fields. A bare string is shorthand for a kind that
needs no field. Unknown keys are errors; every error names the file and line.

    refuse_pattern      optional ``category`` (fees, availability, hiring, private,
                        speculation, meta, task)
    refuse_no_evidence  —
    records             optional ``relevant`` (record ids or doc ids; at least one cited),
                        optional ``must_contain``
    answer              ``relevant`` (doc ids that answer it; required), optional ``must_contain``
                        (strings the answer must include, compared after ``normalize``)
    every kind          optional ``forbidden``: doc ids that must appear neither among the
                        retrieved passages nor among the cited sources (a draft, a superseded
                        policy, another tenant's page)

Definitions (the figures `summarize` reports; each is also given per language, per category
and for the follow-up cases — never only as an average):

* Pattern set = cases expecting ``refuse_pattern``. A *pattern refusal* is an outcome
  ``refused`` at layer L1; it is *correct* for a case of the pattern set whose ``category``
  is absent or equal. ``refusal.pattern.precision`` = correct pattern refusals / all L1
  refusals in the run; ``recall`` = correct pattern refusals / cases in the pattern set. An
  L1 refusal with the wrong category therefore costs both.
* No-evidence set = cases expecting ``refuse_no_evidence``. A *no-evidence refusal* is an
  outcome ``refused`` at layer L2 (threshold) OR the model's NO_ANSWER refusal (layer none,
  category ``no_answer``): both say "the sources do not cover this" with the same fixed
  text, and NO_ANSWER is what stops a question that clears the threshold but that the
  sources do not answer (a near-topic question; the draft-only fact). A question in a
  language the site does not serve, refused as such before retrieval (category
  ``unsupported_language``), counts too: the site has no sources in it. An L1 refusal of a no-evidence case does not count (it is a pattern refusal the
  set did not expect, and costs pattern precision). ``precision`` = no-evidence refusals of
  cases in the set / all no-evidence refusals in the run; ``recall`` = those / the set.
* A figure whose denominator is empty is ``null`` (not 1.0 and not 0.0); "perfect" means
  every defined refusal figure is 1.0.
* ``false_refusals``: answerable cases (``answer`` and ``records``) whose outcome is
  ``refused`` — by L1, by L2, or by NO_ANSWER — plus ``answer`` cases that the threshold
  turned into the records summary (a question about the subject below the threshold gets a
  summary instead of an L2 refusal: the reader still did not get the answer), with the
  count, the rate over answerable cases, the split by layer, and the case ids.
* ``records_routed``: ``records`` cases whose trace route is ``records``, over all records cases.
* ``recall@5`` (hit rate): over ``answer`` cases, the share with at least one relevant doc
  among the doc ids of the top 5 retrieved passages (the answer's trace, ``retrieved`` chunk ids in
  rank order, mapped to doc ids through the store). Five passages, not five distinct docs,
  below the default top-k of 8. A case refused before retrieval counts as a miss.
* ``abstention``: should-refuse = both refusal sets; an abstention is any ``refused``
  outcome. ``precision`` = abstentions on should-refuse cases / all abstentions;
  ``recall`` = those / should-refuse cases; ``false_answer_rate`` = should-refuse cases
  that got an answer (outcome answered, records, held or truncated: text may have been
  released) / should-refuse cases.
* ``citation_validity``: over every case, cited source ids (``done.sources``) that are among
  the sources the pipeline gave (the trace's ``source_ids``) / all cited ids.

A case *passes* when its outcome matches its kind and every check it names holds (for
``answer``: outcome ``answered``, a relevant doc in the top 5 and among the cited sources, every
``must_contain``; for ``records``: route and outcome ``records``; for every kind: no
``forbidden`` doc and no cited id outside the sources given). `judge` lists the reasons. The exit code does not
depend on answer quality, only on what must never happen: 0 when both refusal sets are
perfect, citation validity is 100% and no case raised; 1 otherwise; 2 on bad input (the
golden file, the config, or a store with no corpus version).

Runs are deterministic: `golden_command` forces the extractive generator (no external model
call) whatever ``answer.provider`` says; `run_golden` uses the Assistant it is given (a
scripted provider works too).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, field_validator, model_validator

from vouched.config import SUPPORTED_LANGS
from vouched.errors import EXIT_INPUT, EXIT_NO, EXIT_OK

__all__ = [
    "GOLDEN_EXIT_BAD_INPUT",
    "GOLDEN_EXIT_FAIL",
    "GOLDEN_EXIT_OK",
    "L1_CATEGORIES",
    "Expect",
    "GoldenCase",
    "GoldenInputError",
    "GoldenPrevious",
    "GoldenReport",
    "GoldenResult",
    "RECALL_K",
    "build_assistant",
    "figures",
    "gates",
    "golden_command",
    "judge",
    "load_golden",
    "run_case",
    "run_golden",
    "summarize",
]

GOLDEN_EXIT_OK, GOLDEN_EXIT_FAIL, GOLDEN_EXIT_BAD_INPUT = EXIT_OK, EXIT_NO, EXIT_INPUT  # the one table (vouched.errors)
L1_CATEGORIES = ("fees", "availability", "hiring", "private", "speculation", "meta", "task")
RECALL_K = 5
ANSWERED_OUTCOMES = frozenset({"answered", "records", "held", "truncated"})
ExpectKind = Literal["refuse_pattern", "refuse_no_evidence", "records", "answer"]


from vouched.errors import GoldenInputError  # noqa: E402  (drawn in the one error tree; re-exported here)


# -- the file ----------------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GoldenPrevious(_Strict):
    question: StrictStr = Field(min_length=1)
    answer: StrictStr = ""


class Expect(_Strict):
    kind: ExpectKind
    category: StrictStr | None = None
    relevant: tuple[StrictStr, ...] = ()
    must_contain: tuple[StrictStr, ...] = ()
    forbidden: tuple[StrictStr, ...] = ()

    @model_validator(mode="after")
    def _fields_fit_kind(self) -> "Expect":
        if self.category is not None:
            if self.kind != "refuse_pattern":
                raise ValueError(f"`category` belongs to refuse_pattern only, not {self.kind}")
            if self.category not in L1_CATEGORIES:
                raise ValueError(f"unknown category {self.category!r}; choose from {list(L1_CATEGORIES)}")
        if self.kind.startswith("refuse") and (self.relevant or self.must_contain):
            raise ValueError(f"{self.kind} takes no `relevant` or `must_contain` (a refusal has no answer to check)")
        if self.kind == "answer" and not self.relevant:
            raise ValueError("an answer case needs `relevant`: the doc ids that answer it")
        return self


class GoldenCase(_Strict):
    id: StrictStr = Field(min_length=1)
    question: StrictStr = Field(min_length=1)
    expect: Expect
    lang: StrictStr | None = None
    previous: GoldenPrevious | None = None
    tenant: StrictStr | None = None
    as_of: date | None = None

    @field_validator("expect", mode="before")
    @classmethod
    def _shorthand(cls, v: Any) -> Any:
        return {"kind": v} if isinstance(v, str) else v

    @field_validator("lang")
    @classmethod
    def _known_lang(cls, v: str | None) -> str | None:
        if v is not None and v not in SUPPORTED_LANGS:
            raise ValueError(f"unsupported language {v!r}; choose from {list(SUPPORTED_LANGS)}")
        return v

    @property
    def language(self) -> str:
        """The breakdown language: ``lang``, else detected over every supported language."""
        if self.lang:
            return self.lang
        from vouched.text import detect_language

        return detect_language(self.question, SUPPORTED_LANGS, "en")

    @property
    def group(self) -> str:
        """The breakdown category: the L1 category, or the kind."""
        e = self.expect
        if e.kind == "refuse_pattern":
            return e.category or "pattern"
        return {"refuse_no_evidence": "no_evidence"}.get(e.kind, e.kind)

    @property
    def should_refuse(self) -> bool:
        return self.expect.kind in ("refuse_pattern", "refuse_no_evidence")


def _explain(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"]) or "(line)"
        if e["type"] == "extra_forbidden":
            parts.append(f"unknown key `{key}`")
        else:
            parts.append(f"`{key}`: {e['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def load_golden(path: str | Path) -> list[GoldenCase]:
    """Read a golden JSONL file; raises GoldenInputError naming the line of the first problem."""
    p = Path(path)
    if not p.is_file():
        raise GoldenInputError(f"golden file {p} does not exist")
    cases: list[GoldenCase] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GoldenInputError(f"{p}:{n}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise GoldenInputError(f"{p}:{n}: a case is a JSON object, got {type(obj).__name__}")
        try:
            case = GoldenCase.model_validate(obj)
        except ValidationError as exc:
            label = f" (case {obj['id']!r})" if isinstance(obj.get("id"), str) else ""
            raise GoldenInputError(f"{p}:{n}{label}: {_explain(exc)}") from None
        if case.id in seen:
            raise GoldenInputError(f"{p}:{n}: duplicate id {case.id!r} (first on line {seen[case.id]})")
        seen[case.id] = n
        cases.append(case)
    if not cases:
        raise GoldenInputError(f"{p}: no cases")
    return cases


# -- running -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class GoldenResult:
    """What happened to one case, and whether it passed (``failures`` empty)."""

    case: GoldenCase
    outcome: str  # an Answer outcome, or "error" when the pipeline raised
    layer: str | None = None
    category: str | None = None
    route: str = ""
    text: str = ""
    sentences: tuple[str, ...] = ()
    retrieved_doc_ids: tuple[str, ...] = ()  # one per retrieved passage, rank order
    cited_ids: tuple[str, ...] = ()  # done.sources ids (chunk ids or "record:<id>")
    cited_doc_ids: tuple[str, ...] = ()
    source_ids: tuple[str, ...] = ()  # the sources the pipeline gave (trace.source_ids)
    evidence: float | None = None  # best bounded evidence when retrieval ran
    threshold: float | None = None
    lang: str = "en"  # the breakdown language
    failures: tuple[str, ...] = ()
    failure_class: str | None = None  # vouched.trace.failure: the first stage that went wrong
    trace: dict = field(default_factory=dict)
    error: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class GoldenReport:
    results: tuple[GoldenResult, ...]
    meta: dict = field(default_factory=dict)  # config, threshold, embedding model, corpus version, timing

    def summary(self) -> dict:
        return {**summarize(self.results), "meta": self.meta}


def _matches(ident: str, doc_id: str, wanted: Iterable[str]) -> bool:
    w = set(wanted)
    return bool(w & {ident, doc_id, ident.removeprefix("record:")})


def judge(case: GoldenCase, r: GoldenResult) -> tuple[str, ...]:
    """The reasons a result fails its case (empty: passed). Pure."""
    from vouched.text import normalize

    e, out = case.expect, []
    got = f"{r.outcome}" + (f" ({r.layer or 'model'} · {r.category})" if r.category else "")
    if r.error:
        return (f"raised: {r.error}",)
    if e.kind == "refuse_pattern":
        if not is_pattern_refusal(r):
            out.append(f"expected an L1 refusal, got {got}")
        elif e.category and r.category != e.category:
            out.append(f"expected L1 category {e.category}, got {r.category}")
    elif e.kind == "refuse_no_evidence":
        if not is_no_evidence_refusal(r):
            out.append(f"expected a no-evidence refusal (L2, NO_ANSWER or unsupported language), got {got}")
    elif e.kind == "records":
        if r.route != "records" or r.outcome != "records":
            out.append(f"expected the records route, got route {r.route or '-'}, {got}")
    elif r.outcome != "answered":
        missing = (r.trace or {}).get("anchors_missing") or []
        out.append(f"expected an answer, got {got}" + (f"; anchors in no passage: {', '.join(missing)}"
                                                        if r.category == "uncovered" and missing else ""))
    if e.relevant and (e.kind == "records" or r.outcome == "answered"):
        if e.kind == "answer" and not hit_at(r, RECALL_K):
            out.append(f"no relevant doc in the top {RECALL_K} retrieved passages")
        if not any(_matches(i, d, e.relevant) for i, d in zip(r.cited_ids, r.cited_doc_ids)):
            out.append("no relevant source cited")
    text = normalize(r.text) if r.outcome in ANSWERED_OUTCOMES else ""
    for s in e.must_contain:
        if normalize(s) not in text:
            out.append(f"answer lacks {s!r}")
    bad = sorted({d for d in (*r.retrieved_doc_ids, *r.cited_doc_ids) if d in set(e.forbidden)})
    if bad:
        out.append(f"forbidden doc(s) retrieved or cited: {', '.join(bad)}")
    invalid = [i for i in r.cited_ids if i not in set(r.source_ids)]
    if invalid:
        out.append(f"cited id(s) not among the sources given: {', '.join(invalid)}")
    return tuple(out)


def _doc_ids(store, chunk_ids: Sequence[str], tenant: str) -> tuple[str, ...]:
    if not chunk_ids:
        return ()
    chunks = store.get_chunks(list(chunk_ids), tenant)
    return tuple(chunks[c].doc_id if c in chunks else c for c in chunk_ids)


def run_case(assistant, case: GoldenCase) -> GoldenResult:
    """Ask one case through the assistant's pipeline and judge it."""
    from vouched.answer import Answer

    prev = (case.previous.question, case.previous.answer) if case.previous else None
    lang = case.language
    try:
        events = list(assistant.stream(case.question, prev, tenant=case.tenant, as_of=case.as_of))
        ans = Answer.from_events(events)
    except Exception as exc:  # a case that raises is a result (exit 1), not the end of the run
        r = GoldenResult(case=case, outcome="error", lang=lang, error=f"{type(exc).__name__}: {exc}")
        return replace(r, failures=judge(case, r))
    trace = ans.trace
    tdict = asdict(trace) if trace is not None else {}
    retrieved_ids = [x["id"] for x in tdict.get("retrieved", [])]
    tenant = case.tenant or assistant.config.corpus.tenant
    retrieved_docs = _doc_ids(assistant.engine.store, retrieved_ids, tenant) if retrieved_ids else ()
    ran_retrieval = bool(tdict.get("evidence_run"))
    r = GoldenResult(
        case=case, outcome=ans.outcome, layer=ans.layer, category=ans.category, route=tdict.get("route", ""),
        text=" ".join(ans.sentences), sentences=ans.sentences, retrieved_doc_ids=retrieved_docs,
        cited_ids=tuple(s.id for s in ans.sources), cited_doc_ids=tuple(s.doc_id for s in ans.sources),
        source_ids=tuple(tdict.get("source_ids", ())),
        evidence=tdict.get("evidence") if ran_retrieval else None,
        threshold=tdict.get("threshold") if ran_retrieval else None, lang=lang, trace=tdict,
    )
    failures = judge(case, r)
    stage = _failure_class(r, dict(zip(retrieved_ids, retrieved_docs))) if failures else None
    return replace(r, failures=failures, failure_class=stage)


def _failure_class(r: GoldenResult, doc_of: dict[str, str]) -> str | None:
    try:
        from vouched.trace.failure import classify_failure
    except ImportError:  # the trace package is optional here
        return None
    e = r.case.expect
    return classify_failure(e.kind, r.trace, relevant=e.relevant, must_contain=e.must_contain, cited=r.cited_ids,
                            text=r.text, doc_of=doc_of)


def run_golden(assistant, cases: Sequence[GoldenCase], progress: bool = True) -> GoldenReport:
    """Run every case in order (deterministic for a deterministic assistant)."""
    t0 = time.perf_counter()
    results: list[GoldenResult] = []
    if progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("golden"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      TextColumn("{task.description}"), console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("", total=len(cases))
            for c in cases:
                bar.update(task, description=c.id)
                results.append(run_case(assistant, c))
                bar.advance(task)
    else:
        results = [run_case(assistant, c) for c in cases]
    cfg = assistant.config
    meta = {
        "threshold": cfg.threshold.value, "threshold_embedding_model": cfg.threshold.embedding_model,
        "embedding_model": cfg.embedding.model, "provider": cfg.answer.provider, "top_k": cfg.retrieval.top_k,
        "languages": list(cfg.languages), "seconds": round(time.perf_counter() - t0, 2), "date": date.today().isoformat(),
    }
    return GoldenReport(tuple(results), meta)


# -- the figures (pure) --------------------------------------------------------------------------
def is_pattern_refusal(r: GoldenResult) -> bool:
    return r.outcome == "refused" and r.layer == "L1"


def is_no_evidence_refusal(r: GoldenResult) -> bool:
    return r.outcome == "refused" and (r.layer == "L2" or r.category in ("no_answer", "unsupported_language"))


def pattern_correct(r: GoldenResult) -> bool:
    e = r.case.expect
    return e.kind == "refuse_pattern" and is_pattern_refusal(r) and (e.category is None or r.category == e.category)


def hit_at(r: GoldenResult, k: int = RECALL_K) -> bool:
    return bool(set(r.retrieved_doc_ids[:k]) & set(r.case.expect.relevant))


def _ratio(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


def _refusal_set(results: Sequence[GoldenResult], kind: str, refused, correct, detail: bool) -> dict:
    expected = [r for r in results if r.case.expect.kind == kind]
    fired = [r for r in results if refused(r)]
    good = [r for r in fired if correct(r)]
    out = {"expected": len(expected), "refused": len(fired), "correct": len(good),
           "precision": _ratio(len(good), len(fired)), "recall": _ratio(len(good), len(expected))}
    if detail:
        out["missed"] = [r.case.id for r in expected if not correct(r)]
        out["unexpected"] = [r.case.id for r in fired if not correct(r)]
    return out


def is_false_refusal(r: GoldenResult) -> bool:
    """An answerable case refused (L1, L2, NO_ANSWER), or an answer case turned by the
    threshold into the records summary (route ``records_summary``): the reader asked
    something the sources answer and did not get it."""
    if r.case.expect.kind not in ("answer", "records"):
        return False
    return r.outcome == "refused" or (r.case.expect.kind == "answer" and r.route == "records_summary")


def _refusal_layer(r: GoldenResult) -> str:
    if r.outcome != "refused":
        return "L2 (records summary)"
    return r.layer or ("no_answer" if r.category == "no_answer" else "model")


def figures(results: Sequence[GoldenResult], detail: bool = True) -> dict:
    """Every figure over one set of results (see the module docstring for definitions)."""
    rs = list(results)
    ne_correct = lambda r: r.case.expect.kind == "refuse_no_evidence" and is_no_evidence_refusal(r)  # noqa: E731
    answerable = [r for r in rs if r.case.expect.kind in ("answer", "records")]
    false_ref = [r for r in answerable if is_false_refusal(r)]
    by_layer: dict[str, int] = {}
    for r in false_ref:
        by_layer[_refusal_layer(r)] = by_layer.get(_refusal_layer(r), 0) + 1
    records = [r for r in rs if r.case.expect.kind == "records"]
    routed = [r for r in records if r.route == "records"]
    answers = [r for r in rs if r.case.expect.kind == "answer"]
    hits = [r for r in answers if hit_at(r)]
    should = [r for r in rs if r.case.should_refuse]
    abstained = [r for r in rs if r.outcome == "refused"]
    false_answers = [r for r in should if r.outcome in ANSWERED_OUTCOMES]
    cited = [(r.case.id, i, i in set(r.source_ids)) for r in rs for i in r.cited_ids]
    out: dict[str, Any] = {
        "cases": len(rs),
        "passed": sum(r.passed for r in rs),
        "refusal": {
            "pattern": _refusal_set(rs, "refuse_pattern", is_pattern_refusal, pattern_correct, detail),
            "no_evidence": _refusal_set(rs, "refuse_no_evidence", is_no_evidence_refusal, ne_correct, detail),
        },
        "false_refusals": {"count": len(false_ref), "of": len(answerable), "rate": _ratio(len(false_ref), len(answerable)),
                           "by_layer": dict(sorted(by_layer.items()))},
        "records_routed": {"routed": len(routed), "of": len(records), "rate": _ratio(len(routed), len(records))},
        f"recall@{RECALL_K}": _ratio(len(hits), len(answers)),
        "abstention": {"should_refuse": len(should), "refused": len(abstained),
                       "precision": _ratio(sum(r.case.should_refuse for r in abstained), len(abstained)),
                       "recall": _ratio(sum(r.outcome == "refused" for r in should), len(should)),
                       "false_answer_rate": _ratio(len(false_answers), len(should))},
        "citation_validity": _ratio(sum(ok for *_, ok in cited), len(cited)),
        "citations": {"cited": len(cited), "valid": sum(ok for *_, ok in cited)},
        "errors": sum(r.outcome == "error" for r in rs),
    }
    if detail:
        out["false_refusals"]["cases"] = [r.case.id for r in false_ref]
        out["records_routed"]["missed"] = [r.case.id for r in records if r.route != "records"]
        out[f"recall@{RECALL_K}_misses"] = [r.case.id for r in answers if not hit_at(r)]
        out["abstention"]["false_answers"] = [r.case.id for r in false_answers]
        out["citations"]["invalid"] = [f"{cid}: {i}" for cid, i, ok in cited if not ok]
        out["failed"] = [r.case.id for r in rs if not r.passed]
    return out


def _perfect(fig: dict) -> bool:
    sets = fig["refusal"].values()
    return all(v in (None, 1.0) for s in sets for v in (s["precision"], s["recall"]))


def gates(fig: dict) -> dict:
    """What the exit code depends on."""
    refusal_ok = _perfect(fig)
    cite_ok = fig["citation_validity"] in (None, 1.0)
    return {"refusal_sets_perfect": refusal_ok, "citations_valid": cite_ok, "no_errors": fig["errors"] == 0,
            "ok": refusal_ok and cite_ok and fig["errors"] == 0}


def _breakdown(results: Sequence[GoldenResult], key) -> dict[str, dict]:
    groups: dict[str, list[GoldenResult]] = {}
    for r in results:
        groups.setdefault(key(r), []).append(r)
    return {k: figures(v, detail=False) for k, v in sorted(groups.items())}


def summarize(results: Sequence[GoldenResult]) -> dict:
    """The JSON summary: overall figures, `gates`, and the same figures by language, by
    category and for the follow-up cases."""
    out = figures(results)
    out["gates"] = gates(out)
    # L2 coverage: the cases it refused, each with the anchors found in no passage
    out["coverage"] = {r.case.id: (r.trace or {}).get("anchors_missing") or []
                       for r in results if r.layer == "L2" and r.category == "uncovered"}
    out["by_language"] = _breakdown(results, lambda r: r.lang)
    out["by_category"] = _breakdown(results, lambda r: r.case.group)
    follow = [r for r in results if r.case.previous is not None]
    out["followups"] = figures(follow, detail=False)
    return out


# -- the command ---------------------------------------------------------------------------------
def _find_config(path: Path, config: Path | None) -> Path | None:
    """--config, else $VOUCHED_CONFIG, else vouched.toml beside the golden file, else ./vouched.toml."""
    import os

    if config:
        return Path(config)
    if os.environ.get("VOUCHED_CONFIG"):
        return Path(os.environ["VOUCHED_CONFIG"])
    for cand in (Path(path).resolve().parent / "vouched.toml", Path("vouched.toml")):
        if cand.exists():
            return cand
    return None


def build_assistant(config_path: Path | None):
    """An extractive Assistant for the config (no external model call), or GoldenInputError."""
    from vouched.answer import Assistant
    from vouched.config import load_config
    from vouched.errors import ConfigError

    try:
        cfg = load_config(config_path)
    except ConfigError as exc:
        raise GoldenInputError(str(exc)) from None
    notes = []
    if cfg.answer.provider != "extractive":
        notes.append(f"answer.provider is {cfg.answer.provider!r}: the golden run uses the extractive generator")
        cfg = cfg.model_copy(update={"answer": cfg.answer.model_copy(update={"provider": "extractive"})})
    if cfg.missing_store():
        raise GoldenInputError(f"no store at {cfg.store_path}: run `vouched ingest -c {config_path or 'vouched.toml'}` first")
    from vouched.answer.build import build

    a = Assistant(cfg, parts=build(cfg))
    version = a.engine.store.current_version()
    if version is None:
        raise GoldenInputError(f"the store {cfg.store_label} has no corpus version: run `vouched ingest` first")
    notes.extend(cfg.check_calibration(version.embedding_model, version.hash))
    return a, version, notes


def golden_command(path: Path, config: Path | None = None, as_json: bool = False, report_dir: Path | None = None,
                   *, progress: bool = True, assistant=None) -> int:
    """`vouched eval`: run a golden set, print figures, optionally write the HTML report.

    Returns 0 when every gate passes, 1 when one fails; a file, config or store that cannot be
    used raises (GoldenInputError, ConfigError: exit 2 through vouched.errors.EXIT_CODES).
    """
    cases = load_golden(path)
    notes: list[str] = []
    version = None
    if assistant is None:
        assistant, version, notes = build_assistant(_find_config(Path(path), config))
    report = run_golden(assistant, cases, progress=progress)
    report.meta.update({"golden": str(path), "cases": len(cases), "notes": notes,
                        "corpus_version": version.hash if version else None})
    summary = report.summary()
    if report_dir is not None:
        from vouched.eval.report import write_html_report

        written = write_html_report(report, summary, Path(report_dir))
        print(f"report: {written}", file=sys.stderr)
    if as_json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        from vouched.eval.report import print_summary

        print_summary(summary, report)
    return GOLDEN_EXIT_OK if summary["gates"]["ok"] else GOLDEN_EXIT_FAIL
