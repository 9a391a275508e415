"""The question's path through the code (vouched/bench/path_walk.py): at most 8 returns to a file
already left, for an answered and an L2-refused `vouched ask` (docs/architecture.md, "The walk")."""

from __future__ import annotations

import importlib
import json

import pytest


@pytest.fixture(scope="module")
def path_walk():
    return importlib.import_module("vouched.bench.path_walk")


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
