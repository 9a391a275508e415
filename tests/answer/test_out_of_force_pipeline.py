"""L2's out-of-force check through the pipeline, on the runbook example (hashing embedder).

The ops tenant has a draft on-call policy that alone speaks of a "shadow" on-call engineer,
and a glossary (in force) that defines on-call. A question about the shadow role clears the
threshold on the glossary; the check refuses it, and names the draft in the trace.
"""

from __future__ import annotations

import pytest

from tests.helpers import copy_example_hashing
from vouched.answer import Assistant
from vouched.config import load_config
from vouched.engine import Engine

SHADOW = "What does a shadow on-call engineer do?"


@pytest.fixture(scope="module")
def cfg(tmp_path_factory):
    toml = copy_example_hashing("runbook", tmp_path_factory.mktemp("oof") / "runbook")
    c = load_config(toml)
    Engine(c).ingest()
    return c


def _ask(cfg, question, **kw):
    traces = []
    a = Assistant(cfg)
    a.pipeline.trace_sink = traces.append
    ans = a.ask(question, tenant="ops", **kw)
    return ans, traces[-1]


def test_a_question_only_a_draft_answers_is_refused(cfg):
    ans, trace = _ask(cfg, SHADOW)
    assert (ans.outcome, ans.layer, ans.category) == ("refused", "L2", "no_evidence")
    note = next(w for w in trace.warnings if "out of force" in w)
    assert "on-call-rotation-2026-draft" in note and "draft" in note
    assert trace.evidence >= trace.threshold  # it had cleared the threshold


def test_without_the_check_a_neighbour_answers(cfg):
    off = cfg.model_copy(update={"guard": cfg.guard.model_copy(update={"out_of_force_check": False})})
    ans, trace = _ask(off, SHADOW)
    assert ans.outcome == "answered"
    assert not any("out of force" in w for w in trace.warnings)


def test_a_multi_part_question_names_the_out_of_force_part_as_uncovered(cfg):
    ans, trace = _ask(cfg, "What does a shadow on-call engineer do, and what is a SEV1?")
    assert ans.outcome == "answered"
    assert ans.status == "insufficient_context"
    assert any("shadow" in u for u in ans.uncovered)
    assert any(w.startswith("part 1: L2 out of force") for w in trace.warnings)
