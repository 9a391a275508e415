"""`vouched bench abstention`: the pure parts hardest, then a tiny SQuAD 2.0 run end to end."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.bench.abstention import (
    CATEGORIES, Result, bench_abstention_command, classify, contains_span, fixed_sample, normalize_answer,
    pick_threshold, run_abstention_bench, summarize, wh_word,
)
from vouched.eval.datasets import BenchInputError, SquadQuestion, load_squad2
from tests.helpers import SHARED, needs_shared


# (title, [(context, [(id, question, answers or None for impossible, plausible)])])
TINY = [
    ("Oxygen_element", [
        ("Oxygen is a chemical element with symbol O and atomic number 8. It was discovered by Carl Wilhelm Scheele "
         "in 1771. Oxygen makes up almost half of the Earth's crust by mass.",
         [("a1", "Who discovered oxygen?", ["Carl Wilhelm Scheele"], []),
          ("a2", "What is the atomic number of oxygen?", ["8"], []),
          ("i1", "Who discovered the atomic number of nitrogen?", None, ["Carl Wilhelm Scheele"])]),
    ]),
    ("Rhine", [
        ("The Rhine flows from the Swiss Alps to the North Sea through Germany and the Netherlands. "
         "Basel is the first large city on the Rhine, with a busy river port.",
         [("a3", "Which is the first large city on the Rhine?", ["Basel"], []),
          ("i2", "Which is the last large city on the Danube river?", None, ["Basel"]),
          ("i3", "When did the Rhine stop flowing into the North Sea?", None, [])]),
        ("Strasbourg lies on the west bank of the Rhine, opposite the German town of Kehl. "
         "The city hosts the European Parliament in a building opened in 1999.",
         [("a4", "When was the European Parliament building in Strasbourg opened?", ["1999"], []),
          ("i4", "When was the Kehl parliament building closed?", None, ["1999"])]),
    ]),
]


def _squad2_json(articles=TINY) -> dict:
    data = []
    for title, paras in articles:
        ps = []
        for ctx, qas in paras:
            rows = []
            for qid, q, answers, plausible in qas:
                row = {"question": q, "id": qid, "is_impossible": answers is None,
                       "answers": [{"text": a, "answer_start": ctx.find(a)} for a in answers or []]}
                if answers is None:
                    row["plausible_answers"] = [{"text": a, "answer_start": ctx.find(a)} for a in plausible]
                rows.append(row)
            ps.append({"context": ctx, "qas": rows})
        data.append({"title": title, "paragraphs": ps})
    return {"version": "v2.0", "data": data}


@pytest.fixture
def squad_dir(tmp_path) -> Path:
    d = tmp_path / "tinysquad2"
    d.mkdir()
    (d / "dev-v2.0.json").write_text(json.dumps(_squad2_json()), encoding="utf-8")
    return d


@pytest.fixture
def hashing(tmp_path):
    from vouched.embed import make_embedder

    return make_embedder("hashing", str(tmp_path / "emb.sqlite"))


# -- loader -----------------------------------------------------------------------------------------
def test_load_squad2_one_document_per_paragraph(squad_dir):
    s = load_squad2(squad_dir)
    assert s.dataset.stats == {"documents": 3, "queries": 8, "qrels": 8}
    assert [c.title for c in s.dataset.chunks] == ["Oxygen element", "Rhine", "Rhine"]
    q = {x.id: x for x in s.questions}
    assert q["a1"].answers == ("Carl Wilhelm Scheele",) and not q["a1"].is_impossible
    assert q["i1"].is_impossible and q["i1"].answers == () and q["i1"].plausible_answers == ("Carl Wilhelm Scheele",)
    assert q["a4"].doc_id == s.dataset.chunks[2].doc_id and s.dataset.qrels["a4"] == {q["a4"].doc_id: 1}


def test_load_squad2_rejects_an_impossible_question_with_answers(squad_dir):
    raw = _squad2_json()
    raw["data"][0]["paragraphs"][0]["qas"][0]["is_impossible"] = True
    (squad_dir / "dev-v2.0.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(BenchInputError, match="is_impossible"):
        load_squad2(squad_dir)


def test_load_squad2_missing_file_says_where(tmp_path):
    with pytest.raises(BenchInputError, match="dev-v2.0.json"):
        load_squad2(tmp_path)


@needs_shared("squad2-dev", "dev-v2.0.json")
def test_the_shared_squad2_dev_has_the_published_counts():
    s = load_squad2(SHARED / "squad2-dev")
    assert s.dataset.stats["documents"] == 1204 and len(s.questions) == 11873
    assert sum(q.is_impossible for q in s.questions) == 5945


# -- the fixed sample ---------------------------------------------------------------------------------
def _questions(n_ans: int, n_imp: int) -> list[SquadQuestion]:
    return ([SquadQuestion(f"a{i:04d}", f"q{i}", "d", False, ("x",)) for i in range(n_ans)]
            + [SquadQuestion(f"i{i:04d}", f"q{i}", "d", True) for i in range(n_imp)])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), cal=st.integers(0, 40), seed=st.integers(0, 10**6), shuffle_seed=st.integers(0, 99))
def test_fixed_sample_is_half_and_half_disjoint_and_independent_of_file_order(n, cal, seed, shuffle_seed):
    import random

    qs = _questions(45, 50)
    ev, held = fixed_sample(qs, n, seed, cal)
    assert len(ev) == n and len(held) == cal
    assert sum(q.is_impossible for q in ev) == n - n // 2
    assert sum(q.is_impossible for q in held) == cal - cal // 2
    assert not {q.id for q in ev} & {q.id for q in held}
    shuffled = qs[:]
    random.Random(shuffle_seed).shuffle(shuffled)
    assert fixed_sample(shuffled, n, seed, cal) == (ev, held)


def test_fixed_sample_depends_on_the_seed_and_refuses_too_much():
    qs = _questions(300, 300)
    assert fixed_sample(qs, 100, 1, 0)[0] != fixed_sample(qs, 100, 2, 0)[0]
    with pytest.raises(BenchInputError, match="lower --sample"):
        fixed_sample(qs, 500, 1, 200)
    with pytest.raises(BenchInputError):
        fixed_sample(qs, 1, 1, 0)


# -- answer spans ---------------------------------------------------------------------------------------
def test_normalize_answer_is_squads():
    assert normalize_answer("The  Norman conquest, of England!") == "norman conquest of england"
    assert normalize_answer("an apple a day") == "apple day"


words = st.text(alphabet=string.ascii_letters + "éüß0123456789", min_size=1, max_size=8)


@given(before=st.lists(words, max_size=6), span=st.lists(words, min_size=1, max_size=4), after=st.lists(words, max_size=6),
       punct=st.sampled_from(["", ",", ".", "!", "\""]))
def test_a_span_placed_in_a_text_is_found_whatever_the_case_and_punctuation(before, span, after, punct):
    text = " ".join([*before, " ".join(span).upper() + punct, *after])
    assert contains_span(text, ["x" * 30, " ".join(span)]) == bool(normalize_answer(" ".join(span)))


@given(text=st.lists(words, max_size=10))
def test_a_span_is_matched_as_whole_words_only(text):
    body = " ".join(text)
    # "zzq" + a word never equals a word of the text unless the text has it
    probe = "zzq" + (text[0] if text else "w")
    assert contains_span(body + " " + probe + "tail", [probe]) is False
    assert contains_span(body, []) is False


def test_an_article_only_span_never_matches():
    assert contains_span("the answer is here", ["The"]) is False


# -- classification and summary --------------------------------------------------------------------------
@pytest.mark.parametrize("outcome,layer,category,route,want", [
    ("answered", None, None, "retrieval", "answered"),
    ("refused", "L1", "fees", "refusal", "L1"),
    ("refused", "L2", "no_evidence", "retrieval", "L2"),
    ("refused", None, "no_answer", "records_summary", "L2"),  # a records summary instead of an L2 refusal
    ("held", "L4", "number_not_in_source", "retrieval", "held"),
    ("held", "L5", "first_person", "retrieval", "held"),
    ("refused", None, "no_answer", "retrieval", "no_answer"),
    ("records", None, None, "records", "other"),
    ("truncated", None, None, "retrieval", "other"),
])
def test_classify(outcome, layer, category, route, want):
    assert classify(outcome, layer, category, route) == want


@pytest.mark.parametrize("q,want", [
    ("When did Beyonce start becoming popular?", "when"), ("How many people live in Paris?", "how many"),
    ("In what city and state did Beyonce grow up?", "what"), ("The Normans were from which country?", "which"),
    ("How is oxygen made?", "how"), ("Name the river.", "other"),
])
def test_wh_word(q, want):
    assert wh_word(q) == want


def _r(qid, impossible, category, span=False, plausible=False, rule=None, wh="what"):
    return Result(qid, impossible, category, span, plausible, category == "answered", 0.5, rule, wh)


def test_summarize_counts_every_question_once_and_gives_the_headline_rates():
    rs = [_r("a1", False, "answered", span=True), _r("a2", False, "answered"), _r("a3", False, "L2"),
          _r("a4", False, "no_answer"), _r("i1", True, "answered", plausible=True, wh="when"), _r("i2", True, "held", rule="number"),
          _r("i3", True, "L2"), _r("i4", True, "no_answer")]
    s = summarize(rs)
    a, i = s["answerable"], s["impossible"]
    assert sum(a["counts"].values()) == 4 and sum(i["counts"].values()) == 4
    assert set(a["counts"]) == set(CATEGORIES)
    assert a["answer_rate"] == 0.5 and a["span_hit_of_answered"] == 0.5 and a["span_hit_of_all"] == 0.25
    assert i["false_answer_rate"] == 0.25 and i["plausible_span_in_answer"] == 1.0
    assert i["held_by_rule"] == {"number": 1}
    assert s["by_question_word"]["when"] == {"answerable": 0, "answered": 0, "span_hits": 0, "impossible": 1, "false_answers": 1}


# -- the threshold ------------------------------------------------------------------------------------------
def test_pick_threshold_stops_every_impossible_question_when_it_can():
    value, how = pick_threshold([0.8, 0.85, 0.9, 0.95], [0.5, 0.6], 0.05)
    assert 0.6 < value <= 0.8 and "stops every impossible" in how


def test_pick_threshold_falls_back_to_the_allowed_loss_when_the_kinds_overlap():
    answerable = [0.80 + i / 1000 for i in range(100)]
    impossible = [0.79 + i / 1000 for i in range(100)]
    value, how = pick_threshold(answerable, impossible, 0.05)
    assert sum(a < value for a in answerable) <= 5  # refuses at most 5% of answerable ones
    assert sum(a < value for a in answerable) == 5 and "no threshold stops" in how


# -- end to end, hashing embedder ---------------------------------------------------------------------------
def test_run_end_to_end_on_a_tiny_squad2(squad_dir, tmp_path, hashing):
    squad = load_squad2(squad_dir)
    report = run_abstention_bench(squad, work_dir=tmp_path / "work", sample=6, seed=3, calibration=2, embedder=hashing,
                                  embedder_name="hashing", progress=False)
    a, i = report["answerable"], report["impossible"]
    assert a["questions"] == 3 and i["questions"] == 3
    assert sum(a["counts"].values()) == 3 and sum(i["counts"].values()) == 3
    assert report["threshold"]["source"] == "calibration split" and report["threshold"]["calibration_questions"] == 2
    assert {r["id"] for r in report["results"]}.isdisjoint({"x"}) and len(report["results"]) == 6
    assert (tmp_path / "work" / "vouched.toml").is_file()
    # the deployment written is a real one: the CLI's `ask` can load it
    from vouched.config import load_config

    cfg = load_config(tmp_path / "work" / "vouched.toml")
    assert cfg.threshold.value == report["threshold"]["value"] and cfg.embedding.model == "hashing"


def test_a_given_threshold_answers_the_obvious_question_with_its_span(squad_dir, tmp_path, hashing):
    squad = load_squad2(squad_dir)
    report = run_abstention_bench(squad, work_dir=tmp_path / "w", sample=None, threshold=0.0, embedder=hashing,
                                  embedder_name="hashing", progress=False)
    by_id = {r["id"]: r for r in report["results"]}
    assert len(by_id) == 8 and report["threshold"]["source"] == "--threshold"
    assert by_id["a4"]["category"] == "answered" and by_id["a4"]["span_hit"] and by_id["a4"]["cited_own"]
    # threshold 1.0: L2 refuses exactly the questions whose evidence is below 1 (the answerable
    # ones here have every content word in their paragraph: keyword coverage 1.0), the rest
    # go on exactly as before
    strict = run_abstention_bench(squad, work_dir=tmp_path / "w", sample=None, threshold=1.0, embedder=hashing,
                                  embedder_name="hashing", progress=False)
    for r in strict["results"]:
        before = by_id[r["id"]]
        assert r["evidence"] == before["evidence"]
        assert r["category"] == ("L2" if before["evidence"] < 1.0 else before["category"])
    assert strict["impossible"]["counts"]["L2"] == 4 and strict["answerable"]["counts"]["answered"] == 4
    assert strict["store"]["reused"] is True  # the deployment's store is built once
    # the first pass embedded the sentences the generator scored; the second found them cached
    assert report["embedding"]["while_asking"] > 0 and strict["embedding"]["while_asking"] == 0
    assert strict["embedding"]["passages"] == 0 and strict["embedding"]["questions"]["embedded"] == 0


def test_all_without_a_threshold_is_bad_input(squad_dir, tmp_path, hashing):
    from vouched.errors import BenchInputError, exit_code

    with pytest.raises(BenchInputError, match="--threshold") as e:
        bench_abstention_command(squad_dir, all_questions=True, work_dir=tmp_path / "w", embedder=hashing,
                                 embedder_name="hashing", progress=False)
    assert exit_code(e.value) == 2


def test_the_command_prints_its_table_and_fails_over_budget(squad_dir, tmp_path, hashing, capsys):
    code = bench_abstention_command(squad_dir, sample=4, calibration=2, work_dir=tmp_path / "w", embedder=hashing,
                                    embedder_name="hashing", progress=False, budget_min=0.0, report_dir=tmp_path / "rep")
    out = capsys.readouterr().out
    assert code == 1 and "false_answer_rate" in out and "over the 0-minute budget" in out
    saved = json.loads((tmp_path / "rep" / "abstention.json").read_text(encoding="utf-8"))
    assert saved["budget"]["passed"] is False and len(saved["results"]) == 4
    code = bench_abstention_command(squad_dir, sample=4, calibration=2, work_dir=tmp_path / "w", embedder=hashing,
                                    embedder_name="hashing", progress=False, as_json=True)
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["budget"]["passed"] and "results" not in report


def test_cli_help_teaches():
    from typer.testing import CliRunner

    from vouched.cli import app

    res = CliRunner().invoke(app, ["bench", "abstention", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for word in ("SQuAD 2.0", "--threshold", "--sample", "--seed", "--all", "--budget-min", "held-out"):
        assert word in res.output
