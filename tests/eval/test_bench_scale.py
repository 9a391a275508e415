"""`vouched bench scale`: its pure parts, the synthetic corpus, and one tiny end-to-end run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from vouched.bench import scale as bs
from tests.helpers import SHARED, needs_shared

BENCH = SHARED
needs_data = needs_shared("squad2-dev", "dev-v2.0.json")


@pytest.mark.parametrize("text,n", [("10k", 10_000), ("100K", 100_000), ("1m", 1_000_000), ("2500", 2500), (" 1.5k ", 1500)])
def test_parse_size(text, n):
    assert bs.parse_size(text) == n


@pytest.mark.parametrize("text", ["", "k", "10g", "-5", "5"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        bs.parse_size(text)


@given(st.integers(10, 10**9))
def test_size_label_round_trips(n):
    assert bs.parse_size(bs.size_label(n)) == n


@given(st.lists(st.text(min_size=1, max_size=3), max_size=15), st.lists(st.text(min_size=1, max_size=3), max_size=15))
def test_recall_at_bounds(got, ref):
    r = bs.recall_at(got, ref, 10)
    assert 0.0 <= r <= 1.0
    if set(ref[:10]) and set(ref[:10]) <= set(got[:10]):
        assert r == 1.0
    assert bs.recall_at(ref, ref, 10) == 1.0


def _r(backend, size, p50, **kw):
    return {"backend": backend, "size": size, "p50_ms": p50, "p95_ms": p50 * 2, **kw}


def test_check_targets_judges_the_best_backend_and_recall():
    ok = [_r("sqlite", 10_000, 55.0), _r("sqlite-ann", 10_000, 12.0, recall_at_10=0.99, graph_recall_at_10=0.8)]
    assert bs.check_targets(ok) == []
    slow = [_r("sqlite", 1_000_000, 400.0), _r("sqlite-ann", 1_000_000, 151.0, recall_at_10=0.99)]
    assert len(bs.check_targets(slow)) == 1 and "1m" in bs.check_targets(slow)[0]
    low = [_r("sqlite-ann", 100_000, 5.0, recall_at_10=0.9)]
    assert "recall" in bs.check_targets(low)[0]
    assert bs.check_targets([{"backend": "postgres", "size": 10_000, "error": "exit 1"}])
    assert bs.check_targets([_r("sqlite", 100_000, 900.0)]) == []  # no target at 100k


def test_check_targets_judges_postgres_against_sqlite_in_the_same_run():
    ok = [_r("sqlite-ann", 100_000, 20.0, top10_agree_sqlite=0.99),
          _r("postgres", 100_000, 39.0, ingest_rate=1500.0, top10_agree_sqlite=0.985)]
    assert bs.check_targets(ok) == []
    slow = [_r("sqlite-ann", 100_000, 20.0), _r("postgres", 100_000, 41.0, ingest_rate=1500.0)]
    assert any("2.0x" in m for m in bs.check_targets(slow))
    small = [_r("sqlite-ann", 10_000, 2.0), _r("postgres", 10_000, 41.0, ingest_rate=1500.0)]
    assert bs.check_targets(small) == []  # the 2x rule starts at 100k
    assert any("ingest" in m for m in bs.check_targets([_r("postgres", 10_000, 5.0, ingest_rate=900.0)]))
    assert any("top-10" in m for m in bs.check_targets([_r("postgres", 10_000, 5.0, ingest_rate=2e3, top10_agree_sqlite=0.9)]))
    assert any("< 50.0" in m for m in bs.check_targets([_r("postgres", 1_000_000, 60.0, ingest_rate=2e3)]))


def test_top10_agreement_and_its_files(tmp_path):
    ref = [["a", "b", "c"], ["d"]]
    assert bs.top10_agreement(ref, ref) == 1.0
    assert bs.top10_agreement([["a", "x", "c"], []], ref) == pytest.approx((2 / 3 + 0) / 2)
    assert np.isnan(bs.top10_agreement([["a"]], ref))
    (tmp_path / "sqlite-10k.top10.json").write_text(json.dumps(ref))
    (tmp_path / "postgres-10k.top10.json").write_text(json.dumps([["a", "b", "c"], ["e"]]))
    runs = [_r("sqlite", 10_000, 1.0), _r("postgres", 10_000, 2.0), _r("sqlite-ann", 10_000, 1.0)]
    bs.add_agreement(runs, tmp_path)
    assert runs[1]["top10_agree_sqlite"] == 0.5 and "top10_agree_sqlite" not in runs[0] and "top10_agree_sqlite" not in runs[2]


def test_postgres_missing_names_the_missing_part(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda m, *a: None if m == "psycopg" else real(m, *a))
    assert "psycopg" in bs.postgres_missing()


@needs_data
def test_synthetic_corpus_is_deterministic_unit_and_structured():
    src = bs.load_sources(BENCH)
    assert len(src.texts) > 6000 and len(src.questions) > 10_000
    c1, v1, topics = bs.synth_corpus(src, 3000)
    c2, v2, _ = bs.synth_corpus(src, 3000)
    assert [c.text for c in c1] == [c.text for c in c2] and np.array_equal(v1, v2)
    assert v1.shape == (3000, bs.DIM) and v1.dtype == np.float32
    assert np.allclose(np.linalg.norm(v1, axis=1), 1.0, atol=1e-5)
    assert len({c.id for c in c1}) == 3000 and all(c.text for c in c1)
    # structure: queries whose paragraph went into some chunk find it far closer than uniform
    # noise would (max cosine of 3,000 uniform 384-d vectors is about 0.2), typical pairs ~0
    qs = bs.synth_queries(src, topics, 50)
    s = np.stack([v for _, v in qs]) @ v1.T
    assert np.quantile(s.max(axis=1), 0.75) > 0.4 and np.median(np.abs(s)) < 0.05


@needs_data
def test_tiny_end_to_end_run_writes_results_and_plot(tmp_path):
    from vouched.cli import app

    res = CliRunner().invoke(app, ["bench", "scale", "--sizes", "300", "--backends", "sqlite,sqlite-ann", "--queries", "5",
                                   "--out", str(tmp_path), "--json", "--bench-dir", str(BENCH)])
    report = json.loads(res.stdout[res.stdout.index("{"):])
    assert res.exit_code == 0, report["misses"]
    runs = {r["backend"]: r for r in report["results"]}
    assert set(runs) == {"sqlite", "sqlite-ann"}
    for r in runs.values():
        assert r["queries"] == 5 and r["p50_ms"] > 0 and r["ingest_rate"] > 0 and r["peak_rss_mb"] > 0 and r["disk_mb"] > 0
        assert r["ingest_cpu_s"] > 0 and r["cpu_rate"] > 0 and r["load_rate"] >= r["ingest_rate"]
    assert runs["sqlite-ann"]["ann_build_s"] is not None and runs["sqlite"]["ann_build_s"] is None
    assert runs["sqlite-ann"]["graph_recall_at_10"] >= 0.95
    assert (tmp_path / "results.json").exists() and (tmp_path / "scale.png").stat().st_size > 1000
    assert not list((tmp_path / "stores").glob("*.sqlite"))  # stores deleted after each run


def test_cli_rejects_unknown_backend():
    from vouched.cli import app

    res = CliRunner().invoke(app, ["bench", "scale", "--backends", "sqlite,mongo"])
    assert res.exit_code != 0 and "backends" in res.output.lower()
