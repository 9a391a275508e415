"""The commands a reader runs after ingest — ask, eval, calibrate, trace(s), feedback, config —
invoked as the CLI runs them, with their exit codes from the one table (vouched.errors)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.helpers import copy_example_hashing
from vouched.cli import app

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())  # rich wraps long messages at the terminal width


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The portfolio example on the hashing stand-in, ingested once for the module."""
    toml = copy_example_hashing("portfolio", tmp_path_factory.mktemp("cli") / "portfolio")
    r = runner.invoke(app, ["ingest", "-c", str(toml)])
    assert r.exit_code == 0, r.output
    return toml


def _ask(site, question: str, *extra: str) -> dict:
    r = runner.invoke(app, ["ask", question, "-c", str(site), "--json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout[r.stdout.index("{"):])


def test_ask_refuses_at_l1_in_the_readers_language(site):
    a = _ask(site, "¿Cuánto cobra por una auditoría de búsqueda?")
    assert a["outcome"] == "refused" and a["layer"] == "L1" and a["category"] == "fees"
    assert a["lang"] == "es" and a["sentences"] == []


def test_ask_answers_with_cited_sources_and_plain_output(site):
    a = _ask(site, "Which database did the Tessera Health search service run on?")
    assert a["outcome"] == "answered" and a["sentences"] and a["sources"]
    assert all(s["number"] >= 1 for s in a["sources"])
    r = runner.invoke(app, ["ask", "Which database did the Tessera Health search service run on?", "-c", str(site)])
    assert r.exit_code == 0 and "Sources" in r.output and "answered · trace" in r.output


def test_ask_follow_up_is_read_with_the_previous_turn(site):
    a = _ask(site, "and how much would that cost me?", "--previous-question", "Tell me about the Tessera project.")
    assert a["outcome"] == "refused" and a["layer"] == "L1"


def test_ask_bad_config_and_bad_date_exit_2(site, tmp_path):
    bad = tmp_path / "vouched.toml"
    bad.write_text("[answer]\nprovder = 'openai'\n", encoding="utf-8")
    r = runner.invoke(app, ["ask", "anything", "-c", str(bad)])
    assert r.exit_code == 2 and "provder" in _flat(r.output)
    r = runner.invoke(app, ["ask", "anything", "-c", str(site), "--as-of", "someday"])
    assert r.exit_code == 2


def test_traces_trace_and_feedback(site):
    tid = _ask(site, "What are her day rates?")["trace_id"]
    r = runner.invoke(app, ["traces", "-c", str(site), "--json", "--since", "1h"])
    assert r.exit_code == 0, r.output
    assert tid in {row["id"] for row in json.loads(r.stdout)}
    r = runner.invoke(app, ["trace", tid[:10], "-c", str(site), "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["category"] == "fees"
    r = runner.invoke(app, ["trace", tid[:10], "-c", str(site)])
    assert r.exit_code == 0 and "REFUSED (L1" in r.output
    r = runner.invoke(app, ["feedback", tid[:10], "--not-useful", "-m", "asked about a workshop", "-c", str(site)])
    assert r.exit_code == 0 and "not useful" in r.output
    r = runner.invoke(app, ["trace", tid, "-c", str(site), "--json"])
    assert json.loads(r.stdout)["feedback"][-1]["comment"] == "asked about a workshop"


def test_trace_errors_exit_1_and_2(site):
    r = runner.invoke(app, ["trace", "ffffffffff", "-c", str(site)])
    assert r.exit_code == 1 and "no trace" in _flat(r.output)
    r = runner.invoke(app, ["feedback", "ffffffffff", "--useful", "-c", str(site)])
    assert r.exit_code == 1
    r = runner.invoke(app, ["traces", "--since", "last tuesday", "-c", str(site)])
    assert r.exit_code == 2 and "--since" in _flat(r.output)


def test_eval_a_golden_set_of_our_own(site, tmp_path):
    golden = tmp_path / "golden.jsonl"
    lines = [
        {"id": "rates", "lang": "en", "question": "How much does she charge for a day of consulting?",
         "expect": {"kind": "refuse_pattern", "category": "fees"}},
        {"id": "start", "lang": "en", "question": "When could she begin a new contract?",
         "expect": {"kind": "refuse_pattern", "category": "availability"}},
    ]
    golden.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    r = runner.invoke(app, ["eval", str(golden), "-c", str(site), "--json"])
    data = json.loads(r.stdout[r.stdout.index("{"):])
    assert data["cases"] == 2 and data["refusal"]["pattern"]["expected"] == 2
    assert r.exit_code == (0 if data["gates"]["ok"] else 1)
    assert data["refusal"]["pattern"]["recall"] == 1.0
    r = runner.invoke(app, ["eval", str(tmp_path / "missing.jsonl"), "-c", str(site)])
    assert r.exit_code == 2 and "does not exist" in _flat(r.output)


def test_calibrate_input_errors_exit_2(site, tmp_path):
    golden = tmp_path / "only-answers.jsonl"
    golden.write_text(json.dumps({"id": "a", "lang": "en", "question": "What did she build for Tessera Health?",
                                  "expect": {"kind": "answer", "relevant": ["en/projects/multilingual-search"]}}) + "\n",
                      encoding="utf-8")
    r = runner.invoke(app, ["calibrate", str(golden), "-c", str(site)])
    assert r.exit_code == 2 and "refuse_no_evidence" in _flat(r.output)
    golden.write_text(json.dumps({"id": "a", "lang": "en", "question": "x", "expect": "answer"}) + "\n", encoding="utf-8")
    r = runner.invoke(app, ["calibrate", str(golden), "-c", str(site)])
    assert r.exit_code == 2 and "needs `relevant`" in _flat(r.output)


def test_calibrate_chooses_a_threshold_without_writing(site, tmp_path):
    before = site.read_bytes()
    r = runner.invoke(app, ["calibrate", str(site.parent / "golden.jsonl"), "-c", str(site),
                            "--plot", str(tmp_path / "c.svg")])
    assert r.exit_code in (0, 1), r.output  # 1: no value stops every must-refuse case on the hashing stand-in
    assert "answerable" in r.output and (tmp_path / "c.svg").exists()
    assert site.read_bytes() == before  # nothing written without --write


def test_config_prints_the_effective_config_and_its_schema(site, tmp_path):
    r = runner.invoke(app, ["config", "-c", str(site)])
    assert r.exit_code == 0
    cfg = json.loads(r.stdout)
    assert cfg["embedding"]["model"] == "hashing" and cfg["retrieval"]["top_k"] >= 1
    r = runner.invoke(app, ["config", "--schema"])
    assert r.exit_code == 0 and "properties" in json.loads(r.stdout)
    bad = tmp_path / "vouched.toml"
    bad.write_text("languages = ['xx']\n", encoding="utf-8")
    r = runner.invoke(app, ["config", "-c", str(bad)])
    assert r.exit_code == 2 and "xx" in _flat(r.output)
