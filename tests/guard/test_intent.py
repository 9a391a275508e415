"""L1 by meaning (vouched.guard.intent): the decision rule, the shipped model, its freshness."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vouched.guard.intent import (
    CLASSES,
    PERSON,
    IntentModel,
    data_sha,
    intent_text,
    load_model,
    quantize_rows,
    word_count,
)

DIM = 8


def toy_model(seed: int = 0, tau: float = 0.5, knn_min: float = -1.0, min_words: int = 3) -> IntentModel:
    rng = np.random.default_rng(seed)
    bank = rng.normal(size=(20, DIM)).astype(np.float32)
    bank /= np.linalg.norm(bank, axis=1, keepdims=True)
    q, s = quantize_rows(bank)
    w = rng.normal(scale=3, size=(DIM + 1, len(CLASSES))).astype(np.float32)
    return IntentModel(model_id="toy", classes=CLASSES, layers=((w[:-1], w[-1]),),
                       mu=np.zeros(DIM, np.float32), sd=np.ones(DIM, np.float32), bank=q, bank_scale=s,
                       tau=tau, knn_min=knn_min, min_words=min_words, data_sha="x")


def unit_rows(seed: int, n: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


cats = st.sets(st.sampled_from(CLASSES[1:]))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), force=cats, about=st.booleans(), words=st.integers(0, 8))
def test_decide_only_names_categories_in_force(seed, force, about, words):
    model = toy_model(seed % 7, tau=0.2)
    for m in model.decide(unit_rows(seed, 5), about_subject=[about] * 5, words=[words] * 5, categories=force):
        if m is None:
            continue
        assert m.category in force
        assert about or m.category not in PERSON  # fees/hiring/private/speculation need the subject
        assert words >= model.min_words
        assert m.p >= model.tau and m.knn >= model.knn_min


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), lo=st.floats(0.05, 0.95), step=st.floats(0.0, 0.5))
def test_a_higher_threshold_never_refuses_more(seed, lo, step):
    vectors = unit_rows(seed, 12)
    kw = dict(about_subject=[True] * 12, words=[5] * 12)
    low = toy_model(seed % 5, tau=lo).decide(vectors, **kw)
    high = toy_model(seed % 5, tau=min(lo + step, 1.0)).decide(vectors, **kw)
    assert all(h is None or l is not None for l, h in zip(low, high))


def test_no_category_in_force_refuses_nothing():
    model = toy_model(tau=0.0)
    assert model.decide(unit_rows(1, 4), about_subject=[True] * 4, words=[9] * 4, categories=()) == [None] * 4


def test_the_neighbourhood_is_a_second_condition():
    vectors = unit_rows(3, 6)
    kw = dict(about_subject=[True] * 6, words=[5] * 6)
    assert any(toy_model(tau=0.0, knn_min=-1.0).decide(vectors, **kw))
    assert not any(toy_model(tau=0.0, knn_min=1.01).decide(vectors, **kw))


def test_decide_rejects_vectors_of_another_size():
    with pytest.raises(ValueError, match="wants"):
        toy_model().decide(np.zeros((1, DIM + 1), np.float32), about_subject=[True], words=[5])


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_int8_bank_keeps_cosines_within_3e3(seed):
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(16, 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    q, s = quantize_rows(rows)
    back = q.astype(np.float32) * s[:, None]
    probe = unit_rows(seed, 3).repeat(48, axis=1)[:, :384]
    probe /= np.linalg.norm(probe, axis=1, keepdims=True)
    assert np.abs(probe @ rows.T - probe @ back.T).max() < 3e-3


def test_a_hidden_layer_is_a_relu_between_two_affine_maps():
    rng = np.random.default_rng(5)
    w1, b1 = rng.normal(size=(DIM, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32)
    w2, b2 = rng.normal(size=(4, len(CLASSES))).astype(np.float32), rng.normal(size=len(CLASSES)).astype(np.float32)
    model = IntentModel(model_id="toy", classes=CLASSES, layers=((w1, b1), (w2, b2)), mu=np.zeros(DIM, np.float32),
                        sd=np.ones(DIM, np.float32), bank=np.zeros((1, DIM), np.int8), bank_scale=np.ones(1, np.float32),
                        tau=0.5, knn_min=0.0, min_words=3, data_sha="x")
    v = unit_rows(2, 3)
    z = np.maximum(v @ w1 + b1, 0) @ w2 + b2
    want = np.exp(z - z.max(1, keepdims=True))
    assert np.allclose(model.probabilities(v), want / want.sum(1, keepdims=True), atol=1e-6)
    again = IntentModel.from_bytes(model.to_bytes())
    assert len(again.layers) == 2 and np.allclose(again.probabilities(v), model.probabilities(v))


def test_bytes_round_trip():
    model = toy_model(4)
    again = IntentModel.from_bytes(model.to_bytes())
    v = unit_rows(9, 5)
    kw = dict(about_subject=[True] * 5, words=[5] * 5)
    assert again.decide(v, **kw) == model.decide(v, **kw)
    assert (again.tau, again.knn_min, again.min_words, again.classes) == (model.tau, model.knn_min, model.min_words, CLASSES)


@pytest.mark.parametrize("text, n", [("what are her rates", 4), ("她的收费标准是多少", 6), ("Mara的收费标准是多少", 6), ("", 0), ("hi", 1)])
def test_word_count(text, n):
    assert word_count(text) == n


def test_intent_text_reads_any_subject_as_the_training_name():
    assert intent_text("What are Leila Navid's rates?", ("Leila Navid", "Leila")) == intent_text(
        "What are Mara's rates?", ("Mara",))
    assert "mara" in intent_text("Où habite Quint ?", ("Quint",))


def test_shipped_model_is_there_and_sane():
    from vouched.embed.e5 import BASE_MODEL_ID

    model = load_model()
    assert model is not None and model.model_id == BASE_MODEL_ID
    assert model.classes == CLASSES and model.layers[0][0].shape[0] == 384 and model.layers[-1][0].shape[1] == len(CLASSES)
    assert 0.5 < model.tau <= 1.0 and 0.8 < model.knn_min < 1.0 and model.bank.dtype == np.int8


def test_shipped_model_was_built_from_the_data_in_the_repository():
    """Packs' examples, the paraphrase set and the site questions are its training data: change
    them and this fails until `python -m vouched.bench.intent_build` is run again."""
    from vouched.bench.intent_build import training_data

    data = training_data()
    assert load_model().data_sha == data_sha(data), "stale intent model: run python -m vouched.bench.intent_build"
    assert {label for _, label in data} == set(CLASSES)
