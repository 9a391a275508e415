"""The shared Store test suite. Every backend's tests subclass `StoreSuite` and provide a
`make_store` fixture returning a factory `() -> Store` over one fresh database."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from vouched.embed import HashingEmbedder
from vouched.errors import StoreError
from vouched.types import Chunk, Record, SearchFilters

EMB = HashingEmbedder(dim=64)


def ck(cid, text, **kw) -> Chunk:
    kw.setdefault("doc_id", cid.split("#")[0])
    return Chunk(id=cid, text=text, **kw)


def write(store, chunks, records=()):
    vecs = EMB.embed_passages([c.embed_text for c in chunks])
    with store.new_version(embedding_model=EMB.model_id, dim=EMB.dim) as w:
        w.add(chunks, vecs)
        w.add_records(list(records))
    return w.version


BASE = [
    ck("alpha#0", "The lighthouse keeper repaired the lantern in winter.", title="Alpha"),
    ck("beta#0", "Sourdough bread needs flour, water, salt and a patient baker.", title="Beta"),
    ck("gamma#0", "The lantern of the lighthouse was repaired by the keeper.", title="Gamma", lang="en"),
    ck("delta#0", "El faro tiene una linterna nueva desde el invierno.", title="Delta", lang="es"),
    ck("other#0", "The lighthouse keeper of tenant two repaired the lantern.", title="Other", tenant="two"),
    ck("draft#0", "Draft: the lighthouse keeper will repaint the lantern.", title="Draft", draft=True),
    ck("old#0", "Policy 2023: the lighthouse lantern is checked monthly by the keeper.", title="Old",
       effective_to=date(2023, 12, 31)),
    ck("new#0", "Policy 2024: the lighthouse lantern is checked weekly by the keeper.", title="New",
       effective_from=date(2024, 1, 1), supersedes="older"),
    ck("older#0", "Superseded policy: the lighthouse lantern is checked yearly by the keeper.", title="Older"),
]
TODAY = SearchFilters(as_of=date(2025, 6, 1))


class StoreSuite:
    @pytest.fixture
    def store(self, make_store):
        s = make_store()
        write(s, BASE, [Record(id="r1", kind="cv", title="Keeper", start="2021"), Record(id="r2", kind="cv", title="Other", tenant="two")])
        return s

    def kw(self, store, text, f=TODAY, limit=20):
        from vouched.text import analyze

        return [i for i, _ in store.keyword_search(analyze(text, "en", unique=True), f, limit)]

    def dense(self, store, text, f=TODAY, limit=20):
        return [i for i, _ in store.dense_search(EMB.embed_queries([text])[0], f, limit)]

    def test_empty_store_has_no_version_and_search_says_how_to_fix(self, make_store):
        s = make_store()
        assert s.current_version() is None
        with pytest.raises(StoreError, match="ingest"):
            s.keyword_search(["lantern"], TODAY, 5)

    def test_version_counts_and_hash_is_content_addressed(self, store, make_store):
        v = store.current_version()
        assert (v.chunk_count, v.record_count, v.dim) == (len(BASE), 2, 64)
        other = make_store.fresh() if hasattr(make_store, "fresh") else None
        if other is not None:
            assert write(other, list(reversed(BASE)), [Record(id="r2", kind="cv", title="Other", tenant="two"), Record(id="r1", kind="cv", title="Keeper", start="2021")]).hash == v.hash

    def test_keyword_whole_words_and_tenant(self, store):
        got = self.kw(store, "lighthouse lantern")
        assert "alpha#0" in got and "gamma#0" in got
        assert "other#0" not in got and "beta#0" not in got
        assert self.kw(store, "lighthouse lantern", SearchFilters(tenant="two", as_of=date(2025, 6, 1))) == ["other#0"]
        assert self.kw(store, "light") == []  # a word part is not a word

    def test_drafts_excluded_unless_asked(self, store):
        assert "draft#0" not in self.kw(store, "lighthouse lantern repaint")
        f = SearchFilters(as_of=date(2025, 6, 1), include_drafts=True)
        assert "draft#0" in self.kw(store, "lighthouse lantern repaint", f)
        assert "draft#0" in self.dense(store, "repaint the lantern", f)
        assert "draft#0" not in self.dense(store, "repaint the lantern")

    def test_validity_dates_and_supersedes_inside_both_searches(self, store):
        for search in (self.kw, self.dense):
            now = search(store, "lighthouse lantern checked keeper policy")
            assert "new#0" in now and "old#0" not in now and "older#0" not in now
            then = search(store, "lighthouse lantern checked keeper policy", SearchFilters(as_of=date(2023, 6, 1)))
            assert "old#0" in then and "new#0" not in then and "older#0" in then

    def test_any_time_ignores_dates_and_supersedes_but_not_tenant_or_drafts(self, store):
        q = "lighthouse lantern checked keeper policy"
        for search in (self.kw, self.dense):
            every = search(store, q, SearchFilters(as_of=date(2025, 6, 1), any_time=True))
            assert {"old#0", "new#0", "older#0"} <= set(every)
            assert "other#0" not in every and "draft#0" not in every
            with_drafts = search(store, q, SearchFilters(as_of=date(2025, 6, 1), any_time=True, include_drafts=True))
            assert "draft#0" in with_drafts and "other#0" not in with_drafts

    def test_language_filter(self, store):
        f = SearchFilters(langs=("es",), as_of=date(2025, 6, 1))
        assert self.dense(store, "faro linterna", f) == ["delta#0"]
        assert set(self.dense(store, "lantern", SearchFilters(langs=(), as_of=date(2025, 6, 1)))) == set()

    def test_dense_matches_brute_force_reference(self, store):
        q = EMB.embed_queries(["keeper repaired the lantern"])[0]
        got = store.dense_search(q, TODAY, 4)
        visible = [c for c in BASE if c.tenant == "default" and not c.draft and c.id not in ("old#0", "older#0")]
        ref = sorted(((c.id, float(EMB.embed_passages([c.embed_text])[0] @ q)) for c in visible), key=lambda x: -x[1])[:4]
        assert [i for i, _ in got] == [i for i, _ in ref]
        assert np.allclose([s for _, s in got], [s for _, s in ref], atol=1e-5)
        assert store.score_dense(q, ["alpha#0"]) == pytest.approx({"alpha#0": dict(ref).get("alpha#0", float(EMB.embed_passages([BASE[0].embed_text])[0] @ q))}, abs=1e-5)

    def test_get_chunks_roundtrip_and_tenant_isolation(self, store):
        got = store.get_chunks(["new#0", "other#0"])
        assert set(got) == {"new#0"}
        assert got["new#0"] == BASE[7]
        assert set(store.get_chunks(["other#0"], tenant="two")) == {"other#0"}
        assert "lantern" in " ".join(store.get_terms(["alpha#0"])["alpha#0"])

    def test_records_per_tenant(self, store):
        assert [r.id for r in store.records()] == ["r1"]
        assert [r.id for r in store.records("two")] == ["r2"]

    def test_new_version_switches_and_failed_write_keeps_previous(self, store):
        v1 = store.current_version()
        with pytest.raises(RuntimeError):
            with store.new_version(embedding_model=EMB.model_id, dim=EMB.dim) as w:
                w.add([ck("zeta#0", "zebra stripes")], EMB.embed_passages(["zebra stripes"]))
                raise RuntimeError("ingest failed half-way")
        assert store.current_version().id == v1.id
        assert self.kw(store, "zebra stripes") == []
        v2 = write(store, [ck("zeta#0", "zebra stripes and zebra foals")])
        assert v2.id != v1.id and store.current_version().id == v2.id
        assert self.kw(store, "zebra stripes") == ["zeta#0"]
        assert self.dense(store, "zebra") == ["zeta#0"]

    def test_duplicate_ids_rejected(self, make_store):
        s = make_store()
        with pytest.raises(StoreError, match="duplicate"):
            write(s, [ck("a#0", "one two three"), ck("a#0", "four five six")])

    # -- ingest that cannot empty a live site (issue 19) ------------------------------------
    def test_empty_version_is_refused_and_current_kept(self, store):
        from vouched.errors import ShrinkRefused

        v1 = store.current_version()
        with pytest.raises(ShrinkRefused, match="no chunks and no records"):
            with store.new_version(embedding_model=EMB.model_id, dim=EMB.dim, max_shrink=0.5) as w:
                w.add([], np.zeros((0, EMB.dim), dtype=np.float32))
        assert store.current_version().id == v1.id
        assert [v.id for v in store.versions()] == [v1.id]  # nothing half-written
        assert "alpha#0" in self.kw(store, "lighthouse lantern")

    def test_shrink_past_max_is_refused_within_allowed(self, store):
        from vouched.errors import ShrinkRefused

        v1 = store.current_version()  # 9 chunks + 2 records = 11
        keep = BASE[:5]  # 5 chunks + 0 records: 55% lost
        with pytest.raises(ShrinkRefused, match="55% less"):
            with store.new_version(embedding_model=EMB.model_id, dim=EMB.dim, max_shrink=0.5) as w:
                w.add(keep, EMB.embed_passages([c.embed_text for c in keep]))
        assert store.current_version().id == v1.id
        with store.new_version(embedding_model=EMB.model_id, dim=EMB.dim, max_shrink=0.6) as w:
            w.add(keep, EMB.embed_passages([c.embed_text for c in keep]))
        assert store.current_version().id == w.version.id != v1.id

    def test_rollback_switches_back_and_forth_atomically(self, store):
        v1 = store.current_version()
        v2 = write(store, [ck("zeta#0", "zebra stripes and zebra foals")])
        assert self.kw(store, "zebra stripes") == ["zeta#0"]
        back = store.switch_to()  # newest older than current
        assert back.id == v1.id == store.current_version().id
        assert self.kw(store, "zebra stripes") == [] and "alpha#0" in self.kw(store, "lighthouse lantern")
        assert self.dense(store, "lighthouse lantern keeper")[0] in {"alpha#0", "gamma#0", "other#0", "old#0", "new#0", "older#0"}
        assert store.switch_to(v2.id).id == v2.id
        assert self.dense(store, "zebra") == ["zeta#0"]
        with pytest.raises(StoreError, match="not in the store"):
            store.switch_to(9999)
        assert store.current_version().id == v2.id

    def test_rollback_with_nothing_older_says_so(self, store):
        with pytest.raises(StoreError, match="no older corpus version"):
            store.switch_to()

    def test_the_version_rolled_back_to_survives_the_next_ingest(self, store):
        v1 = store.current_version()
        write(store, [ck("bad#0", "a version nobody wanted")])
        store.switch_to(v1.id)
        v3 = write(store, [ck("next#0", "the next good version of the text")])
        kept = [v.id for v in store.versions()]
        assert v1.id in kept and v3.id in kept  # keep_versions=2: the one serving until now stays
        assert store.switch_to().id == v1.id

    def test_doc_freq_counts_chunks_per_term_and_follows_the_version(self, store):
        from collections import Counter

        from vouched.text import analyze

        terms = ["lighthous", "lantern", "sourdough", "faro", "2023", "zebra", ""]
        got = store.doc_freq(terms)
        # reference: every chunk of the version (all tenants, drafts and old ones too), by its analysed terms
        ref = Counter(t for c in BASE for t in set(analyze(c.embed_text, c.lang)))
        assert got.n_docs == len(BASE)
        for t in terms[:-1]:
            assert got.get(t) == ref[t], t
        assert got.get("zebra") == 0 and got.share("lantern") == ref["lantern"] / len(BASE)
        write(store, [ck("zeta#0", "zebra stripes"), ck("eta#0", "zebra foals and a lantern")])
        again = store.doc_freq(["zebra", "lantern", "lighthous"])
        assert (again.n_docs, again.get("zebra"), again.get("lantern"), again.get("lighthous")) == (2, 2, 1, 0)
