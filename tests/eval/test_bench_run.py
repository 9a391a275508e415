"""`vouched bench run`: condition files for any benchmark command, checked before and after running."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from vouched.cli import app
from vouched.errors import BenchInputError, exit_code
from vouched.bench.run import (
    RunCondition, argv_of, bench_run_command, check_run, load_any_condition, read_figures, verify_pins,
)

REPO = Path(__file__).resolve().parents[2]
CONDITIONS = sorted((REPO / "benchmarks" / "conditions").glob("*.yaml"))
runner = CliRunner()


def cond(**over) -> RunCondition:
    raw = {"name": "t", "command": "python -c pass", "figures": {"x": {"regex": r"x = ([0-9.]+)"}}}
    raw.update(over)
    return RunCondition.model_validate(raw)


def statuses(checks) -> list[str]:
    return [c["status"] for c in checks]


# -- reading figures (pure) ------------------------------------------------------------------------
def test_figures_come_from_json_paths_or_a_regex_group():
    figs = cond(figures={"far": {"json": "impossible.false_answer_rate"}, "n": {"json": "rows.1.n"},
                         "us": {"regex": r"mean ([0-9.,]+) µs"}}).figures
    out = json.dumps({"impossible": {"false_answer_rate": 0.838}, "rows": [{"n": 1}, {"n": 7}]})
    assert read_figures(figs, out, "mean 1,046.5 µs") == {"far": 0.838, "n": 7.0, "us": 1046.5}
    assert read_figures(figs, "not json", "") == {"far": None, "n": None, "us": None}
    # progress lines before the JSON object do not hide it
    assert read_figures({"far": figs["far"]}, "warming up\n" + out)["far"] == 0.838


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False).map(lambda v: round(v, 3)))
def test_a_printed_number_reads_back(value):
    figs = cond().figures
    assert read_figures(figs, f"x = {value}\n")["x"] == pytest.approx(value)


# -- checks (pure) ---------------------------------------------------------------------------------
def test_status_targets_and_measured_tolerance():
    c = cond(figures={"x": {"regex": "x=([0-9.]+)"}, "y": {"regex": "y=([0-9.]+)"}},
             targets=[{"figure": "x", "max": 50}], measured={"y": 0.80, "x": 40}, tolerance={"y": 0.01})
    assert statuses(check_run(c, 0, {"x": 45.0, "y": 0.805})) == ["pass", "pass", "pass"]
    assert statuses(check_run(c, 1, {"x": 45.0, "y": 0.805}))[0] == "fail"  # another exit status
    assert statuses(check_run(c, 0, {"x": 51.0, "y": 0.805})) == ["pass", "fail", "pass"]
    # drift either way past the tolerance fails; x has no tolerance (a latency): never pinned
    assert statuses(check_run(c, 0, {"x": 10.0, "y": 0.83})) == ["pass", "pass", "fail"]
    assert statuses(check_run(c, 0, {"x": 10.0, "y": 0.77})) == ["pass", "pass", "fail"]
    # a figure missing from the output is a failure, not a silent pass
    assert "fail" in statuses(check_run(c, 0, {"x": None, "y": 0.8}))


def test_a_known_miss_does_not_fail_but_is_reported():
    c = cond(targets=[{"figure": "x", "min": 0.70, "expect": "fail"}], expect_status=1)
    assert statuses(check_run(c, 1, {"x": 0.58})) == ["pass", "known_miss"]
    assert statuses(check_run(c, 1, {"x": 0.71})) == ["pass", "fixed"]


def test_condition_validation():
    with pytest.raises(ValueError, match="either"):
        cond(figures={"x": {"regex": "(1)", "json": "a"}})
    with pytest.raises(ValueError, match="no group"):
        cond(figures={"x": {"regex": "x"}})
    with pytest.raises(ValueError, match="not in `figures`"):
        cond(targets=[{"figure": "nope", "max": 1}])
    with pytest.raises(ValueError, match="tolerance without a measured"):
        cond(tolerance={"x": 0.1})
    with pytest.raises(ValueError, match="min or max"):
        cond(targets=[{"figure": "x"}])
    with pytest.raises(ValueError):
        cond(surprise=1)


def test_commands_run_this_checkout():
    assert argv_of("vouched bench verify --json")[:3] == [sys.executable, "-m", "vouched.cli"]
    assert argv_of(".venv/bin/python benchmarks/gate.py --runs 3") == [sys.executable, "benchmarks/gate.py", "--runs", "3"]
    with pytest.raises(BenchInputError):
        argv_of("  ")


# -- files and runs --------------------------------------------------------------------------------
def _write(tmp_path: Path, raw: dict) -> Path:
    p = tmp_path / f"{raw['name']}.yaml"
    p.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return p


def test_pins_are_checked_before_the_command_runs(tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("one\n", encoding="utf-8")
    good = hashlib.sha256(b"one\n").hexdigest()
    marker = tmp_path / "ran"
    raw = {"name": "pinned", "command": f"python -c \"open({str(marker)!r}, 'w').write('x'); print('x = 1')\"",
           "inputs": [{"path": str(data), "sha256": good}], "figures": {"x": {"regex": r"x = (\d+)"}},
           "targets": [{"figure": "x", "min": 1}]}
    assert verify_pins(cond(inputs=raw["inputs"]).inputs, tmp_path) == []
    assert bench_run_command([_write(tmp_path, raw)]) == 0 and marker.exists()
    marker.unlink()
    data.write_text("two\n", encoding="utf-8")
    with pytest.raises(BenchInputError, match="sha256") as e:
        bench_run_command([_write(tmp_path, raw)])
    assert exit_code(e.value) == 2 and not marker.exists()


def test_a_miss_exits_1_and_json_reports_every_check(tmp_path, capsys):
    raw = {"name": "slow", "command": "python -c \"print('x = 80')\"", "figures": {"x": {"regex": r"x = (\d+)"}},
           "targets": [{"figure": "x", "max": 50}], "measured_on": {"runs": 3, "date": "2026-12-01"}}
    assert bench_run_command([_write(tmp_path, raw)], as_json=True) == 1
    report = json.loads(capsys.readouterr().out)
    c = report["conditions"][0]
    assert report["passed"] is False and c["figures"] == {"x": 80.0} and c["runs"] == 3
    assert {"cpu", "cores", "load_avg_1m"} <= set(c["machine"])
    assert [x["status"] for x in c["checks"]] == ["pass", "fail"]


def test_cli_bench_run_exit_codes(tmp_path):
    ok = _write(tmp_path, {"name": "ok", "command": "python -c \"print('x = 1')\"",
                           "figures": {"x": {"regex": r"x = (\d+)"}}, "targets": [{"figure": "x", "max": 5}]})
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncommand: x\n", encoding="utf-8")
    assert runner.invoke(app, ["bench", "run", str(ok)]).exit_code == 0
    r = runner.invoke(app, ["bench", "run", str(ok), str(bad)])
    assert r.exit_code == 2 and "figures" in r.output  # nothing runs when one file is invalid
    assert runner.invoke(app, ["bench", "run", str(tmp_path / "missing.yaml")]).exit_code == 2


@pytest.mark.parametrize("path", CONDITIONS, ids=lambda p: p.name)
def test_repo_condition_files_are_valid(path):
    kind, c = load_any_condition(path)
    assert kind == "run" and c.command and c.figures and c.measured_on.get("date")
    assert c.targets or c.tolerance, f"{path.name} checks nothing"
    assert "runs" in c.measured_on and "machine" in c.measured_on


def test_every_retrieval_condition_loads_through_bench_run():
    for path in sorted((REPO / "benchmarks" / "retrieval").glob("*.yaml")):
        assert load_any_condition(path)[0] == "retrieval"
