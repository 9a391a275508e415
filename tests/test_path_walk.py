"""The question's path through the code (benchmarks/path_walk.py): at most 8 returns to a file
already left, for an answered and an L2-refused `vouched ask` (docs/architecture.md, "The walk")."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def path_walk():
    spec = importlib.util.spec_from_file_location("path_walk", ROOT / "benchmarks" / "path_walk.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["path_walk"] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("path_walk", None)


def test_a_return_is_a_visit_to_a_file_already_left(path_walk):
    w = path_walk.Walk("q")
    for f in ("a.py", "a.py", "b.py", "c.py", "b.py", "b.py", "a.py", "d.py"):
        w.stops.append(path_walk.Stop(f, "f", 1))
    assert w.visits == ["a.py", "b.py", "c.py", "b.py", "a.py", "d.py"]
    assert w.returns == ["b.py", "a.py"] and w.files == ["a.py", "b.py", "c.py", "d.py"]
    assert w.summary()["returns"] == 2 and w.summary()["stops"] == 8


def test_the_walk_from_vouched_ask_has_at_most_8_returns(path_walk, capsys):
    code = path_walk.main(["--json"])
    out = json.loads(capsys.readouterr().out)
    assert [w["outcome"] for w in out["walks"]] == ["answered", "refused"]
    assert code == 0 and out["worst_returns"] <= 8, out
    for w in out["walks"]:
        # the walk follows the path's rooms: the front, L2, the ending
        assert {"answer/front.py", "answer/scoring.py", "answer/outcomes.py"} <= set(w["visits"]), w["visits"]
