"""Issue 15.5: the faster injection scan decides exactly as the recorded one did.

``tests/fixtures/injection_decisions/decisions.jsonl`` was written by ``make_decisions.py``
(same folder) with the scan as it was before its prefilter and decoders were rewritten for
speed; every text it lists is regenerated here and must get the very same hits. A hit's ``match`` is
in comparable form, which since the recording also folds traditional Chinese characters to
simplified ones (one for one: positions unchanged), so the recorded match is compared in
today's comparable form ("無視" is now reported as "无视").
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from vouched.guard.injection import inspect_text, is_flagged, scan_injection
from vouched.guard.packs import comparable

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "injection_decisions"


def _maker():
    spec = importlib.util.spec_from_file_location("make_decisions", HERE / "make_decisions.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_decisions_unchanged():
    recorded = [json.loads(line) for line in (HERE / "decisions.jsonl").read_text("utf-8").splitlines()]
    texts = list(_maker().texts())
    assert [r["id"] for r in recorded] == [tid for tid, _ in texts]
    changed = []
    for rec, (tid, text) in zip(recorded, texts):
        got = [[h.category, h.lang, h.match, h.start] for h in scan_injection(text)]
        want = [[c, lang, comparable(m, normalized=True), start] for c, lang, m, start in rec["hits"]]
        if got != want:
            changed.append((tid, want, got))
    assert not changed, changed[:5]
    assert sum(1 for r in recorded if r["hits"]) > 1000  # the fixture is not empty of decisions


_BENCH = Path(os.environ.get("VOUCHED_BENCH_DIR", Path(__file__).resolve().parents[3] / "shared" / "benchmarks"))


@pytest.mark.skipif(not (_BENCH / "scifact" / "corpus.jsonl").exists(), reason="benchmark corpora not present")
def test_corpus_texts_still_clean():
    from vouched.bench.injection import corpus_texts

    flagged = [(name, text[:80]) for name, text in corpus_texts(_BENCH) if is_flagged(inspect_text(text)[1])]
    assert flagged == []
