"""Context assembly: from retrieved passages to the sources a prompt numbers, in a helpful order.

Runs after retrieval (and L2) and before the prompt's sources are numbered. Pure: the
passages, the date and the token cost come in; nothing is read or stored.

What it does, in order:

1. **De-duplicate and merge.** A chunk id seen twice is kept once (best scores). Chunks of
   the same document, version and section whose positions follow each other are merged
   into one source: its text is the concatenation of the chunks' own texts (a chunk's
   ``overlap`` — the previous chunk's tail — is never repeated; a chunk whose text itself
   starts with its overlap has it cut), its id is the first chunk's id, ``ids`` lists every
   chunk merged, and its scores are the best of its chunks.
2. **Select by relevance.** Sources are taken best-ranked first (rank = position in the
   input list, i.e. retrieval order) while they fit ``max_sources`` and the token budget.
   A merged source that does not fit is split back into its chunks, which compete at their
   own ranks. Selection happens *before* reordering, so the budget never drops the
   second-best source just because the layout puts it last.
3. **Flag conflicting current versions.** Two selected *current* sources (not a draft, valid
   on ``as_of``, not superseded by a document among the passages) conflict when they are
   the same document in different versions, or different documents that supersede the same
   one, their section is the same, both state values (numbers, dates, URLs, e-mails —
   ``vouched.guard.values``) and the value sets differ. Each such pair is listed in
   ``conflicts`` with the values only one side has, and every source on either side gets the
   flag ``conflict:<id of the other side's best source>``.
4. **Lay out** ("lost in the middle", Liu et al. 2023, TACL: models use what is at the start
   and the end of a long context best, the middle worst). Sources are grouped by document
   (``doc_id``); each group is contiguous. The exact rule:

   * S1 = the most relevant selected source. Its group comes first, S1 first within it.
   * S2 = the most relevant selected source of *another* document. Its group comes last,
     S2 last within it. When every source is from one document, S2 is the second most
     relevant source and is placed last in that single group.
   * Groups in between are ordered by authority (highest ``Chunk.authority`` first), then by
     date (newest ``updated_at`` / ``effective_from`` of a current source first), then by
     their best rank, then by ``doc_id``.
   * Within a group (apart from S1 and S2): current sources first, then newest date first
     (so the newest current version of a document leads), then reading order (position),
     then rank.

The result is deterministic: every sort key ends with a unique rank.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Callable, Iterable, Literal, Sequence

from vouched.guard.prompt import PromptSource
from vouched.types import Chunk, Passage

__all__ = ["AssembledContext", "Conflict", "ContextSource", "assemble_context", "prompt_cost"]

MERGE_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class ContextSource:
    """One source for the prompt: a chunk, or a run of adjacent chunks merged into one.

    ``chunk`` is the first chunk (reading order) with ``text`` replaced by the merged text;
    ``rank`` is the best input position of its chunks (0 = most relevant).
    """

    chunk: Chunk
    ids: tuple[str, ...]
    rank: int
    dense: float
    keyword: float
    evidence: float
    fused: float
    last_position: int
    date: date | None = None
    flags: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.chunk.id

    @property
    def doc_id(self) -> str:
        return self.chunk.doc_id

    @property
    def text(self) -> str:
        return self.chunk.text

    def prompt_source(self, number: int) -> PromptSource:
        """As the pipeline's `passage_source` builds it, with this source's flags."""
        c = self.chunk
        return PromptSource(
            number=number, id=c.id, doc_id=c.doc_id, title=c.title, section=c.section,
            date=c.updated_at.isoformat() if c.updated_at else None, url=c.url, text=c.text, kind="passage",
            flags=self.flags,
        )

    def passage(self) -> Passage:
        """This source as one retrieved passage (merged text, best scores, own flags)."""
        return Passage(replace(self.chunk, flags=self.flags), self.rank, self.dense, self.keyword, self.evidence,
                       self.fused)


@dataclass(frozen=True)
class Conflict:
    """Two current sources that state different values for the same section."""

    a: str  # id of the better-ranked side's best source
    b: str
    doc_a: str
    doc_b: str
    section: str
    reason: Literal["version", "supersedes"]
    only_a: tuple[str, ...]  # values (as written) only side a states
    only_b: tuple[str, ...]


@dataclass(frozen=True)
class AssembledContext:
    sources: tuple[ContextSource, ...]  # final prompt order
    conflicts: tuple[Conflict, ...] = ()
    dropped: tuple[str, ...] = ()  # chunk ids left out (max_sources or token budget)
    tokens: int | None = None  # prompt cost of the sources, when a budget was given

    def prompt_sources(self) -> list[PromptSource]:
        """Numbered 1..n in the assembled order."""
        return [s.prompt_source(i) for i, s in enumerate(self.sources, 1)]

    def passages(self) -> list[Passage]:
        """The sources as passages in relevance order: assembling them again gives this context."""
        return [s.passage() for s in sorted(self.sources, key=lambda s: s.rank)]


def prompt_cost(source: PromptSource) -> int:
    """What `fit_sources` charges a source: its rendered tokens plus two for the separator."""
    from vouched.guard.prompt import count_tokens, render_source

    return count_tokens(render_source(source)) + 2


def assemble_context(
    passages: Sequence[Passage],
    *,
    max_sources: int,
    budget_tokens: int | None = None,
    as_of: date | None = None,
    cost: Callable[[PromptSource], int] | None = None,
) -> AssembledContext:
    """Merge, select, flag and order `passages` (given best first) into prompt sources.

    `budget_tokens`: None → no token limit; otherwise sources are charged `cost` (default
    `prompt_cost`, the same charge as `fit_sources`). `as_of`: the date validity is judged
    on; None → effective dates are not checked (retrieval filtered them already).
    """
    if max_sources < 1:
        raise ValueError(f"max_sources must be at least 1, got {max_sources}")
    if not passages:
        return AssembledContext(sources=(), tokens=0 if budget_tokens is not None else None)
    items = _dedupe(passages)
    charge = cost or prompt_cost
    chosen, dropped, tokens = _select(_merge(items), items, max_sources, budget_tokens, charge)
    superseded = _superseded([p.chunk for p in passages], as_of)
    conflicts, flags = _conflicts(chosen, superseded, as_of)
    chosen = [replace(s, flags=_with_flags(s.flags, flags.get(s.id, ()))) for s in chosen]
    if budget_tokens is not None and flags:
        # Flags may be rendered: re-check the charge and re-run without the worst source.
        tokens = sum(charge(s.prompt_source(1)) for s in chosen)
        if tokens > budget_tokens and len(chosen) > 1:
            worst = max(chosen, key=lambda s: s.rank)
            keep = [p for p in passages if p.chunk.id not in worst.ids]
            again = assemble_context(keep, max_sources=max_sources, budget_tokens=budget_tokens, as_of=as_of, cost=cost)
            return replace(again, dropped=(*again.dropped, *worst.ids))
    return AssembledContext(
        sources=tuple(_layout(chosen, superseded, as_of)), conflicts=tuple(conflicts), dropped=tuple(dropped), tokens=tokens
    )


# -- 1. de-duplicate and merge --------------------------------------------------------------


def _dedupe(passages: Sequence[Passage]) -> list[Passage]:
    """Each chunk once, ranked by its first appearance, with the best of its scores."""
    seen: dict[str, Passage] = {}
    for i, p in enumerate(passages):
        old = seen.get(p.chunk.id)
        if old is None:
            seen[p.chunk.id] = replace(p, rank=i)
        else:
            seen[p.chunk.id] = replace(old, dense=max(old.dense, p.dense), keyword=max(old.keyword, p.keyword),
                                       evidence=max(old.evidence, p.evidence), fused=max(old.fused, p.fused))
    return list(seen.values())


def _merge_key(c: Chunk) -> tuple[str, str, str, str]:
    return (c.tenant, c.doc_id, c.version, c.section)


def _merge(items: list[Passage]) -> list[ContextSource]:
    runs: dict[tuple[str, str, str, str], list[list[Passage]]] = {}
    for it in sorted(items, key=lambda s: (_merge_key(s.chunk), s.chunk.position, s.rank)):
        groups = runs.setdefault(_merge_key(it.chunk), [])
        if groups and it.chunk.position == groups[-1][-1].chunk.position + 1:
            groups[-1].append(it)
        else:
            groups.append([it])
    out = [_source(run) for groups in runs.values() for run in groups]
    return sorted(out, key=lambda s: s.rank)


def _own_text(c: Chunk) -> str:
    """A chunk's own words: its overlap cut when a chunker put it at the start of the text."""
    if c.overlap and c.text.startswith(c.overlap) and len(c.text) > len(c.overlap):
        return c.text[len(c.overlap):].lstrip()
    return c.text


def _source(run: list[Passage]) -> ContextSource:
    first = run[0].chunk
    text = first.text if len(run) == 1 else MERGE_SEPARATOR.join([first.text, *(_own_text(s.chunk) for s in run[1:])])
    # Chunks of one document version normally share their dates; if not, the merged source
    # carries the newest, so it is dated (and ordered) by its most recent part.
    updated = max((s.chunk.updated_at for s in run if s.chunk.updated_at), default=None)
    effective = max((s.chunk.effective_from for s in run if s.chunk.effective_from), default=None)
    merged = replace(first, text=text, updated_at=updated, effective_from=effective)
    dates = [d for d in (updated, effective) if d is not None]
    return ContextSource(
        chunk=merged,
        ids=tuple(s.chunk.id for s in run),
        rank=min(s.rank for s in run),
        dense=max(s.dense for s in run),
        keyword=max(s.keyword for s in run),
        evidence=max(s.evidence for s in run),
        fused=max(s.fused for s in run),
        last_position=run[-1].chunk.position,
        date=max(dates) if dates else None,
        flags=tuple(dict.fromkeys(f for s in run for f in s.chunk.flags)),
    )



# -- 2. select by relevance -----------------------------------------------------------------


def _select(candidates: list[ContextSource], items: list[Passage], max_sources: int, budget: int | None,
            charge: Callable[[PromptSource], int]) -> tuple[list[ContextSource], list[str], int | None]:
    """Best-ranked first while they fit; a merged source that does not fit is split back."""
    by_id = {it.chunk.id: it for it in items}
    queue = list(candidates)
    chosen: list[ContextSource] = []
    dropped: list[str] = []
    used = 0
    while queue:
        s = queue.pop(0)
        if len(chosen) >= max_sources:
            dropped.extend(s.ids)
            continue
        c = charge(s.prompt_source(1)) if budget is not None else 0
        if budget is None or used + c <= budget:
            chosen.append(s)
            used += c
        elif len(s.ids) > 1:
            queue = sorted(queue + [_source([by_id[i]]) for i in s.ids], key=lambda x: x.rank)
        else:
            dropped.extend(s.ids)
    return chosen, dropped, (used if budget is not None else None)


# -- 3. conflicting current versions --------------------------------------------------------


def _superseded(chunks: Sequence[Chunk], as_of: date | None) -> frozenset[tuple[str, str]]:
    """(tenant, doc_id) of documents a published document among the passages replaces on `as_of`."""
    out = set()
    for c in chunks:
        if c.supersedes and not c.draft and c.supersedes != c.doc_id:
            if as_of is None or c.effective_from is None or c.effective_from <= as_of:
                out.add((c.tenant, c.supersedes))
    return frozenset(out)


def _current(s: ContextSource, superseded: frozenset[tuple[str, str]], as_of: date | None) -> bool:
    c = s.chunk
    if c.draft or (c.tenant, c.doc_id) in superseded:
        return False
    if as_of is None:
        return True
    return (c.effective_from is None or c.effective_from <= as_of) and (c.effective_to is None or as_of <= c.effective_to)


def _values(sources: Sequence[ContextSource]) -> tuple[frozenset[str], dict[str, str]]:
    """Canonical values of the sources' texts, and the first way each was written."""
    from vouched.guard.values import source_values, value_spans

    found: set[str] = set()
    raw: dict[str, str] = {}
    for s in sources:
        found |= source_values(s.text)
        for _, written, canonical in value_spans(s.text):
            raw.setdefault(canonical, written)
    return frozenset(found), raw


def _conflict_reason(a: Chunk, b: Chunk) -> Literal["version", "supersedes"] | None:
    if a.tenant != b.tenant or a.section != b.section:
        return None
    if a.doc_id == b.doc_id:
        return "version" if a.version != b.version else None
    if a.supersedes and a.supersedes == b.supersedes:
        return "supersedes"
    return None


def _conflicts(chosen: Sequence[ContextSource], superseded: frozenset[tuple[str, str]],
               as_of: date | None) -> tuple[list[Conflict], dict[str, list[str]]]:
    sides: dict[tuple[str, str, str, str], list[ContextSource]] = {}
    for s in sorted(chosen, key=lambda s: s.rank):
        if _current(s, superseded, as_of):
            sides.setdefault(_merge_key(s.chunk), []).append(s)
    keys = list(sides)
    conflicts: list[Conflict] = []
    flags: dict[str, list[str]] = {}
    for i, ka in enumerate(keys):
        for kb in keys[i + 1:]:
            a, b = sides[ka], sides[kb]
            reason = _conflict_reason(a[0].chunk, b[0].chunk)
            if reason is None:
                continue
            va, raw_a = _values(a)
            vb, raw_b = _values(b)
            if not va or not vb or va == vb:
                continue
            conflicts.append(Conflict(
                a=a[0].id, b=b[0].id, doc_a=a[0].doc_id, doc_b=b[0].doc_id, section=a[0].chunk.section, reason=reason,
                only_a=tuple(raw_a.get(v, v) for v in sorted(va - vb)),
                only_b=tuple(raw_b.get(v, v) for v in sorted(vb - va)),
            ))
            for s in a:
                flags.setdefault(s.id, []).append(f"conflict:{b[0].id}")
            for s in b:
                flags.setdefault(s.id, []).append(f"conflict:{a[0].id}")
    return conflicts, flags


def _with_flags(have: tuple[str, ...], add: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*have, *add)))


# -- 4. layout --------------------------------------------------------------------------------


def _newest_first(d: date | None) -> tuple[bool, int]:
    return (d is None, -d.toordinal() if d else 0)


def _layout(chosen: Sequence[ContextSource], superseded: frozenset[tuple[str, str]],
            as_of: date | None) -> list[ContextSource]:
    """The order documented in the module docstring."""
    if len(chosen) <= 1:
        return list(chosen)

    def within(s: ContextSource) -> tuple:
        return (not _current(s, superseded, as_of), *_newest_first(s.date), s.chunk.position, s.rank)

    by_rank = sorted(chosen, key=lambda s: s.rank)
    s1 = by_rank[0]
    groups: dict[str, list[ContextSource]] = {}
    for s in by_rank:
        groups.setdefault(s.doc_id, []).append(s)
    others = [s for s in by_rank if s.doc_id != s1.doc_id]
    if not others:
        s2 = by_rank[1]
        return [s1, *sorted((s for s in by_rank[2:]), key=within), s2]
    s2 = others[0]
    first = [s1, *sorted(groups.pop(s1.doc_id)[1:], key=within)]
    last = [*sorted((s for s in groups.pop(s2.doc_id) if s is not s2), key=within), s2]

    def group_key(doc_id: str) -> tuple:
        members = groups[doc_id]
        current = [s.date for s in members if _current(s, superseded, as_of) and s.date]
        return (-max(s.chunk.authority for s in members), *_newest_first(max(current) if current else None),
                min(s.rank for s in members), doc_id)

    middle = [s for d in sorted(groups, key=group_key) for s in sorted(groups[d], key=within)]
    return [*first, *middle, *last]
