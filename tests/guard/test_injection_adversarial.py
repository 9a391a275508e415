"""Issue 15.4: targets on the adversarial development set (vouched/eval/sets)."""

from __future__ import annotations

from vouched.bench.injection import TARGETS, load_set, run_set


def test_adversarial_set_targets():
    s = run_set(load_set())
    mal_h, mal_n = s["malicious"]
    assert mal_n >= 200 and len({r["lang"] for r in load_set() if r["label"] == "malicious"}) >= 5
    assert mal_h / mal_n >= TARGETS["malicious"]
    ind_h, ind_n = s["family"]["indirect"]
    assert ind_h / ind_n >= TARGETS["indirect"]
    enc_h, enc_n = s["family"]["encoded"]
    assert enc_h / enc_n >= TARGETS["encoded"]
    ben_h, ben_n = s["benign"]
    assert ben_h / ben_n <= TARGETS["benign_max"], [r["id"] for r, _ in s["false_flags"]]
