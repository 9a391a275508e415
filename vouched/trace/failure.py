"""Which stage of the path failed a question whose expected outcome is known (pure).

The classes (DESIGN.md, "Traces") name the first stage whose output was already wrong:

    corpus        the answer is not in the documents at all
    ingestion     the document exists but did not make it into the store
    chunking      the answer is in the document but split across chunks, so no passage holds it
    retrieval     the relevant document is not among the retrieved passages, or its bounded
                  score fell below the threshold (L2 refused an answerable question), or an
                  unanswerable question scored above the threshold
    ranking       the relevant document was retrieved, but not in the top ``top_n`` (5)
    context       it was retrieved but not given to the model (the source budget cut it,
                  or the records route did not select it)
    generation    it was given, and the answer still failed: held by the gate, NO_ANSWER,
                  cut by the length limit, must-contain text missing, relevant source not cited
    presentation  the right answer was generated but shown wrongly: a cited id not among
                  the sources given, text lost between the checked and the released sentence,
                  or a records summary shown where the fixed refusal was expected

Rules, first match wins (``expected`` is a golden ``expect`` kind):

    any        outcome "error" or unknown kind                      → None
    refuse_pattern                                                  → None: L1 is a guard,
               not a stage; ``golden.judge`` reports pattern misses
    refuse_no_evidence
               refused by L2, or the model's NO_ANSWER              → None (correct)
               refused by L1                                        → None (a guard, see above)
               route records_summary (L2 did stop it)               → presentation
               anything else (evidence ≥ threshold)                 → retrieval
    answer / records
               refused by L1                                        → None (a guard)
    records    route is not records                                 → None (routing is a guard pattern)
               NO_ANSWER or no source given                         → corpus
               a relevant record not among the sources given        → context
               held / truncated / relevant not cited                → generation
               a cited id not given                                 → presentation
    answer     relevant docs known, none in ``corpus_docs``         → ingestion if one is in
                                                                      ``failed_docs``, else corpus
               refused by L2 (or routed to a records summary)       → retrieval
               no relevant doc among the retrieved passages         → retrieval
               relevant doc retrieved, none in the top ``top_n``    → ranking
               no relevant doc among the sources given              → context
               a cited id not given                                 → presentation
               NO_ANSWER, held, truncated, or a must-contain string
               missing: if ``relevant_chunks`` show the string in
               the relevant document but in none of its chunks      → chunking
               else if the string is in the checked sentences but
               not in the released ``text``                         → presentation
               else                                                 → generation
               relevant docs known, none cited (when ``cited`` given) → generation
    otherwise                                                       → None

A trace is a ``TraceRecord`` or the dict ``TraceStore.get`` returns. Doc ids of retrieved
passages come from their ``doc_id`` field when the trace has one, else from ``doc_of`` (a
mapping or function, chunk id → doc id), else from the chunk id itself (``doc#position``).
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from typing import Any, Callable, Collection, Mapping, Sequence

FAILURE_CLASSES = ("corpus", "ingestion", "chunking", "retrieval", "ranking", "context", "generation", "presentation")
ANSWERED = frozenset({"answered", "records", "held", "truncated"})

__all__ = ["FAILURE_CLASSES", "classify_failure", "doc_id_of"]


def doc_id_of(chunk_id: str) -> str:
    """A chunk id is ``<doc id>#<position>``; a record source is ``record:<id>``."""
    if chunk_id.startswith("record:"):
        return chunk_id
    return chunk_id.rsplit("#", 1)[0] if "#" in chunk_id else chunk_id


def _as_dict(record: Any) -> dict:
    if is_dataclass(record) and not isinstance(record, type):
        return asdict(record)
    return dict(record)


def _normalize(s: str) -> str:
    from vouched.text import normalize

    return normalize(s)


def classify_failure(
    expected: str,
    record: Any,
    *,
    relevant: Collection[str] = (),
    must_contain: Sequence[str] = (),
    cited: Sequence[str] | None = None,
    text: str | None = None,
    doc_of: Mapping[str, str] | Callable[[str], str] | None = None,
    corpus_docs: Collection[str] | None = None,
    failed_docs: Collection[str] = (),
    relevant_chunks: Mapping[str, str] | None = None,
    top_n: int = 5,
) -> str | None:
    """The failure class of one run of a question whose expected outcome is known, or None
    when nothing failed or the failure is not a stage's (see the module docstring).

    ``relevant``: doc ids (or record ids) that answer it; ``must_contain``: strings the
    answer must include; ``cited``: ids of the sources the answer cited (``done.sources``);
    ``text``: the released answer text; ``corpus_docs``: doc ids in the store's current
    version; ``failed_docs``: doc ids whose files failed to ingest; ``relevant_chunks``:
    chunk id → text for the chunks of the relevant documents.
    """
    t = _as_dict(record)
    outcome, layer, category, route = t.get("outcome") or "", t.get("layer"), t.get("category"), t.get("route") or ""
    if outcome == "error" or expected not in ("refuse_pattern", "refuse_no_evidence", "answer", "records"):
        return None
    if expected == "refuse_pattern" or (outcome == "refused" and layer == "L1"):
        return None
    no_answer = outcome == "refused" and category == "no_answer"
    if expected == "refuse_no_evidence":
        if (outcome == "refused" and layer == "L2") or no_answer:
            return None
        return "presentation" if route == "records_summary" else "retrieval"
    source_ids = list(t.get("source_ids") or [])
    if expected == "records":
        return _records(t, route, outcome, no_answer, set(relevant), source_ids, cited)
    return _answer(t, outcome, layer, route, no_answer, set(relevant), must_contain, source_ids, cited, text,
                   _doc_fn(doc_of), corpus_docs, failed_docs, relevant_chunks, top_n)


def _doc_fn(doc_of) -> Callable[[str], str]:
    if doc_of is None:
        return doc_id_of
    if callable(doc_of):
        return doc_of
    return lambda cid: doc_of.get(cid) or doc_id_of(cid)


def _records(t: dict, route: str, outcome: str, no_answer: bool, relevant: set[str], source_ids: list[str],
             cited: Sequence[str] | None) -> str | None:
    if route != "records":
        return None
    if no_answer or not source_ids:
        return "corpus"
    given = {s.removeprefix("record:") for s in source_ids} | set(source_ids)
    if relevant and not relevant & given:
        return "context"
    if outcome in ("held", "truncated"):
        return "generation"
    if cited is not None:
        if any(c not in set(source_ids) for c in cited):
            return "presentation"
        if relevant and not relevant & ({c.removeprefix("record:") for c in cited} | set(cited)):
            return "generation"
    return None


def _answer(t, outcome, layer, route, no_answer, relevant, must_contain, source_ids, cited, text, doc, corpus_docs,
            failed_docs, relevant_chunks, top_n) -> str | None:
    if relevant and corpus_docs is not None and not relevant & set(corpus_docs):
        return "ingestion" if relevant & set(failed_docs) else "corpus"
    if (outcome == "refused" and layer == "L2") or route == "records_summary":
        return "retrieval"
    retrieved = sorted(t.get("retrieved") or [], key=lambda r: r.get("rank") or 0)
    known = {r["id"]: r["doc_id"] for r in retrieved if r.get("doc_id")}
    doc = (lambda cid, _d=doc: known.get(cid) or _d(cid))
    ranked_docs = [doc(r["id"]) for r in retrieved]
    if relevant:
        if not relevant & set(ranked_docs):
            return "retrieval"
        if not relevant & set(ranked_docs[:top_n]):
            return "ranking"
        if not relevant & {doc(s) for s in source_ids}:
            return "context"
    if cited is not None and any(c not in set(source_ids) for c in cited):
        return "presentation"
    generated = " ".join(s.get("text", "") for s in t.get("sentences") or [] if s.get("ok"))
    released = text if text is not None else generated
    missing = [s for s in must_contain if _normalize(s) not in _normalize(released)]
    if no_answer or outcome in ("held", "truncated") or missing:
        if relevant_chunks and _split_across_chunks(missing or must_contain, relevant_chunks):
            return "chunking"
        if missing and text is not None and all(_normalize(s) in _normalize(generated) for s in missing):
            return "presentation"
        return "generation"
    if relevant and cited is not None and not relevant & {doc(c) for c in cited}:
        return "generation"
    return None


def _split_across_chunks(strings: Sequence[str], chunks: Mapping[str, str]) -> bool:
    """Some string is in the joined text of the relevant chunks but in no single chunk."""
    texts = [_normalize(c) for c in chunks.values()]
    whole = _normalize(" ".join(chunks.values()))
    for s in strings:
        n = _normalize(s)
        if n and n in whole and not any(n in c for c in texts):
            return True
    return False
