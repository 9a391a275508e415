"""Issue 15.3: the L1 paraphrase development set meets its targets (the holdout rows are
reported by benchmarks/l1_paraphrase.py --split holdout|holdout2|holdout3, not asserted)."""

from __future__ import annotations

from collections import Counter

from vouched.bench.l1_paraphrase import CORE, load_set, run


def test_the_set_has_the_promised_size_and_is_not_copied_from_the_golden_sets():
    import json
    from pathlib import Path

    rows = load_set()
    dev = Counter((r.lang, r.category) for r in rows if r.category != "benign")
    for (lang, cat), n in dev.items():
        assert n >= (25 if lang in CORE else 8), (lang, cat, n)
    assert sum(1 for r in rows if r.category == "benign") >= 150
    root = Path(__file__).resolve().parents[2]
    golden = {json.loads(l)["question"].strip().lower() for p in root.glob("examples/*/golden.jsonl") for l in p.read_text("utf-8").splitlines() if l.strip()}
    assert not [r.text for r in rows if r.text.strip().lower() in golden]


def test_dev_targets_met():
    rep = run(load_set(), splits=("dev",))
    assert not rep.failing_cells(), rep.failing_cells()
    assert not rep.benign_refused, [(r.lang, r.text, why) for r, why in rep.benign_refused]


def test_no_row_is_in_two_splits_and_holdout2_is_there():
    rows = load_set()
    by_text: dict[str, set[str]] = {}
    for r in rows:
        by_text.setdefault(r.text.strip().lower(), set()).add(r.split)
    assert not [t for t, splits in by_text.items() if len(splits) > 1]
    h2 = [r for r in rows if r.split == "holdout2"]
    assert len(h2) >= 150 and len({r.lang for r in h2}) == 10


def test_holdout3_is_there_with_its_promised_size():
    rows = [r for r in load_set() if r.split == "holdout3"]
    cells = Counter((r.lang, r.category) for r in rows if r.category != "benign")
    assert len({lang for lang, _ in cells}) == 10
    for (lang, cat), n in cells.items():
        assert n >= (12 if lang in CORE else 5), (lang, cat, n)
    assert len({c for _, c in cells}) == 6
    assert sum(1 for r in rows if r.category == "benign") >= 40
