
import numpy as np
import pytest

from vouched.config import RetrievalSettings
from vouched.embed import HashingEmbedder
from vouched.retrieve import HybridRetriever
from vouched.store import SQLiteStore
from vouched.types import Chunk, SearchFilters

EMB = HashingEmbedder(dim=128)

FA = "پروژه‌ی بازسازی متن‌های فارسی در سال ۱۴۰۰ با دقت ۹۶ درصد انجام شد و کتابخانه‌ی ملی از آن استفاده می‌کند."
DOCS = [
    Chunk(id="fa#0", doc_id="fa", lang="fa", title="OCR", text=FA),
    Chunk(id="en#0", doc_id="en", lang="en", title="Search", text="She built a multilingual search engine for Tessera Health in 2023."),
    Chunk(id="en#1", doc_id="en", lang="en", title="Search", text="Zero-result searches fell from 18% to 6% after the launch."),
    Chunk(id="es#0", doc_id="es", lang="es", title="Búsqueda", text="Construyó un buscador multilingüe para Tessera Health en 2023."),
    Chunk(id="bread#0", doc_id="bread", lang="en", title="Bread", text="Sourdough bread needs flour, water and salt."),
]


@pytest.fixture
def retriever(tmp_path):
    store = SQLiteStore(tmp_path / "h.sqlite")
    with store.new_version(embedding_model=EMB.model_id, dim=EMB.dim) as w:
        w.add(DOCS, EMB.embed_passages([c.embed_text for c in DOCS]))
    return HybridRetriever(store, EMB, RetrievalSettings(top_k=3), languages=("en", "es", "fa"))


@pytest.mark.parametrize("query", [
    "پروژه‌ی بازسازی متن‌های فارسی",  # Persian forms, ZWNJ
    "پروژه ی بازسازی متن های فارسي",  # space instead of ZWNJ, Arabic yeh
    "پروژهٔ بازسازى متن‌هاى فارسى",  # Arabic alef maksura forms
    "بازسازی متن فارسی ۱۴۰۰",  # Persian digits
    "بازسازی متن فارسی 1400",  # Latin digits
    "بازسازی متن فارسی ١٤٠٠",  # Arabic-Indic digits
    "كتابخانه ملی بازسازی",  # Arabic kaf
])
def test_persian_keyword_search_survives_spelling_variants(retriever, query):
    res = retriever.search(query, mode="keyword", query_lang="fa")
    assert res.passages and res.passages[0].chunk.id == "fa#0"
    assert res.passages[0].keyword > 0


def test_every_passage_has_three_bounded_numbers(retriever):
    res = retriever.search("multilingual search engine Tessera Health", query_lang="en")
    assert res.modes_used == ("dense", "keyword")
    assert res.passages[0].chunk.doc_id == "en"
    for p in res.passages:
        assert 0 <= p.dense <= 1 and 0 <= p.keyword <= 1
        assert p.evidence == max(p.dense, p.keyword)
    assert res.evidence == max(p.evidence for p in res.passages)
    assert [p.rank for p in res.passages] == [1, 2, 3]


def test_embedder_down_falls_back_to_keyword_and_says_so(tmp_path, retriever):
    class Down:
        model_id, dim = EMB.model_id, EMB.dim

        def embed_queries(self, texts):
            raise ConnectionError("embedding service unreachable")

        def embed_passages(self, texts, progress=None):
            raise ConnectionError("embedding service unreachable")

    r = HybridRetriever(retriever.store, Down(), RetrievalSettings(top_k=3), languages=("en", "es", "fa"))
    res = r.search("multilingual search engine Tessera", query_lang="en")
    assert res.modes_used == ("keyword",)
    assert any("embedder unavailable" in w for w in res.warnings)
    assert res.passages[0].chunk.doc_id == "en" and res.passages[0].dense == 0.0
    assert res.evidence > 0


def test_keyword_list_cannot_outvote_dense_across_languages(tmp_path):
    """A Spanish question over English passages: keyword matches only on names; order = dense order."""
    store = SQLiteStore(tmp_path / "x.sqlite")
    docs = [Chunk(id=f"d{i}#0", doc_id=f"d{i}", lang="en", text=t) for i, t in enumerate([
        "Tessera Health Tessera Health Tessera Health annual report",  # accidental name matches
        "The hospital group built a search engine in 2023.",
        "Bread and butter.",
    ])]

    class Fixed:  # a dense model that knows d1 is the answer
        model_id, dim = "fixed", 3

        def embed_queries(self, texts):
            return np.array([[0, 1, 0]], dtype=np.float32)

        def embed_passages(self, texts, progress=None):
            return np.array([[0.6, 0.8, 0], [0, 1, 0], [1, 0, 0]], dtype=np.float32)[: len(texts)]

    with store.new_version(embedding_model="fixed", dim=3) as w:
        w.add(docs, Fixed().embed_passages([d.text for d in docs]))
    r = HybridRetriever(store, Fixed(), RetrievalSettings(top_k=3))
    res = r.search("¿Qué construyó Tessera Health?", query_lang="es")
    assert [p.chunk.id for p in res.passages][:2] == ["d1#0", "d0#0"]
    dense_only = r.search("¿Qué construyó Tessera Health?", query_lang="es", mode="dense")
    assert [p.chunk.id for p in res.passages] == [p.chunk.id for p in dense_only.passages]


def test_filters_reach_retrieval(retriever):
    res = retriever.search("Tessera Health", filters=SearchFilters(tenant="nobody"), query_lang="en")
    assert res.passages == ()
