"""vouched.bench.verify: SciFact loading, negative pairs, metrics, the command's exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.embed import HashingEmbedder
from vouched.bench.verify import (
    CLASSES,
    BenchInputError,
    bench_verify_command,
    build_pairs,
    confusion,
    hard_negatives,
    load_scifact,
    run_bench,
    scores,
)
from tests.helpers import SHARED, needs_shared

DOCS = {
    "d1": ("Metformin and insulin", "Metformin increases insulin sensitivity in elderly patients. The trial ran 12 weeks."),
    "d2": ("Aspirin and bleeding", "Aspirin did not raise bleeding risk in 300 adults. Doses were low."),
    "d3": ("Metformin dosing", "Metformin dosing was adjusted for kidney function. Insulin was unchanged."),
    "d4": ("Fishing quotas", "The committee met in Geneva to discuss fishing quotas."),
    "d5": ("Aspirin in children", "Aspirin is avoided in children because of Reye syndrome."),
}
# train: q1 (support d1), q2 (contradict d2); test: q3 (support d1, cites d3 without evidence), q4 (none)
QUERIES = [
    {"_id": "q1", "text": "Metformin increases insulin sensitivity.", "metadata": {"d1": [{"sentences": [0], "label": "SUPPORT"}]}},
    {"_id": "q2", "text": "Aspirin raises bleeding risk.", "metadata": {"d2": [{"sentences": [0], "label": "CONTRADICT"}]}},
    {"_id": "q3", "text": "Metformin raises insulin sensitivity in elderly patients.",
     "metadata": {"d1": [{"sentences": [0], "label": "SUPPORT"}]}},
    {"_id": "q4", "text": "Aspirin is safe in children.", "metadata": {}},
]
QRELS = [("q3", "d1"), ("q3", "d3"), ("q4", "d5")]


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    (tmp_path / "qrels").mkdir()
    with (tmp_path / "corpus.jsonl").open("w") as f:
        for did, (title, text) in DOCS.items():
            f.write(json.dumps({"_id": did, "title": title, "text": text, "metadata": {}}) + "\n")
    with (tmp_path / "queries.jsonl").open("w") as f:
        for q in QUERIES:
            f.write(json.dumps(q) + "\n")
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in QRELS))
    return tmp_path


def test_load_splits_labels_and_cited(tiny):
    data = load_scifact(tiny, check=False)
    by = {c.id: c for c in data.claims}
    assert [c.split for c in data.claims] == ["train", "train", "test", "test"]
    assert by["q2"].labels == {"d2": "contradicted"}
    assert by["q3"].cited == {"d1", "d3"} and by["q4"].cited == {"d5"}


def test_checksums_are_checked(tiny):
    with pytest.raises(BenchInputError, match="sha256"):
        load_scifact(tiny, check=True)
    (tiny / "qrels" / "test.tsv").unlink()
    with pytest.raises(BenchInputError, match="missing"):
        load_scifact(tiny, check=False)


def test_pairs_and_negatives_never_use_a_cited_abstract(tiny):
    data = load_scifact(tiny, check=False)
    hard = hard_negatives(data, data.claims, HashingEmbedder(dim=128), lambda *_: None)
    cited = {c.id: c.cited for c in data.claims}
    assert set(hard) == {"q1", "q2", "q3", "q4"}
    assert all(hard[q] not in cited[q] for q in hard)
    test = build_pairs(data, "test", ["retrieval", "nei", "random"], hard)
    gold = {(p.claim_id, p.source): (p.doc_id, p.gold) for p in test}
    assert gold[("q3", "label")] == ("d1", "supported")
    assert gold[("q3", "nei")] == ("d3", "insufficient") and gold[("q4", "nei")] == ("d5", "insufficient")
    for p in test:
        if p.source != "label":
            assert p.gold == "insufficient" and (p.source == "nei") == (p.doc_id in cited[p.claim_id])
    assert build_pairs(data, "test", ["random"], hard) == build_pairs(data, "test", ["random"], hard)  # seeded
    train = build_pairs(data, "train", ["retrieval"], hard)
    assert {p.claim_id for p in train} == {"q1", "q2"}


def test_scores_by_hand():
    gold = ["supported", "supported", "contradicted", "insufficient", "insufficient", "insufficient"]
    pred = ["supported", "insufficient", "supported", "insufficient", "insufficient", "contradicted"]
    s = scores(gold, pred)
    assert s["per_class"] == {"supported": 0.5, "contradicted": 0.0, "insufficient": 2 / 3}
    assert s["balanced_accuracy"] == pytest.approx((0.5 + 0 + 2 / 3) / 3)
    assert s["accuracy"] == pytest.approx(3 / 6)
    assert s["confusion"]["insufficient"]["contradicted"] == 1


labels = st.sampled_from(CLASSES)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(labels, labels), min_size=1, max_size=60))
def test_balanced_accuracy_is_the_mean_recall(pairs):
    gold, pred = [g for g, _ in pairs], [p for _, p in pairs]
    s = scores(gold, pred)
    m = confusion(gold, pred)
    assert sum(sum(r.values()) for r in m.values()) == len(pairs)
    present = [g for g in CLASSES if g in gold]
    assert s["balanced_accuracy"] == pytest.approx(sum(m[g][g] / gold.count(g) for g in present) / len(present))
    assert scores(gold, gold)["balanced_accuracy"] == 1.0
    assert 0.0 <= s["balanced_accuracy"] <= 1.0


def test_run_bench_on_a_tiny_copy(tiny):
    report = run_bench(tiny, HashingEmbedder(dim=128), progress=False, check=False, tune_on_train=True)
    assert report["pairs"]["label"] == 1 and report["pairs"]["nei"] == 2
    assert "train_balanced_accuracy" in report["tuned"]
    head = report["results"]["retrieval"]
    assert report["passed"] == (head["balanced_accuracy"] >= 0.70)
    assert sum(head["support"].values()) == 1 + report["pairs"]["retrieval"]


def test_command_raises_an_exit_2_error_on_bad_input(tmp_path):
    from vouched.errors import BenchInputError, exit_code

    with pytest.raises(BenchInputError, match="missing") as e:
        bench_verify_command(tmp_path, lexical_only=True, tune_on_train=False, as_json=False, progress=False,
                             embedder=HashingEmbedder(dim=64))
    assert exit_code(e.value) == 2


@needs_shared("scifact")
def test_shared_scifact_checksums_and_counts():
    data = load_scifact(SHARED / "scifact", check=True)
    tests = [c for c in data.claims if c.split == "test"]
    assert sum(len(c.labels) for c in tests) == 209
    assert sum(len(c.cited - set(c.labels)) for c in tests) == 130


def _toy_cases(claims: list[str]) -> list[tuple[str, str, str]]:
    """Each claim with a supporting, a negated (contradicting) and an unrelated passage."""
    cases = []
    for s in claims:
        cases.append((s, s + " Other findings were minor.", "supported"))
        cases.append((s, s.replace(" increases", " does not increase").replace(" lowers", " does not lower")
                      .replace(" reduce", " do not reduce").replace(" improves", " does not improve")
                      + " Other findings were minor.", "contradicted"))
        cases.append((s, "The committee met in Geneva to discuss fishing quotas. Boats were counted.", "insufficient"))
    return cases


def test_tuner_finds_a_separating_setting_and_agrees_with_decide():
    from vouched.bench.verify import tune
    from vouched.guard.verify import analyse, decide

    cases = _toy_cases(["Metformin increases insulin sensitivity in elderly patients.",
                        "Aspirin lowers fever in children with influenza.",
                        "Statins reduce cholesterol in adults with diabetes."])
    feats = [analyse(c, [p], lang="en") for c, p, _ in cases]
    gold = [g for *_, g in cases]
    best, b = tune(feats, gold, lexical_only=True)
    assert b == 1.0
    assert [decide(f, best).verdict for f in feats] == gold


def test_fit_is_deterministic_and_separates_a_toy_set():
    from vouched.bench.verify import _predict, fit_model
    from vouched.guard.verify import analyse

    cases = _toy_cases(["Metformin increases insulin sensitivity in elderly patients.",
                        "Aspirin lowers fever in children with influenza.",
                        "Statins reduce cholesterol in adults with diabetes.",
                        "Vitamin D improves bone density in older women."])
    feats = [analyse(c, [p], lang="en") for c, p, _ in cases]
    gold = [g for *_, g in cases]
    a, b = fit_model(feats, gold, embedded=False), fit_model(feats, gold, embedded=False)
    assert np.array_equal(a.weights, b.weights) and np.array_equal(a.bias, b.bias)
    assert [_predict(f, {"words": a}) for f in feats] == gold


def test_run_bench_fit_and_save_on_a_tiny_copy(tiny, tmp_path):
    from vouched.guard.verify import load_model

    path = tmp_path / "model.json"
    report = run_bench(tiny, HashingEmbedder(dim=128), lexical_only=True, progress=False, check=False, fit=True,
                       save=True, model_path=path)
    saved = json.loads(path.read_text())
    assert set(saved["variants"]) == {"words"} and "cv5_balanced_accuracy" in report["fitted"]
    assert saved["provenance"]["words"]["command"] == "vouched bench verify --fit --save"
    assert report["per_pair_ms"]["analyse"] > 0
    load_model.cache_clear()
    with pytest.raises(BenchInputError):
        run_bench(tiny, HashingEmbedder(dim=128), progress=False, check=False, fit=True, tune_on_train=True)


# --- --backend llm (scripted: no model, no network beyond the process) ---------------------------


class _Oracle:
    """A provider that answers from a table of (claim, passage start) → verdict, read back from the prompt."""

    name, model = "scripted", "oracle"

    def __init__(self, table):
        from vouched.llm.scripted import ScriptedProvider

        self.table, self.inner, self.seen = table, ScriptedProvider(), []

    def stream(self, messages, *, max_tokens, temperature=0.0):
        user = messages[-1].content
        self.seen.append(user)
        verdict = next((v for (claim, start), v in self.table.items() if f"Claim: {claim}" in user and f"[1] {start}" in user),
                       "no idea")
        self.inner.queue([json.dumps({"verdict": verdict}) if verdict != "no idea" else "no idea"])
        return self.inner.stream(messages, max_tokens=max_tokens, temperature=temperature)


def test_run_bench_llm_scores_what_the_model_says(tiny):
    from vouched.bench.verify import run_bench_llm

    data = load_scifact(tiny, check=False)
    hard = hard_negatives(data, [c for c in data.claims if c.split == "test"], HashingEmbedder(dim=128), lambda *_: None)
    pairs = build_pairs(data, "test", ["retrieval"], hard)
    table = {(p.claim, data.texts[p.doc_id][:20]): p.gold for p in pairs}
    oracle = _Oracle(table)
    report = run_bench_llm(tiny, HashingEmbedder(dim=128), base_url="", model="", provider=oracle, progress=False, check=False)
    head = report["results"]["retrieval"]
    assert head["balanced_accuracy"] == 1.0 and report["passed"] and report["unparsable"] == 0
    assert len(oracle.seen) == len(pairs) == sum(report["pairs"].values())
    assert report["seconds_per_claim"] >= 0 and "words_same_pairs" in report
    # every prompt holds the claim and only its one cited abstract
    for p, user in zip(pairs, oracle.seen):
        assert data.texts[p.doc_id] in user and "[2]" not in user
    # a model that answers outside the schema is scored as insufficient, and counted
    silly = _Oracle({})
    bad = run_bench_llm(tiny, HashingEmbedder(dim=128), base_url="", model="", provider=silly, progress=False, check=False)
    assert bad["unparsable"] == len(pairs)
    assert all(r["llm"] == "insufficient" for r in bad["rows"])


def test_sample_pairs_is_seeded_and_per_class():
    from vouched.bench.verify import Pair, sample_pairs

    pairs = [Pair(f"c{i}", "x", f"d{i}", CLASSES[i % 3], "label") for i in range(30)]
    a, b = sample_pairs(pairs, 4), sample_pairs(pairs, 4)
    assert a == b and len(a) == 12 and all(sum(p.gold == g for p in a) == 4 for g in CLASSES)
    assert [pairs.index(p) for p in a] == sorted(pairs.index(p) for p in a)
    assert sample_pairs(pairs, None) == pairs and len(sample_pairs(pairs, 100)) == 30


def test_command_llm_needs_an_endpoint(tmp_path):
    from vouched.errors import exit_code

    with pytest.raises(BenchInputError, match="base-url") as e:
        bench_verify_command(tmp_path, lexical_only=True, tune_on_train=False, as_json=False, progress=False,
                             embedder=HashingEmbedder(dim=64), backend="llm")
    assert exit_code(e.value) == 2
    with pytest.raises(BenchInputError, match="--fit"):
        bench_verify_command(tmp_path, lexical_only=True, tune_on_train=False, as_json=False, progress=False,
                             embedder=HashingEmbedder(dim=64), backend="llm", base_url="http://127.0.0.1:1/v1",
                             model="m", fit=True)


def test_keyword_hard_negatives_never_cite_and_rank_by_words(tiny):
    from vouched.bench.verify import hard_negatives_keyword

    data = load_scifact(tiny, check=False)
    hard = hard_negatives_keyword(data, data.claims)
    assert hard == hard_negatives_keyword(data, data.claims)  # deterministic
    for c in data.claims:
        if c.id in hard:
            assert hard[c.id] not in c.cited
    # q4 "Aspirin is safe in children." cites d5; the closest other abstract by words is an aspirin one
    assert hard["q4"] == "d2"
