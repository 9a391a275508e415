import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from pydantic import ValidationError

from vouched.config import RerankSettings, RetrievalSettings
from vouched.embed import HashingEmbedder
from vouched.errors import ConfigError
from vouched.retrieve import HybridRetriever
from vouched.retrieve.rerank import (
    CrossEncoder,
    CrossEncoderScorer,
    OnnxCrossEncoder,
    SentenceScorer,
    logits_to_scores,
    max_per_group,
    rerank,
    rerank_order,
    sentence_units,
)
from vouched.store import SQLiteStore
from vouched.types import Chunk, Passage

EMB = HashingEmbedder(dim=256)


def passage(cid: str, text: str, rank: int, title: str = "", lang: str = "en") -> Passage:
    chunk = Chunk(id=cid, doc_id=cid.split("#")[0], title=title, text=text, lang=lang)
    return Passage(chunk=chunk, rank=rank, dense=0.5, keyword=0.25, evidence=0.5, fused=1.0 / (60 + rank))


# --- pure parts -------------------------------------------------------------------------

def slow_max_per_group(sims, groups, n):
    out = [-math.inf] * n
    for s, g in zip(sims, groups):
        out[g] = max(out[g], s)
    return out


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.floats(-1, 1), st.integers(0, n - 1)), max_size=40))))
def test_max_per_group_matches_reference(case):
    n, pairs = case
    sims = np.array([s for s, _ in pairs], dtype=np.float64)
    groups = np.array([g for _, g in pairs], dtype=np.intp)
    assert max_per_group(sims, groups, n).tolist() == slow_max_per_group(sims.tolist(), groups.tolist(), n)


ids_scores = st.lists(st.floats(0, 1, allow_nan=False), max_size=25).map(
    lambda s: ([f"p{i}" for i in range(len(s))], s))


@given(ids_scores, st.floats(0, 1), st.integers(1, 100))
def test_rerank_order_is_a_permutation(case, w, k):
    ids, scores = case
    assert sorted(rerank_order(ids, scores, w, k)) == sorted(ids)


@given(ids_scores, st.integers(1, 100))
def test_weight_zero_keeps_the_fused_order(case, k):
    ids, scores = case
    assert rerank_order(ids, scores, 0.0, k) == ids


@given(ids_scores, st.integers(1, 100))
def test_weight_one_is_the_score_order_ties_in_fused_order(case, k):
    ids, scores = case
    want = [ids[j] for j in sorted(range(len(ids)), key=lambda j: (-scores[j], j))]
    assert rerank_order(ids, scores, 1.0, k) == want


@settings(max_examples=200)
@given(ids_scores, st.floats(0, 1), st.integers(1, 100), st.data())
def test_raising_a_score_never_lowers_that_passage(case, w, k, data):
    ids, scores = case
    if not ids:
        return
    j = data.draw(st.integers(0, len(ids) - 1))
    higher = list(scores)
    higher[j] = data.draw(st.floats(scores[j], 1))
    before = rerank_order(ids, scores, w, k).index(ids[j])
    after = rerank_order(ids, higher, w, k).index(ids[j])
    assert after <= before


def test_rerank_order_rejects_bad_input():
    with pytest.raises(ValueError):
        rerank_order(["a", "b"], [0.1], 0.5, 10)
    with pytest.raises(ValueError):
        rerank_order(["a"], [0.1], 1.5, 10)
    with pytest.raises(ValueError):
        rerank_order(["a", "a"], [0.1, 0.2], 0.5, 10)


@pytest.mark.parametrize("text,n", [
    ("Sourdough needs flour. It also needs time! Does it need salt?", 3),
    ("پروژه در سال ۱۴۰۰ انجام شد. دقت آن ۹۶ درصد بود؟ کتابخانه از آن استفاده می‌کند.", 3),
    ("El proyecto terminó en 2023. ¿Funcionó? Sí, funcionó.", 3),
    ("O projeto terminou em 2023. Ele funcionou bem.", 2),
    ("Le projet a fini en 2023. Il a bien marché.", 2),
    ("Das Projekt endete 2023. Es lief gut.", 2),
    ("انتهى المشروع في عام 2023. لقد نجح.", 2),
    ("Проект завершился в 2023 году. Он работал хорошо.", 2),
    ("项目于2023年完成。效果很好！", 2),
    ("परियोजना 2023 में पूरी हुई। यह अच्छी चली।", 2),
    ("no boundary at all", 1),
    ("   ", 0),
])
def test_sentence_units_in_every_language(text, n):
    units = sentence_units(text)
    assert len(units) == n
    assert all(u and u in text for u in units)


def test_sentence_units_are_bounded_per_passage():
    text = " ".join(f"Sentence number {i} ends here." for i in range(100))
    assert len(sentence_units(text, max_sentences=7)) == 7


@pytest.mark.parametrize("logits,want", [
    (np.array([0.0, 100.0, -100.0]), [0.5, 1.0, 0.0]),
    (np.array([[0.0], [2.0]]), [0.5, 1 / (1 + math.exp(-2))]),
    (np.array([[1.0, 1.0], [0.0, 3.0]]), [0.5, 1 / (1 + math.exp(-3))]),
])
def test_logits_become_bounded_probabilities(logits, want):
    got = logits_to_scores(logits)
    assert np.allclose(got, want) and ((got >= 0) & (got <= 1)).all()


def test_logits_of_an_unknown_shape_are_refused():
    with pytest.raises(ValueError):
        logits_to_scores(np.zeros((2, 3)))


# --- scoring ----------------------------------------------------------------------------

class FixedScorer:
    name = "fixed"

    def __init__(self, scores):
        self.scores_by_id = scores

    def scores(self, query, query_vector, passages):
        return [self.scores_by_id[p.chunk.id] for p in passages]


def test_rerank_reorders_renumbers_and_cuts_on_the_bounded_score():
    ps = [passage("a#0", "a", 1), passage("b#0", "b", 2), passage("c#0", "c", 3)]
    out = rerank("q", None, ps, FixedScorer({"a#0": 0.2, "b#0": 0.9, "c#0": 0.5}), weight=1.0, k=10, min_score=0.3)
    assert [p.chunk.id for p in out.passages] == ["b#0", "c#0"]
    assert [p.rank for p in out.passages] == [1, 2]
    assert out.dropped == ("a#0",)
    assert out.scores == {"a#0": 0.2, "b#0": 0.9, "c#0": 0.5}
    # evidence (what L2 compares) and the fused number are not touched by reranking
    assert all(p.evidence == 0.5 and p.fused == q.fused for p, q in zip(out.passages, [ps[1], ps[2]]))


def test_rerank_of_nothing_is_nothing():
    assert rerank("q", None, [], FixedScorer({}), weight=0.5, k=10).passages == ()


@pytest.mark.parametrize("query,lang,texts,best", [
    ("sourdough bread salt flour", "en",
     ["Cities grew along rivers. Trade followed the water.",
      "Markets sold many goods. Sourdough bread needs flour, water and salt. Prices rose."], "p1"),
    ("بازسازی متن فارسی", "fa",
     ["کتابخانه در تهران است. ساختمان آن قدیمی است.",
      "این کتابخانه بزرگ است. پروژه‌ی بازسازی متن‌های فارسی انجام شد."], "p1"),
    ("buscador multilingüe Tessera", "es",
     ["Construyó un buscador multilingüe para Tessera Health. Fue en 2023.",
      "La empresa tiene oficinas. El clima es templado."], "p0"),
    ("多语言搜索引擎", "zh",
     ["公司有很多员工。天气很好。", "她为公司开发了多语言搜索引擎。效果很好。"], "p1"),
])
def test_best_sentence_scores_with_a_real_embedding_path(query, lang, texts, best):
    ps = [passage(f"p{i}#0", t, i + 1, lang=lang) for i, t in enumerate(texts)]
    scores = SentenceScorer(EMB).scores(query, None, ps)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert ps[int(np.argmax(scores))].chunk.id.startswith(best)


def test_best_sentence_is_the_max_over_sentences_not_the_passage():
    text = "Cities grew along rivers. Sourdough bread needs flour, water and salt."
    p = passage("p#0", text, 1)
    q = EMB.embed_queries(["sourdough bread flour salt"])[0]
    got = SentenceScorer(EMB).scores("ignored", q, [p])[0]
    sent = EMB.embed_passages(sentence_units(text)) @ q
    assert got == pytest.approx(float(np.clip(sent.max(), 0, 1)), abs=1e-6)
    assert got > float(EMB.embed_passages([text])[0] @ q)


def test_cross_encoder_scorer_checks_and_clips():
    class Model:
        model_id = "fake"

        def __init__(self, out):
            self.out = out

        def score(self, query, passages):
            return self.out

    assert isinstance(Model([]), CrossEncoder)
    ps = [passage("a#0", "x", 1, title="T"), passage("b#0", "y", 2)]
    assert CrossEncoderScorer(Model([1.7, -0.2])).scores("q", None, ps) == [1.0, 0.0]
    with pytest.raises(ValueError):
        CrossEncoderScorer(Model([0.5])).scores("q", None, ps)


# --- the hook in HybridRetriever ----------------------------------------------------------

DOCS = [
    # About bread in general: many shared words, no sentence that answers.
    Chunk(id="gen#0", doc_id="gen", title="Bread", text="Bread bread bread flour bakers. Bread flour ovens and bread bakers everywhere."),
    # One sentence answers precisely; the rest is off topic.
    Chunk(id="ans#0", doc_id="ans", title="Notes", text=(
        "The harbour opened in spring. Ships carried timber and wool. "
        "Sourdough bread rises with wild yeast and lactic bacteria. The town grew.")),
    Chunk(id="far#0", doc_id="far", title="Rivers", text="Rivers flow to the sea. Fish swim upstream."),
]


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "r.sqlite")
    with s.new_version(embedding_model=EMB.model_id, dim=EMB.dim) as w:
        w.add(DOCS, EMB.embed_passages([c.embed_text for c in DOCS]))
    return s


def test_rerank_is_off_by_default_and_changes_nothing(store):
    r = HybridRetriever(store, EMB, RetrievalSettings(top_k=3), languages=("en",))
    a = r.search("sourdough bread wild yeast", query_lang="en")
    b = r.search("sourdough bread wild yeast", query_lang="en", rerank=False)
    assert [p.chunk.id for p in a.passages] == [p.chunk.id for p in b.passages]
    assert "rerank_ms" not in a.times.extra and a.rerank_scores == {}


def test_rerank_puts_the_answering_sentence_first(store):
    settings = RetrievalSettings(top_k=2, rerank=RerankSettings(enabled=True, weight=1.0, candidates=3))
    r = HybridRetriever(store, EMB, settings, languages=("en",))
    q = "sourdough bread wild yeast lactic bacteria"
    fused = r.search(q, query_lang="en", rerank=False, k=3)
    got = r.search(q, query_lang="en", k=2)
    assert [p.rank for p in got.passages] == [1, 2]
    assert got.passages[0].chunk.id == "ans#0"
    assert set(got.rerank_scores) == {p.chunk.id for p in fused.passages}
    assert got.rerank_scores["ans#0"] == max(got.rerank_scores.values())
    assert got.times.extra["rerank_ms"] >= 0 and fused.rerank_scores == {}
    # only hybrid mode reranks
    kw = r.search(q, query_lang="en", mode="keyword", k=2)
    assert [p.chunk.id for p in kw.passages] == [p.chunk.id for p in r.search(q, query_lang="en", mode="keyword", k=2, rerank=False).passages]


def test_min_score_cut_can_leave_nothing_and_l2_then_refuses(store):
    settings = RetrievalSettings(top_k=3, rerank=RerankSettings(enabled=True, min_score=0.999))
    res = HybridRetriever(store, EMB, settings, languages=("en",)).search("rivers fish sea", query_lang="en")
    assert res.passages == () and res.evidence == 0.0


def test_passages_past_the_reranked_head_follow_in_fused_order(store):
    settings = RetrievalSettings(top_k=3, rerank=RerankSettings(enabled=True, weight=1.0, candidates=1))
    r = HybridRetriever(store, EMB, settings, languages=("en",))
    fused = r.search("bread flour sourdough", query_lang="en", rerank=False)
    got = r.search("bread flour sourdough", query_lang="en")
    assert [p.chunk.id for p in got.passages] == [p.chunk.id for p in fused.passages]
    assert [p.rank for p in got.passages] == [1, 2, 3]


def test_a_failing_reranker_keeps_the_fused_order_and_says_so(store):
    class Broken:
        model_id = "broken"

        def score(self, query, passages):
            raise RuntimeError("model file truncated")

    settings = RetrievalSettings(top_k=3, rerank=RerankSettings(enabled=True))
    r = HybridRetriever(store, EMB, settings, languages=("en",), cross_encoder=Broken())
    fused = r.search("bread flour", query_lang="en", rerank=False)
    got = r.search("bread flour", query_lang="en")
    assert [p.chunk.id for p in got.passages] == [p.chunk.id for p in fused.passages]
    assert any("rerank failed" in w and "truncated" in w for w in got.warnings)


def test_a_cross_encoder_decides_the_order_when_given(store):
    class Prefers:
        model_id = "prefers-far"

        def score(self, query, passages):
            return [0.9 if "Rivers" in p else 0.1 for p in passages]

    settings = RetrievalSettings(top_k=3, rerank=RerankSettings(enabled=True, weight=1.0))
    got = HybridRetriever(store, EMB, settings, languages=("en",), cross_encoder=Prefers()).search("bread flour", query_lang="en")
    assert got.passages[0].chunk.id == "far#0"


def test_rerank_settings_are_validated():
    with pytest.raises(ValidationError):
        RerankSettings(weight=1.5)
    with pytest.raises(ValidationError):
        RerankSettings(min_score=-0.1)
    with pytest.raises(ValidationError):
        RerankSettings(candidate=20)  # typo: unknown keys are rejected
    assert RetrievalSettings().rerank.candidates == 20


# --- the ONNX cross-encoder, on a tiny model this test builds ------------------------------

onnx = pytest.importorskip("onnx", reason="the ONNX loader test builds its model with the onnx package")
pytest.importorskip("onnxruntime", reason="pip install 'vouched[rerank]'")
pytest.importorskip("tokenizers", reason="pip install 'vouched[rerank]'")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "bread", "yeast", "river", "fish", "the", "رود", "面包"]
WEIGHTS = {"bread": 1.5, "yeast": 2.0, "river": -1.0, "fish": -0.5, "رود": -2.0, "面包": 1.0}


def build_tiny_cross_encoder(folder, two_classes=False, with_type_ids=False):
    """A bag-of-words 'cross-encoder': logit = Σ weight(token) over attended tokens
    (+ 0.25 per second-segment token when it reads token_type_ids)."""
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    folder.mkdir(parents=True, exist_ok=True)
    table = np.array([[WEIGHTS.get(t, 0.0)] for t in VOCAB], dtype=np.float32)
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["w"]),  # [B, S, 1]
        helper.make_node("Squeeze", ["w", "axis2"], ["w2"]),  # [B, S]
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["w2", "m"], ["wm"]),
    ]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["B", "S"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["B", "S"])]
    last = "wm"
    if with_type_ids:
        inputs.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["B", "S"]))
        nodes += [helper.make_node("Cast", ["token_type_ids"], ["t"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", ["t", "quarter"], ["tq"]),
                  helper.make_node("Mul", ["tq", "m"], ["tqm"]),
                  helper.make_node("Add", ["wm", "tqm"], ["wt"])]
        last = "wt"
    nodes.append(helper.make_node("ReduceSum", [last, "axis1"], ["logit"], keepdims=1))  # [B, 1]
    out = "logit"
    if two_classes:
        nodes += [helper.make_node("Neg", ["logit"], ["neg"]),
                  helper.make_node("Concat", ["neg", "logit"], ["logits2"], axis=1)]  # diff = 2·logit
        out = "logits2"
    graph = helper.make_graph(
        nodes, "tiny", inputs, [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["B", 2 if two_classes else 1])],
        initializer=[numpy_helper.from_array(table, "table"),
                     numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
                     numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
                     numpy_helper.from_array(np.array(0.25, dtype=np.float32), "quarter")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))

    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.save(str(folder / "tokenizer.json"))
    return folder


def expected(query, passage_text, type_bonus=False):
    q, p = query.split(), passage_text.split()
    logit = sum(WEIGHTS.get(t, 0.0) for t in q + p)
    if type_bonus:
        logit += 0.25 * (len(p) + 1)  # second segment: passage tokens and its [SEP]
    return 1 / (1 + math.exp(-logit))


def test_onnx_cross_encoder_loads_from_a_path_and_scores(tmp_path):
    folder = build_tiny_cross_encoder(tmp_path / "ce")
    ce = OnnxCrossEncoder(folder, batch_size=2)
    assert isinstance(ce, CrossEncoder) and ce._session is None  # nothing loads at construction
    passages = ["bread yeast", "the river fish", "unknown words only here", "رود", "面包 bread the the the"]
    got = ce.score("bread", passages)  # 3 batches of ≤2, padded to different lengths
    assert got == pytest.approx([expected("bread", p) for p in passages], abs=1e-6)
    assert got[0] > got[2] > got[1]
    assert ce.score("bread", []) == []


def test_onnx_cross_encoder_two_class_output_and_token_type_ids(tmp_path):
    two = OnnxCrossEncoder(build_tiny_cross_encoder(tmp_path / "two", two_classes=True))
    want = 1 / (1 + math.exp(-2 * (WEIGHTS["bread"] + WEIGHTS["yeast"])))  # softmax of (-l, l)
    assert two.score("bread", ["yeast"]) == pytest.approx([want], abs=1e-6)
    typed = OnnxCrossEncoder(build_tiny_cross_encoder(tmp_path / "typed", with_type_ids=True) / "model.onnx")
    assert typed.score("bread", ["river fish"]) == pytest.approx([expected("bread", "river fish", type_bonus=True)], abs=1e-6)


def test_onnx_cross_encoder_reranks_through_the_retriever(tmp_path, store):
    folder = build_tiny_cross_encoder(tmp_path / "ce")
    settings = RetrievalSettings(top_k=3, rerank=RerankSettings(enabled=True, weight=1.0, cross_encoder_path=folder))
    r = HybridRetriever(store, EMB, settings, languages=("en",))
    got = r.search("bread", query_lang="en")
    scores = got.rerank_scores
    assert [p.chunk.id for p in got.passages] == sorted(scores, key=lambda i: -scores[i])


def test_onnx_cross_encoder_errors_say_how_to_fix(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="model.onnx"):
        OnnxCrossEncoder(tmp_path / "nowhere")
    folder = build_tiny_cross_encoder(tmp_path / "ce")
    import builtins

    real_import = builtins.__import__

    def no_ort(name, *args, **kwargs):
        if name == "onnxruntime":
            raise ImportError("No module named 'onnxruntime'", name="onnxruntime")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ort)
    with pytest.raises(ConfigError, match=r"vouched\[rerank\]"):
        OnnxCrossEncoder(folder).score("q", ["p"])


# --- the benchmark mode ----------------------------------------------------------------------

def write_tiny_beir(root):
    import json

    docs = [("d1", "Bread", "Cities grew along rivers. Sourdough bread rises with wild yeast."),
            ("d2", "Bread", "Bread bread flour. Ovens and bakers."),
            ("d3", "Rivers", "Rivers flow to the sea. Salmon swim upstream to spawn."),
            ("d4", "Stars", "Stars burn hydrogen. Some collapse into black holes.")]
    queries = [("q1", "sourdough wild yeast"), ("q2", "salmon spawn upstream"), ("q3", "black holes collapse")]
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs))
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": x}) + "\n" for i, x in queries))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\nq3\td4\t1\n")
    return root


def test_bench_reports_hybrid_rerank_with_its_sentence_cost(tmp_path, capsys):
    from vouched.embed import CachedEmbedder, EmbeddingCache
    from vouched.bench.retrieval import run_retrieval_bench
    from vouched.eval.datasets import load_beir

    ds = load_beir(write_tiny_beir(tmp_path / "tiny"))
    emb = CachedEmbedder(HashingEmbedder(), EmbeddingCache(tmp_path / "cache.sqlite"))
    # rerank enabled in the config must not leak into the plain hybrid figures
    settings = RetrievalSettings(rerank=RerankSettings(enabled=True, weight=1.0, rrf_k=1))
    first = run_retrieval_bench(ds, ("hybrid", "hybrid+rerank"), tmp_path / "s", runs=2, embedder=emb, settings=settings)
    assert "embedding tiny sentences" in capsys.readouterr().err
    e = first["embedding"]
    assert e["sentences"] == 8 and e["sentences_embedded"] == 8 and e["sentences_seconds"] >= 0
    assert e["rerank"] == {"candidates": 20, "weight": 1.0, "rrf_k": 1, "min_score": 0.0, "scorer": "sentence"}
    rr, plain = first["modes"]["hybrid+rerank"], first["modes"]["hybrid"]
    assert "rerank" in rr["stages_p50_ms"] and "rerank" not in plain["stages_p50_ms"]
    assert 0 <= rr["ndcg@10"] <= 1 and rr["p50_ms"] > 0
    assert first["warnings"] == []  # same rankings in both passes: reranking is deterministic

    plain_only = run_retrieval_bench(ds, ("hybrid",), tmp_path / "s", embedder=emb)
    assert plain_only["modes"]["hybrid"]["ndcg@10"] == plain["ndcg@10"]
    again = run_retrieval_bench(ds, ("hybrid+rerank",), tmp_path / "s", embedder=emb, settings=settings)
    assert again["embedding"]["sentences_embedded"] == 0  # served from the cache
    assert again["modes"]["hybrid+rerank"]["ndcg@10"] == rr["ndcg@10"]


def test_bench_sample_is_seeded_and_checks_no_target(tmp_path):
    from vouched.bench.retrieval import run_retrieval_bench, sample_queries
    from vouched.eval.datasets import load_beir

    ds = load_beir(write_tiny_beir(tmp_path / "tiny"))
    a, b = sample_queries(ds, 2), sample_queries(ds, 2)
    assert a.queries == b.queries and len(a.queries) == 2 and set(a.qrels) == {q for q, _, _ in a.queries}
    report = run_retrieval_bench(ds, ("hybrid",), tmp_path / "s", embedder=HashingEmbedder(), sample=2)
    assert report["sample"] == {"queries": 2, "of": 3, "seed": 7} and report["queries"] == 2
    assert "targets" not in report and any("sample" in w for w in report["warnings"])
