"""The benchmark end to end on fixture datasets, with the hashing embedder (no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from vouched.errors import BenchInputError, exit_code
from vouched.embed import CachedEmbedder, EmbeddingCache, HashingEmbedder
from vouched.bench.retrieval import machine_info, run_retrieval_bench, skip_first
from vouched.bench.cli import bench_retrieval_command
from vouched.bench.conditions import MODES
from vouched.eval.datasets import load_beir


def embedder(tmp_path: Path) -> CachedEmbedder:
    return CachedEmbedder(HashingEmbedder(), EmbeddingCache(tmp_path / "cache" / "embeddings.sqlite"))


def test_skip_first_forwards_only_real_work():
    seen: list[int] = []
    forward = skip_first(5, seen.append)
    for n in (5, 3, 2):  # cache hits first, then two embedded batches
        forward(n)
    assert seen == [3, 2]
    seen.clear()
    forward = skip_first(4, seen.append)
    forward(6)
    assert seen == [2]


def test_progress_counts_exactly_the_passages_embedded(tmp_path):
    from vouched.bench.retrieval import _to_embed

    emb = embedder(tmp_path)
    texts = ["alpha beta", "gamma delta", "alpha beta"]  # a repeat is embedded once
    for expected in (2, 0):  # cold cache, then warm
        todo = _to_embed(emb, texts)
        assert todo == expected
        seen: list[int] = []
        _, stats = emb.embed_passages_counted(texts, progress=skip_first(len(texts) - todo, seen.append))
        assert sum(seen) == todo == len(texts) - stats.cached


def test_machine_info_names_the_hardware():
    m = machine_info()
    assert m["cpu"] and m["cores"] >= 1 and m["ram_gb"] > 0 and m["python"].startswith("3.")


def test_bench_end_to_end_then_cached(beir_dir, tmp_path, capsys):
    ds = load_beir(beir_dir)
    stores = tmp_path / "stores"
    first = run_retrieval_bench(ds, MODES, stores, runs=2, progress=True, embedder=embedder(tmp_path))
    assert "embedding tinyfact" in capsys.readouterr().err  # the tqdm bar

    assert first["dataset"] == "tinyfact" and first["queries"] == 4 and first["documents"] == 6
    assert first["runs"] == 2 and first["searches_timed"] == 8
    assert set(first["modes"]) == set(MODES)
    for figures in first["modes"].values():
        assert set(figures) >= {"ndcg@10", "recall@100", "p50_ms", "p95_ms"}
        assert 0 <= figures["ndcg@10"] <= 1 and 0 <= figures["recall@100"] <= 1
        assert 0 < figures["p50_ms"] <= figures["p95_ms"]
    assert first["modes"]["keyword"]["ndcg@10"] > 0.8  # distinct topics: keyword search finds them
    assert first["modes"]["keyword"]["recall@100"] == 1.0
    emb = first["embedding"]
    assert (emb["passages"], emb["cached"], emb["total"]) == (6, 0, 6)
    assert emb["queries"] == 4 and emb["queries_seconds"] >= 0
    assert first["store"]["reused"] is False and Path(first["store"]["path"]).parent == stores
    assert {"cpu", "cores", "ram_gb", "python"} <= set(first["machine"]) and first["date"]
    assert "targets" not in first  # no condition, nothing to check
    json.dumps(first)

    second = run_retrieval_bench(ds, MODES, stores, runs=1, progress=True, embedder=embedder(tmp_path))
    assert "embedding" not in capsys.readouterr().err  # nothing to embed: no bar
    assert (second["embedding"]["passages"], second["embedding"]["cached"]) == (0, 6)
    assert second["embedding"]["queries_cached"] == 4
    assert second["store"]["reused"] is True
    for mode in MODES:
        assert second["modes"][mode]["ndcg@10"] == first["modes"][mode]["ndcg@10"]


def test_bench_rejects_unknown_modes(beir_dir, tmp_path):
    from vouched.eval.datasets import BenchInputError

    with pytest.raises(BenchInputError):
        run_retrieval_bench(load_beir(beir_dir), ["bm25"], tmp_path, embedder=HashingEmbedder())


def write_condition(path: Path, ds, targets, **over) -> Path:
    raw = {
        "name": "tiny",
        "command": f"vouched bench retrieval --dataset {ds.name} --condition {path.name}",
        "dataset": {"loader": "beir", "path": f"../somewhere/{ds.name}"},
        "inputs": [{"file": f, "sha256": h} for f, h in ds.files.items()],
        "stats": ds.stats,
        "metrics": ["ndcg@10", "recall@100", "recall@5"],
        "targets": targets,
        "measured": {},
    }
    raw.update(over)
    path.write_text(yaml.safe_dump(raw))
    return path


def test_command_exit_codes_and_json(beir_dir, tmp_path, capsys):
    ds = load_beir(beir_dir)
    run = dict(mode="all", runs=1, store_dir=tmp_path / "stores", progress=False, embedder=embedder(tmp_path))

    easy = write_condition(tmp_path / "easy.yaml", ds, [{"metric": "recall@100", "mode": "keyword", "min": 0.9}])
    assert bench_retrieval_command(beir_dir, as_json=True, condition=easy, **run) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["condition"] == "tiny" and out["passed"] is True
    assert out["targets"][0]["status"] == "pass" and out["command"].startswith("vouched bench retrieval")
    assert set(out["modes"]["hybrid"]) >= {"ndcg@10", "recall@100", "recall@5", "p50_ms", "p95_ms"}

    hard = write_condition(tmp_path / "hard.yaml", ds, [{"metric": "ndcg@10", "mode": "hybrid", "min": 1.01}])
    assert bench_retrieval_command(beir_dir, as_json=False, condition=hard, **run) == 1
    human = capsys.readouterr().out
    for words in ("machine:", "runs: 1", "p95 ms", "passages embedded", "FAIL", "target missed"):
        assert words in human

    # only the keyword mode ran: the hybrid target cannot be judged, so it is skipped
    assert bench_retrieval_command(beir_dir, **{**run, "mode": "keyword"}, as_json=True, condition=hard) == 0
    assert json.loads(capsys.readouterr().out)["targets"][0]["status"] == "skipped"


def test_command_bad_input_exits_2_before_searching(beir_dir, tmp_path, capsys):
    ds = load_beir(beir_dir)
    stores = tmp_path / "stores"
    run = dict(runs=1, store_dir=stores, progress=False, embedder=embedder(tmp_path), as_json=True)
    changed = write_condition(tmp_path / "c.yaml", ds, [{"metric": "ndcg@10", "mode": "hybrid", "min": 0}],
                              stats={**ds.stats, "documents": 5183})
    with pytest.raises(BenchInputError, match="documents: 6 in the data, 5183 expected") as e:
        bench_retrieval_command(beir_dir, mode="all", condition=changed, **run)
    assert exit_code(e.value) == 2 and not stores.exists()

    for kw in ({"dataset": beir_dir, "mode": "bm25", "condition": None},
               {"dataset": tmp_path / "nowhere", "mode": "all", "condition": None},
               {"dataset": beir_dir, "mode": "all", "condition": tmp_path / "missing.yaml"}):
        with pytest.raises(BenchInputError) as e:
            bench_retrieval_command(**kw, **run)
        assert exit_code(e.value) == 2


def test_xquad_folder_runs_both_conditions(xquad_dir, tmp_path, capsys):
    code = bench_retrieval_command(xquad_dir, mode="all", as_json=True, runs=1, condition=None,
                                   store_dir=tmp_path / "stores", progress=False, embedder=embedder(tmp_path))
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dataset"] == "tinyquad" and out["passed"] is True
    assert set(out["conditions"]) == {"xquad-es-es", "xquad-es-en"}
    for name, report in out["conditions"].items():
        assert report["queries"] == 4 and report["documents"] == 3
        assert "recall@100" in report["modes"]["dense"]
        assert any("no condition file" in w for w in report["warnings"])
    assert out["conditions"]["xquad-es-es"]["modes"]["keyword"]["recall@100"] == 1.0
