"""vouched.bench.fabricated: typed answers, replacements that no source has, and the command."""

from __future__ import annotations

import io
import json
import random

from vouched.bench.fabricated import (
    _fold,
    answer_kind,
    bench_fabricated_command,
    build_cases,
    gate_verdict,
)

ARTICLE = {"title": "Quillmate", "paragraphs": [
    {"context": "Quillmate was founded in Porto in 2019 by Ana Moreira. It employs 42 people.",
     "qas": [{"id": "q1", "question": "Where?", "answers": [{"text": "Porto", "answer_start": 25}]},
             {"id": "q2", "question": "When?", "answers": [{"text": "2019", "answer_start": 34}]},
             {"id": "q3", "question": "What?", "answers": [{"text": "founded", "answer_start": 14}]},
             {"id": "q4", "question": "Impossible?", "is_impossible": True, "answers": []}]},
    {"context": "Its second office opened in Lisbon in 2021, led by Rui Tavares. Revenue reached 7 million.",
     "qas": [{"id": "q5", "question": "Who?", "answers": [{"text": "Rui Tavares", "answer_start": 51}]}]},
]}


def test_answer_kind() -> None:
    assert answer_kind("2019") == "number" and answer_kind("March 1990") == "number"
    assert answer_kind("Porto") == "name" and answer_kind("Bank of England") == "name"
    assert answer_kind("the old harbour") is None


def test_cases_swap_in_a_span_the_paragraph_lacks() -> None:
    cases, skipped, questions = build_cases([ARTICLE], "t", "en", random.Random(1))
    assert questions == 4 and skipped == {"answer is neither a number nor a name": 1}
    by_id = {c.qid: c for c in cases}
    assert set(by_id) == {"q1", "q2", "q5"}
    for c in cases:
        assert _fold(c.replacement) not in _fold(c.context) and c.replacement != c.answer
        assert c.right.endswith("[1].") and c.fabricated.endswith("[1].")
        assert c.right.replace(c.answer, c.replacement, 1) == c.fabricated
        assert answer_kind(c.replacement) == c.kind
    assert by_id["q1"].replacement in ("Lisbon", "Rui Tavares", "Revenue") or by_id["q1"].replacement
    held, rule, _ = gate_verdict(by_id["q1"].fabricated, by_id["q1"].context, "en")
    assert held and rule == "unsupported_name"
    assert gate_verdict(by_id["q1"].right, by_id["q1"].context, "en") == (False, None, None)
    held, rule, _ = gate_verdict(by_id["q2"].fabricated, by_id["q2"].context, "en")
    assert held and rule == "unsupported_value"


def test_command(tmp_path) -> None:
    (tmp_path / "squad2-dev").mkdir()
    (tmp_path / "xquad").mkdir()
    for rel in ("squad2-dev/dev-v2.0.json", "xquad/xquad.en.json", "xquad/xquad.es.json"):
        (tmp_path / rel).write_text(json.dumps({"data": [ARTICLE]}), encoding="utf-8")
    out = io.StringIO()
    assert bench_fabricated_command(tmp_path, sample=10, as_json=True, out=out) == 0
    report = json.loads(out.getvalue())
    assert report["passed"] and all(s["fabricated_held"] == 1.0 and s["right_held"] == 0.0 for s in report["sets"])
    (tmp_path / "xquad/xquad.es.json").unlink()
    assert bench_fabricated_command(tmp_path, out=io.StringIO()) == 2
