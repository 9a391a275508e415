"""Context assembly (vouched.answer.context): merge, select, flag conflicts, lay out."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.answer.context import assemble_context, prompt_cost
from vouched.guard.prompt import fit_sources, render_source
from vouched.types import Chunk, Passage


def chunk(doc: str, pos: int, text: str = "", *, version: str = "1", section: str = "S", overlap: str = "",
          **kw) -> Chunk:
    return Chunk(id=f"{doc}@{version}#{pos}", doc_id=doc, text=text or f"{doc} part {pos}.", version=version,
                 section=section, position=pos, overlap=overlap, title=doc.upper(), **kw)


def passages(*chunks: Chunk) -> list[Passage]:
    """In the given (relevance) order, with descending scores."""
    n = len(chunks)
    return [Passage(c, i + 1, dense=(n - i) / n, keyword=0.0, evidence=(n - i) / n, fused=1 / (61 + i))
            for i, c in enumerate(chunks)]


def ids(ctx) -> list[str]:
    return [s.id for s in ctx.sources]


# -- merging ------------------------------------------------------------------------------------


def test_adjacent_chunks_of_a_section_merge_without_repeating_the_overlap():
    a = chunk("d", 3, "First sentence. Second sentence.")
    b = chunk("d", 4, "Third sentence.", overlap="Second sentence.")
    ctx = assemble_context(passages(b, a), max_sources=5)
    [s] = ctx.sources
    assert s.id == "d@1#3" and s.ids == ("d@1#3", "d@1#4")
    assert s.text == "First sentence. Second sentence.\n\nThird sentence."
    assert s.text.count("Second sentence.") == 1
    assert s.rank == 0 and s.evidence == 1.0  # the best of its chunks
    assert s.last_position == 4


def test_a_chunker_that_repeats_the_overlap_in_the_text_has_it_cut():
    a = chunk("d", 0, "Uno. Dos.")
    b = chunk("d", 1, "Dos. Tres.", overlap="Dos.")
    [s] = assemble_context(passages(a, b), max_sources=5).sources
    assert s.text == "Uno. Dos.\n\nTres."


def test_not_merged_across_sections_versions_or_gaps():
    ps = passages(chunk("d", 0), chunk("d", 1, section="T"), chunk("d", 2, section="T", version="2"), chunk("d", 4))
    ctx = assemble_context(ps, max_sources=10)
    assert sorted(len(s.ids) for s in ctx.sources) == [1, 1, 1, 1]


def test_duplicate_chunk_ids_are_given_once_with_the_best_scores():
    c = chunk("d", 0)
    ps = [Passage(c, 1, 0.2, 0.1, 0.2, 0.01), Passage(chunk("e", 0), 2, 0.5, 0, 0.5, 0.02), Passage(c, 3, 0.9, 0.4, 0.9, 0.03)]
    ctx = assemble_context(ps, max_sources=5)
    assert ids(ctx) == ["d@1#0", "e@1#0"]
    s = ctx.sources[0]
    assert (s.dense, s.keyword, s.evidence, s.fused, s.rank) == (0.9, 0.4, 0.9, 0.03, 0)


# -- layout -----------------------------------------------------------------------------------------


def test_lost_in_the_middle_best_first_second_best_last_groups_by_document():
    ps = passages(chunk("a", 5), chunk("b", 1), chunk("c", 0), chunk("a", 1), chunk("b", 7), chunk("d", 2))
    ctx = assemble_context(ps, max_sources=10)
    assert ids(ctx)[0] == "a@1#5" and ids(ctx)[-1] == "b@1#1"
    docs = [s.doc_id for s in ctx.sources]
    assert docs == ["a", "a", "c", "d", "b", "b"]  # each document's sources together
    assert ids(ctx)[1] == "a@1#1"  # rest of the first document in reading order
    assert ids(ctx)[-2] == "b@1#7"


def test_middle_groups_by_authority_then_newest_date():
    ps = passages(
        chunk("top", 0), chunk("second", 0),
        chunk("old", 0, updated_at=date(2020, 1, 1)), chunk("new", 0, updated_at=date(2024, 1, 1)),
        chunk("official", 0, authority=2, updated_at=date(2019, 1, 1)),
    )
    assert ids(assemble_context(ps, max_sources=10)) == ["top@1#0", "official@1#0", "new@1#0", "old@1#0", "second@1#0"]


def test_one_document_best_first_second_last():
    ps = passages(chunk("d", 9), chunk("d", 0), chunk("d", 4), chunk("d", 2))
    assert ids(assemble_context(ps, max_sources=10)) == ["d@1#9", "d@1#2", "d@1#4", "d@1#0"]


def test_within_a_document_the_newest_current_version_leads():
    ps = passages(chunk("x", 0), chunk("p", 0, version="1", updated_at=date(2021, 1, 1), section="A"),
                  chunk("p", 1, version="2", updated_at=date(2024, 1, 1), section="B"), chunk("y", 0))
    # p is the second-best document: last group, its best source (v1) last, v2 before it.
    assert ids(assemble_context(ps, max_sources=10)) == ["x@1#0", "y@1#0", "p@2#1", "p@1#0"]


# -- selection -----------------------------------------------------------------------------------------


def test_max_sources_keeps_the_most_relevant_and_reports_the_rest():
    ps = passages(*(chunk(f"d{i}", 0) for i in range(6)))
    ctx = assemble_context(ps, max_sources=3)
    assert sorted(ids(ctx)) == ["d0@1#0", "d1@1#0", "d2@1#0"]
    assert sorted(ctx.dropped) == ["d3@1#0", "d4@1#0", "d5@1#0"]


def test_budget_is_spent_by_relevance_before_reordering():
    # Every source costs 10; a budget of 30 keeps the three best, whatever the layout.
    ps = passages(*(chunk(f"d{i}", 0) for i in range(5)))
    ctx = assemble_context(ps, max_sources=10, budget_tokens=30, cost=lambda s: 10)
    assert set(ids(ctx)) == {"d0@1#0", "d1@1#0", "d2@1#0"} and ctx.tokens == 30
    assert ids(ctx)[-1] == "d1@1#0"  # the second best is kept, and placed last


def test_a_merged_source_that_does_not_fit_is_split_back():
    ps = passages(chunk("d", 0, "x" * 50), chunk("d", 1, "y" * 50), chunk("e", 0, "z" * 20))
    ctx = assemble_context(ps, max_sources=10, budget_tokens=80, cost=lambda s: len(s.text))
    assert sorted(ids(ctx)) == ["d@1#0", "e@1#0"] and ctx.dropped == ("d@1#1",)


def test_default_cost_matches_fit_sources_so_nothing_is_dropped_after_assembly():
    ps = passages(*(chunk(f"d{i}", 0, "Texto de prueba número %d con 12.000 palabras. " % i * 20) for i in range(8)))
    ctx = assemble_context(ps, max_sources=8, budget_tokens=1500)
    prompt = ctx.prompt_sources()
    assert ctx.dropped and len(fit_sources(prompt, 1500)) == len(prompt)
    assert sum(prompt_cost(s) for s in prompt) == ctx.tokens <= 1500


# -- conflicts ------------------------------------------------------------------------------------------


def test_two_current_versions_with_different_values_are_flagged():
    v1 = chunk("fees", 0, "Der Beitrag beträgt 120 € seit 2023.", version="1")
    v2 = chunk("fees", 0, "Der Beitrag beträgt 150 € seit 2023.", version="2")
    ctx = assemble_context(passages(v2, v1), max_sources=5)
    [c] = ctx.conflicts
    assert (c.a, c.b, c.reason, c.only_a, c.only_b) == ("fees@2#0", "fees@1#0", "version", ("150",), ("120",))
    flags = {s.id: s.flags for s in ctx.sources}
    assert flags == {"fees@2#0": ("conflict:fees@1#0",), "fees@1#0": ("conflict:fees@2#0",)}
    assert "[conflict]" in render_source(ctx.prompt_sources()[0])


def test_documents_superseding_the_same_one_conflict_in_persian_digits():
    a = chunk("policy-a", 0, "مهلت بازپرداخت ۳۰ روز است.", supersedes="policy")
    b = chunk("policy-b", 0, "مهلت بازپرداخت ۱۴ روز است.", supersedes="policy")
    [c] = assemble_context(passages(a, b), max_sources=5).conflicts
    assert c.reason == "supersedes" and c.only_a == ("۳۰",) and c.only_b == ("۱۴",)


@pytest.mark.parametrize("b", [
    chunk("fees", 0, "Der Beitrag beträgt 120 € seit 2023.", version="2"),  # same values
    chunk("fees", 0, "Ohne Zahlen.", version="2"),  # no values on one side
    chunk("fees", 0, "Der Beitrag beträgt 150 €.", version="2", section="Other"),  # another section
    chunk("fees", 0, "Der Beitrag beträgt 150 €.", version="2", draft=True),  # a draft is not current
    chunk("fees", 0, "Der Beitrag beträgt 150 €.", version="2", effective_to=date(2022, 12, 31)),  # expired
    chunk("other", 0, "Der Beitrag beträgt 150 €."),  # an unrelated document
])
def test_no_conflict(b):
    a = chunk("fees", 0, "Der Beitrag beträgt 120 € seit 2023.", version="1")
    ctx = assemble_context(passages(a, b), max_sources=5, as_of=date(2024, 6, 1))
    assert ctx.conflicts == () and all(not s.flags for s in ctx.sources)


def test_a_superseded_document_does_not_conflict():
    old = chunk("old", 0, "Refunds within 30 days.", version="1", section="S")
    new_a = chunk("new", 0, "Refunds within 14 days.", supersedes="old", effective_from=date(2024, 1, 1))
    ctx = assemble_context(passages(old, new_a), max_sources=5, as_of=date(2024, 6, 1))
    assert ctx.conflicts == ()


# -- properties --------------------------------------------------------------------------------------------

WORDS = ["fee", "2023", "12,000", "tarifa", "۱۴۰۲", "价格", "प्रति", "Preis", "цена", "https://a.example/x", "3.5", "prix"]


@st.composite
def passage_lists(draw):
    n_docs = draw(st.integers(1, 4))
    chunks = []
    for d in range(n_docs):
        for version in draw(st.lists(st.sampled_from(["1", "2"]), min_size=1, max_size=2, unique=True)):
            positions = draw(st.lists(st.integers(0, 8), min_size=1, max_size=5, unique=True))
            sup = draw(st.sampled_from([None, "base"]))
            for pos in positions:
                text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5)))
                chunks.append(chunk(
                    f"d{d}", pos, text, version=version, section=draw(st.sampled_from(["A", "B"])),
                    authority=draw(st.integers(0, 2)), supersedes=sup,
                    updated_at=draw(st.sampled_from([None, date(2021, 5, 1), date(2024, 2, 1)])),
                    flags=draw(st.sampled_from([(), ("current",)])),
                ))
    order = draw(st.permutations(chunks))
    dup = draw(st.lists(st.sampled_from(order), max_size=2))
    return passages(*order, *dup)


@settings(max_examples=150, deadline=None)
@given(passage_lists())
def test_nothing_lost_and_each_chunk_in_exactly_one_source(ps):
    ctx = assemble_context(ps, max_sources=50)
    given_ids = [i for s in ctx.sources for i in s.ids]
    assert sorted(given_ids) == sorted({p.chunk.id for p in ps})
    assert ctx.dropped == ()


@settings(max_examples=150, deadline=None)
@given(passage_lists(), st.integers(1, 6))
def test_limits_account_for_every_chunk(ps, max_sources):
    ctx = assemble_context(ps, max_sources=max_sources, budget_tokens=60, cost=lambda s: len(s.text) // 4 + 2)
    given_ids = [i for s in ctx.sources for i in s.ids]
    assert sorted(given_ids + list(ctx.dropped)) == sorted({p.chunk.id for p in ps})
    assert len(ctx.sources) <= max_sources
    assert ctx.tokens == sum(len(s.text) // 4 + 2 for s in ctx.sources) <= 60


@settings(max_examples=150, deadline=None)
@given(passage_lists())
def test_top_ranked_first_second_best_other_document_last(ps):
    ctx = assemble_context(ps, max_sources=50)
    top = ps[0].chunk
    assert top.id in ctx.sources[0].ids
    others = [p.chunk for p in ps if p.chunk.doc_id != top.doc_id]
    if others:
        assert others[0].id in ctx.sources[-1].ids
    docs = [s.doc_id for s in ctx.sources]
    blocks = [d for i, d in enumerate(docs) if i == 0 or docs[i - 1] != d]
    assert len(blocks) == len(set(docs))  # every document's sources are contiguous


@settings(max_examples=150, deadline=None)
@given(passage_lists())
def test_idempotent(ps):
    ctx = assemble_context(ps, max_sources=50, as_of=date(2024, 6, 1))
    again = assemble_context(ctx.passages(), max_sources=50, as_of=date(2024, 6, 1))
    view = lambda c: [(s.id, s.text, s.flags) for s in c.sources]  # noqa: E731
    assert view(again) == view(ctx)
    assert again.conflicts == ctx.conflicts


@settings(max_examples=100, deadline=None)
@given(passage_lists())
def test_deterministic_and_merged_text_is_the_chunks_own_text(ps):
    a, b = assemble_context(ps, max_sources=50), assemble_context(list(ps), max_sources=50)
    assert a == b
    by_id = {p.chunk.id: p.chunk for p in ps}
    for s in a.sources:
        assert s.text == "\n\n".join(by_id[i].text for i in s.ids)
        positions = [by_id[i].position for i in s.ids]
        assert positions == list(range(positions[0], positions[0] + len(positions)))


@settings(max_examples=100, deadline=None)
@given(passage_lists())
def test_conflict_flags_name_sources_that_are_given(ps):
    ctx = assemble_context(ps, max_sources=50)
    given_ids = {s.id for s in ctx.sources}
    for s in ctx.sources:
        for f in s.flags:
            if f.startswith("conflict:"):
                assert f.removeprefix("conflict:") in given_ids and f != f"conflict:{s.id}"
    for c in ctx.conflicts:
        assert c.a in given_ids and c.b in given_ids and (c.only_a or c.only_b)


def test_empty_and_bad_arguments():
    assert assemble_context([], max_sources=3).sources == ()
    with pytest.raises(ValueError):
        assemble_context(passages(chunk("d", 0)), max_sources=0)
