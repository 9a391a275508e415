"""vouched.eval.real_model: the question set, the figures from sentence verdicts and labels, the report, a scripted run.

No model and no network here: the end-to-end test drives the real pipeline with the scripted
provider over a hashing-embedder copy of the portfolio example.
"""

from __future__ import annotations

import collections
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import ROOT, copy_example_hashing
from vouched.eval.real_model import EXAMPLES, load_labels, load_set, main, pick, render_html, summarise

# --- the shipped question set ------------------------------------------------------------------------


def test_shipped_set_is_large_enough_and_multilingual():
    rows = load_set()
    by = collections.Counter(r["answerable"] for r in rows)
    assert by[True] >= 60 and by[False] >= 30
    langs = {r["lang"] for r in rows}
    assert {"en", "es", "fa", "pt", "fr", "de", "ar", "ru", "zh", "hi"} <= langs
    for ex in EXAMPLES:
        assert any(r["example"] == ex and r["answerable"] for r in rows)
        assert any(r["example"] == ex and not r["answerable"] for r in rows)
    for r in rows:
        if r["answerable"]:
            assert r.get("facts") and r.get("doc"), r["id"]
        if r["example"] == "runbook":
            assert r.get("tenant") in ("ops", "support"), r["id"]


def test_answerable_questions_point_at_pages_that_exist_and_hold_the_facts():
    """Every answerable question's page exists in its example, and each fact written in the
    page's language (digits compared as normalised text) is on that page."""
    from vouched.text import normalize

    pages = {}
    for ex in EXAMPLES:
        for p in (ROOT / "examples" / ex).rglob("*"):
            if p.suffix in (".md", ".html"):
                text = p.read_text("utf-8")
                for line in text.splitlines():
                    if line.startswith("id: "):
                        pages[(ex, line[4:].strip())] = normalize(text)
                        break
                else:
                    pages[(ex, "en/open-source")] = normalize(text)
    for r in load_set():
        if not r["answerable"]:
            continue
        page = pages.get((r["example"], r["doc"]))
        assert page is not None, (r["id"], r["doc"])
        # facts in Latin script are checked when the page is in a Latin-script language and
        # the question's language matches the page's (cross-language facts are in the page's words)
        found = [f for f in r["facts"] if normalize(f) in page]
        assert found, (r["id"], r["facts"])


def test_set_validation(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps({"id": "a", "example": "portfolio", "lang": "en", "question": "q"}) + "\n")
    with pytest.raises(ValueError, match="answerable"):
        load_set(p)
    row = {"id": "a", "example": "portfolio", "lang": "en", "question": "q", "answerable": True}
    p.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="twice"):
        load_set(p)
    p.write_text(json.dumps({**row, "example": "elsewhere"}) + "\n")
    with pytest.raises(ValueError, match="example"):
        load_set(p)


def test_pick_is_seeded_and_per_example():
    rows = load_set()
    a = pick(rows, ["portfolio", "runbook"], 5, 3)
    assert a == pick(rows, ["portfolio", "runbook"], 5, 3)
    c = collections.Counter((r["example"], r["answerable"]) for r in a)
    assert c == {("portfolio", True): 5, ("portfolio", False): 3, ("runbook", True): 5, ("runbook", False): 3}
    assert len(pick(rows, ["runbook"], None, None)) == sum(r["example"] == "runbook" for r in rows)


# --- the figures -----------------------------------------------------------------------------------------


def _row(qid, answerable, outcome, sentences, example="portfolio", layer=None, category=None):
    return {"id": qid, "example": example, "answerable": answerable, "outcome": outcome, "layer": layer,
            "category": category, "question": qid, "text": "", "seconds": 1.0, "usage": {"input_tokens": 1},
            "sentences": [{"text": t, "ok": ok, "rule": rule, "value": None, "cited": [1]} for t, ok, rule in sentences]}


ROWS = [
    _row("a1", True, "answered", [("It runs on PostgreSQL [1].", True, None), ("It has 2 000 rows [1].", True, None)]),
    _row("a2", True, "held", [("It began in 2021 [1].", True, None), ("It had 12000 pages [1].", False, "unsupported_value")],
         layer="L4", category="unsupported_value"),
    _row("a3", True, "held", [("It cost 40 euros [1].", False, "unsupported_value")], layer="L4", category="unsupported_value"),
    _row("u1", False, "refused", [], layer="L1", category="fees"),
    _row("u2", False, "refused", [("NO_ANSWER", False, "no_answer")], category="no_answer"),
    _row("u3", False, "answered", [("She has 3 patents [1].", True, None)], example="runbook"),
]


def test_summary_without_labels_counts_verdicts():
    s = summarise(ROWS)["all"]
    assert s["sentences"] == {"checked": 7, "released": 4, "held": 2, "held_by_rule": {"unsupported_value": 2}}
    assert s["labels"]["held_unlabelled"] == 2 and s["labels"]["false_hold_rate"] == 0.0
    assert s["labels"]["correct_sentences"] == 3  # released sentences of answerable questions
    assert s["unanswerable_refused"] == 2 and s["unanswerable_with_released_text"] == ["u3"]
    assert s["refused_by"] == {"gate:unsupported_value": 2, "L1:fees": 1, "NO_ANSWER": 1}


def test_labels_split_holds_into_false_holds_and_catches():
    labels = {("a2", "It had 12000 pages [1]."): "correct", ("a3", "It cost 40 euros [1]."): "unsupported",
              ("u3", "She has 3 patents [1]."): "unsupported"}
    s = summarise(ROWS, labels)
    al = s["all"]["labels"]
    assert al["false_holds"] == 1 and al["catches"] == 1 and al["held_unlabelled"] == 0
    assert al["correct_sentences"] == 4 and al["false_hold_rate"] == 0.25
    assert al["false_holds_by_rule"] == {"unsupported_value": 1}
    assert s["runbook"]["unanswerable_released_unsupported"] == 1
    assert set(s) == {"portfolio", "runbook", "all"}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.sampled_from([None, "correct", "unsupported"])), max_size=12))
def test_summary_invariants(spec):
    rows, labels = [], {}
    for i, (answerable, ok, lab) in enumerate(spec):
        text = f"Sentence {i} [1]."
        rows.append(_row(f"q{i}", answerable, "answered" if ok else "held", [(text, ok, None if ok else "unsupported_value")]))
        if lab:
            labels[(f"q{i}", text)] = lab
    s = summarise(rows, labels).get("all")
    if not rows:
        assert s is None
        return
    lab = s["labels"]
    assert lab["false_holds"] + lab["catches"] + lab["held_unlabelled"] == s["sentences"]["held"]
    assert s["sentences"]["released"] + s["sentences"]["held"] == s["sentences"]["checked"]
    if lab["false_hold_rate"] is not None:
        assert 0.0 <= lab["false_hold_rate"] <= 1.0


def test_labels_file(tmp_path):
    p = tmp_path / "l.jsonl"
    p.write_text(json.dumps({"id": "a", "sentence": " x [1]. ", "label": "correct"}) + "\n\n")
    assert load_labels(p) == {("a", "x [1]."): "correct"}
    p.write_text(json.dumps({"id": "a", "sentence": "x", "label": "maybe"}) + "\n")
    with pytest.raises(ValueError, match="label"):
        load_labels(p)
    assert load_labels(None) == {}


def test_html_escapes_and_keeps_rtl():
    rows = [_row("f1", True, "held", [("<script>alert(1)</script> ۱۲٬۰۰۰ صفحه [1].", False, "unsupported_value")])]
    rows[0]["question"] = "پاک‌نویس چند صفحه را تصحیح کرد؟"
    page = render_html({"meta": {"model": "m"}, "summary": summarise(rows), "rows": rows, "labels": []})
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert "dir=auto" in page and "پاک‌نویس" in page


# --- end to end, scripted ------------------------------------------------------------------------------


def test_scripted_run_writes_the_report(tmp_path):
    from vouched.config import load_config
    from vouched.engine import Engine
    from vouched.llm.scripted import ScriptedProvider

    toml = copy_example_hashing("portfolio", tmp_path / "examples" / "portfolio")
    Engine(load_config(toml)).ingest()
    qset = tmp_path / "set.jsonl"
    qs = [{"id": "p1", "example": "portfolio", "lang": "en", "question": "How many pages had the Nameh Archive Trust scanned?",
           "answerable": True, "facts": ["12,000"], "doc": "en/projects/persian-ocr"},
          {"id": "p2", "example": "portfolio", "lang": "en", "question": "What are her day rates?", "answerable": False}]
    qset.write_text("".join(json.dumps(q) + "\n" for q in qs))
    # the model writes "12000" for the page's "12,000" (one sentence), then a figure found nowhere
    provider = ScriptedProvider().queue([["The archive had scanned about 12000 pages [1]. ", "It took 99 weeks [1]."]])
    out = tmp_path / "report"
    assert main(["--set", str(qset), "--examples", "portfolio", "--config-dir", str(tmp_path / "examples"),
                 "--report", str(out), "--json"], providers={"portfolio": provider}) == 0
    report = json.loads((out / "real_model.json").read_text())
    rows = {r["id"]: r for r in report["rows"]}
    assert rows["p2"]["outcome"] == "refused" and rows["p2"]["layer"] == "L1"
    p1 = rows["p1"]
    if p1["outcome"] in ("answered", "held"):  # retrieval on the hashing embedder reached the model
        assert p1["sentences"][0]["ok"], p1["sentences"]  # "12000" ≡ "12,000"
        held = [x for x in p1["sentences"] if not x["ok"]]
        assert held and held[0]["rule"] == "unsupported_value" and held[0]["cited_text"]
    assert (out / "real_model.html").read_text().startswith("<!doctype html>")
    # rebuilt from the JSON with a label, no model
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "p1", "sentence": "It took 99 weeks", "label": "unsupported"}) + "\n")
    assert main(["--from-json", str(out / "real_model.json"), "--labels", str(labels), "--report", str(tmp_path / "r2"),
                 "--json"]) == 0
    again = json.loads((tmp_path / "r2" / "real_model.json").read_text())
    assert again["rows"] == report["rows"]
    if p1["outcome"] == "held":
        assert again["summary"]["all"]["labels"]["catches"] == 1


def test_marker_only_replies_are_empty_answers_not_released_text():
    rows = [_row("u9", False, "answered", [("[1]", True, None)]), _row("a9", True, "answered", [("[2] .", True, None)])]
    s = summarise(rows)["all"]
    assert s["sentences"]["released"] == 0 and s["unanswerable_refused"] == 1
    assert s["empty_answers"] == ["u9", "a9"]


# --- resuming a stopped run: only with the same prompt ---------------------------------------------------


def test_prompt_fingerprint_follows_the_prompt(monkeypatch):
    from vouched.answer import generate
    from vouched.eval.real_model import prompt_fingerprint
    from vouched.guard import prompt

    first = prompt_fingerprint()
    assert first == prompt_fingerprint() and len(first) == 12
    monkeypatch.setattr(prompt, "REMINDER_TEMPLATE", prompt.REMINDER_TEMPLATE + " ")
    assert prompt_fingerprint() != first  # the reminder after the question is part of the prompt
    monkeypatch.undo()
    monkeypatch.setattr(generate, "build_messages", lambda q, s, **k: [{"role": "user", "content": q}])
    assert prompt_fingerprint() != first  # so is whatever the answer path builds


def test_resumable_rows_keep_only_the_same_prompts_answers():
    from vouched.eval.real_model import resumable_rows

    prev = {"meta": {"prompt": "abc"}, "rows": [*ROWS, _row("e1", True, "error", [])]}
    qs = [{"id": i} for i in ("a1", "u2", "e1", "new")]
    kept = resumable_rows(prev, qs, "abc")
    assert [r["id"] for r in kept] == ["a1", "u2"]  # asked before, not an error, and wanted now
    for other in ({"meta": {"prompt": "xyz"}, "rows": ROWS}, {"meta": {}, "rows": ROWS}):
        with pytest.raises(ValueError, match="prompt"):
            resumable_rows(other, qs, "abc")


def test_resume_asks_only_the_rest(tmp_path):
    from vouched.config import load_config
    from vouched.engine import Engine
    from vouched.eval.real_model import prompt_fingerprint

    Engine(load_config(copy_example_hashing("portfolio", tmp_path / "examples" / "portfolio"))).ingest()

    qset = tmp_path / "set.jsonl"
    qs = [{"id": "p1", "example": "portfolio", "lang": "en", "question": "What are her day rates?", "answerable": False},
          {"id": "p2", "example": "portfolio", "lang": "en", "question": "What does she charge per hour?", "answerable": False}]
    qset.write_text("".join(json.dumps(q) + "\n" for q in qs))
    prev = tmp_path / "prev.json"
    kept = _row("p1", False, "refused", [], layer="L1", category="fees")
    prev.write_text(json.dumps({"meta": {"prompt": prompt_fingerprint()}, "rows": [kept]}))
    out = tmp_path / "r"
    argv = ["--set", str(qset), "--examples", "portfolio", "--config-dir", str(tmp_path / "examples"), "--base-url",
            "http://127.0.0.1:9/v1", "--report", str(out), "--json", "--resume", str(prev)]
    assert main(argv) == 0
    report = json.loads((out / "real_model.json").read_text())
    assert [r["id"] for r in report["rows"]] == ["p1", "p2"]
    assert report["rows"][0] == kept  # kept, not asked again
    assert report["rows"][1]["layer"] == "L1"  # asked: a fee question stops at L1, before any model call
    assert report["meta"]["resumed"] == "1" and report["meta"]["prompt"] == prompt_fingerprint()
    prev.write_text(json.dumps({"meta": {"prompt": "other"}, "rows": [kept]}))
    with pytest.raises(SystemExit):
        main(argv)
