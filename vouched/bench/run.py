"""`vouched bench run FILE…`: every reported number is a condition file; this runs them.

A condition file (YAML, under `benchmarks/conditions/`) names the exact command that produces
a benchmark's figures, the sha256 of every input file, how to read each figure from the
command's output, the targets, the figures a real run measured (with their tolerance), the
exit status the command is expected to end with, and the machine, date and number of runs of
that measurement. Inputs are checked before the command starts: a changed file is an input
error (exit 2), never a changed score. The retrieval conditions (`benchmarks/retrieval/*.yaml`,
vouched.bench.conditions) are condition files too; `bench run` runs them through
`vouched bench retrieval --condition FILE`.

Schema (unknown keys rejected):

    name: gate
    description: ...
    command: .venv/bin/python benchmarks/gate.py --runs 15   # from the repository root;
             # `vouched …` runs this checkout's CLI, `.venv/bin/python` this interpreter
    setup: [vouched ingest -c examples/portfolio/vouched.toml]  # run first; each must exit 0
    inputs: [{path: ../shared/benchmarks/scifact/corpus.jsonl, sha256: ..., bytes: 8106566}]
    figures:                               # how each figure is read from the output
      mean_us: {regex: 'mean ([0-9.]+) µs', unit: µs}  # first group, stdout then stderr
      answered: {json: impossible.shares.answered}    # a dotted path into stdout's JSON
    targets:                               # every one must hold, unless expect: fail
      - {figure: mean_us, max: 50}
      - {figure: balanced_accuracy, min: 0.70, expect: fail}   # a known miss, said so
    measured: {answered: 0.838}            # from a real run (never typed from memory)
    tolerance: {answered: 0.005}           # |figure - measured| allowed; figures without
                                           # a tolerance (latencies) are reported, not pinned
    expect_status: 0                       # the command's own exit status
    measured_on: {machine: ..., date: ..., load: ..., runs: 15}
    timeout_s: 3600

Exit codes: 0 every condition holds; 1 a target missed, a measured figure drifted past its
tolerance, a figure could not be read, or the command ended with another status; 2 a
condition file or an input file that cannot be used (vouched.errors.BenchInputError).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vouched.eval.datasets import file_sha256
from vouched.errors import EXIT_NO, EXIT_OK, BenchInputError

__all__ = [
    "Figure", "InputPin", "RunCondition", "RunTarget", "bench_run_command", "check_run", "load_any_condition",
    "read_figures", "verify_pins",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Figure(_Strict):
    json_path: str | None = Field(default=None, alias="json")
    regex: str | None = None
    unit: str = ""

    @model_validator(mode="after")
    def _one_source(self) -> "Figure":
        if (self.json_path is None) == (self.regex is None):
            raise ValueError("a figure is read either by `json` (a dotted path) or by `regex` (one group)")
        if self.regex is not None:
            if re.compile(self.regex).groups < 1:
                raise ValueError(f"regex {self.regex!r} has no group to read the figure from")
        return self


class RunTarget(_Strict):
    figure: str
    min: float | None = None
    max: float | None = None
    expect: Literal["pass", "fail"] = "pass"

    @model_validator(mode="after")
    def _has_a_bound(self) -> "RunTarget":
        if self.min is None and self.max is None:
            raise ValueError("a target needs min or max")
        return self

    def describe(self) -> str:
        bounds = [f">= {self.min:g}" if self.min is not None else "", f"<= {self.max:g}" if self.max is not None else ""]
        return f"{self.figure} " + ", ".join(b for b in bounds if b)

    def holds(self, value: float) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


class InputPin(_Strict):
    path: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int | None = None


class RunCondition(_Strict):
    name: str
    description: str = ""
    command: str
    setup: tuple[str, ...] = ()
    inputs: tuple[InputPin, ...] = ()
    figures: dict[str, Figure]
    targets: tuple[RunTarget, ...] = ()
    measured: dict[str, float] = {}
    tolerance: dict[str, float] = {}
    expect_status: int = 0
    measured_on: dict[str, Any] = {}
    timeout_s: float = Field(default=3600, gt=0)

    @model_validator(mode="after")
    def _names_known_figures(self) -> "RunCondition":
        named = [t.figure for t in self.targets] + list(self.measured) + list(self.tolerance)
        unknown = sorted(set(named) - set(self.figures))
        if unknown:
            raise ValueError(f"targets/measured/tolerance name figures not in `figures`: {', '.join(unknown)}")
        loose = sorted(set(self.tolerance) - set(self.measured))
        if loose:
            raise ValueError(f"a tolerance without a measured value: {', '.join(loose)}")
        return self


# -- reading (pure) --------------------------------------------------------------------------------
def _dig(data: Any, path: str) -> Any:
    for key in path.split("."):
        if isinstance(data, Mapping) and key in data:
            data = data[key]
        elif isinstance(data, list) and key.lstrip("-").isdigit() and -len(data) <= int(key) < len(data):
            data = data[int(key)]
        else:
            return None
    return data


def _json_of(stdout: str) -> Any:
    """The JSON object the command printed: all of stdout, else its last line that parses."""
    try:
        return json.loads(stdout)
    except ValueError:
        pass
    start = stdout.find("{")
    if start >= 0:
        try:
            return json.loads(stdout[start:])
        except ValueError:
            pass
    for line in reversed(stdout.splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


def read_figures(figures: Mapping[str, Figure], stdout: str, stderr: str = "") -> dict[str, float | None]:
    """Each figure's value read from the output; None where it is not there (or not a number)."""
    data = _json_of(stdout) if any(f.json_path for f in figures.values()) else None
    out: dict[str, float | None] = {}
    for name, f in figures.items():
        raw: Any = None
        if f.json_path is not None:
            raw = _dig(data, f.json_path)
        else:
            m = re.search(f.regex or "", stdout) or re.search(f.regex or "", stderr)
            raw = m.group(1).replace(",", "") if m else None
        try:
            out[name] = None if raw is None else float(raw)
        except (TypeError, ValueError):
            out[name] = None
    return out


def check_run(cond: RunCondition, status: int, values: Mapping[str, float | None]) -> list[dict[str, Any]]:
    """Every check of one run: the exit status, each target, each pinned measured figure.

    A check has `status` pass, fail, known_miss (a target expected to fail that failed) or
    fixed (one expected to fail that now holds: the condition file should say so).
    """
    checks: list[dict[str, Any]] = [{
        "check": f"exit status {cond.expect_status}", "value": status,
        "status": "pass" if status == cond.expect_status else "fail"}]
    for name in cond.figures:
        if values.get(name) is None:
            checks.append({"check": f"{name} read from the output", "value": None, "status": "fail"})
    for t in cond.targets:
        v = values.get(t.figure)
        if v is None:
            continue
        ok = t.holds(v)
        if t.expect == "fail":
            st = "fixed" if ok else "known_miss"
        else:
            st = "pass" if ok else "fail"
        checks.append({"check": t.describe() + (" (expected to fail)" if t.expect == "fail" else ""), "value": v, "status": st})
    for name, want in cond.measured.items():
        tol = cond.tolerance.get(name)
        v = values.get(name)
        if tol is None or v is None:
            continue
        ok = abs(v - want) <= tol + 1e-12
        checks.append({"check": f"{name} = {want:g} ± {tol:g} (measured)", "value": v, "status": "pass" if ok else "fail"})
    return checks


def passed(checks: list[dict[str, Any]]) -> bool:
    return all(c["status"] != "fail" for c in checks)


# -- files -----------------------------------------------------------------------------------------
def repo_root() -> Path:
    from vouched.bench.cli import repo_root as root

    return root()


def load_any_condition(path: Path) -> tuple[str, Any]:
    """("run", RunCondition) or ("retrieval", Condition) for a condition file; BenchInputError otherwise."""
    from vouched.bench.conditions import load_condition, read_condition_yaml

    path = Path(path)
    raw = read_condition_yaml(path)
    if isinstance(raw, dict) and "dataset" in raw:
        return "retrieval", load_condition(path)
    try:
        return "run", RunCondition.model_validate(raw)
    except ValidationError as exc:
        raise BenchInputError(f"{path} is not a valid condition file:\n{exc}") from exc



def verify_pins(pins: tuple[InputPin, ...], root: Path) -> list[str]:
    """Differences between the input files and the checksums the condition pins (empty: same)."""
    problems = []
    for pin in pins:
        p = (root / pin.path).resolve()
        if not p.is_file():
            problems.append(f"{pin.path}: not found (resolved to {p})")
            continue
        got = file_sha256(p)
        if got != pin.sha256:
            problems.append(f"{pin.path}: sha256 {got} differs from the condition's {pin.sha256}")
    return problems


def argv_of(command: str) -> list[str]:
    """The command as argv: `vouched` is this checkout's CLI, a `python` this interpreter."""
    argv = shlex.split(command)
    if not argv:
        raise BenchInputError("an empty command")
    if argv[0] == "vouched":
        return [sys.executable, "-m", "vouched.cli", *argv[1:]]
    if Path(argv[0]).name.startswith("python"):
        return [sys.executable, *argv[1:]]
    return argv


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("COLUMNS", "200")  # rich tables in the output stay on one line each
    return env


# -- running ---------------------------------------------------------------------------------------
def run_condition(cond: RunCondition, root: Path, *, echo: bool = True) -> dict[str, Any]:
    """Verify the inputs, run setup and the command, read and check the figures: the report."""
    from vouched.bench.retrieval import machine_info

    problems = verify_pins(cond.inputs, root)
    if problems:
        raise BenchInputError(f"{cond.name}: the input differs from the condition file, so its figures do not apply:\n  "
                              + "\n  ".join(problems))
    env = _env(root)
    for step in cond.setup:
        p = subprocess.run(argv_of(step), cwd=root, env=env, capture_output=True, text=True, timeout=cond.timeout_s)
        if p.returncode != 0:
            raise BenchInputError(f"{cond.name}: setup `{step}` exited {p.returncode}:\n{(p.stderr or p.stdout)[-2000:]}")
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv_of(cond.command), cwd=root, env=env, capture_output=True, text=True, timeout=cond.timeout_s)
        status, stdout, stderr = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        status = -1
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr = f"timed out after {cond.timeout_s:g} s"
    seconds = time.perf_counter() - t0
    if echo and stdout and not any(f.json_path for f in cond.figures.values()):
        print(stdout.rstrip(), file=sys.stderr)
    values = read_figures(cond.figures, stdout, stderr)
    checks = check_run(cond, status, values)
    return {
        "condition": cond.name, "command": cond.command, "status": status, "seconds": round(seconds, 1),
        "started": started.isoformat(timespec="seconds"), "machine": machine_info(),
        "runs": cond.measured_on.get("runs"), "figures": values,
        "units": {n: f.unit for n, f in cond.figures.items() if f.unit},
        "measured": dict(cond.measured), "measured_on": dict(cond.measured_on),
        "checks": checks, "passed": passed(checks),
        "stderr_tail": stderr[-1500:] if status != cond.expect_status else "",
    }


def _run_retrieval(path: Path, as_json: bool) -> dict[str, Any]:
    from vouched.bench.cli import bench_retrieval_command
    from vouched.bench.conditions import load_condition

    cond = load_condition(path)
    dataset = (repo_root() / cond.dataset.path).resolve()
    m = re.search(r"--runs\s+(\d+)", cond.command)
    runs = int(m.group(1)) if m else 1  # as the condition's own command runs it
    with contextlib.redirect_stdout(sys.stderr if as_json else sys.stdout):  # stdout keeps one JSON object
        code = bench_retrieval_command(dataset, "all", False, runs, path)
    return {"condition": cond.name, "command": cond.command, "status": code, "passed": code == EXIT_OK, "runs": runs,
            "checks": [{"check": "vouched bench retrieval exit status 0", "value": code,
                        "status": "pass" if code == EXIT_OK else "fail"}]}


def print_run(report: Mapping[str, Any]) -> None:
    from rich.console import Console

    con = Console(stderr=True, highlight=False, width=160)
    m = report.get("machine", {})
    con.print(f"[bold]{report['condition']}[/bold]  `{report['command']}`  exit {report['status']}"
              + (f", {report['seconds']} s" if "seconds" in report else ""))
    if m:
        con.print(f"machine: {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB RAM, load {m['load_avg_1m']}, "
                  f"Python {m['python']}; runs: {report.get('runs') or 'as the command says'}; started {report.get('started')}")
    units = report.get("units", {})
    for name, v in report.get("figures", {}).items():
        was = report.get("measured", {}).get(name)
        con.print(f"  {name} = {'—' if v is None else f'{v:g}'}{units.get(name, '')}"
                  + (f"   (measured {was:g} on {report.get('measured_on', {}).get('date', '?')})" if was is not None else ""))
    styles = {"pass": "[green]PASS[/green]", "fail": "[bold red]FAIL[/bold red]", "known_miss": "[yellow]known miss[/yellow]",
              "fixed": "[cyan]now passes (update the condition file)[/cyan]"}
    for c in report["checks"]:
        v = c["value"]
        con.print(f"{styles[c['status']]} {c['check']}" + (f"  (got {v:g})" if isinstance(v, (int, float)) else ""))
    if report.get("stderr_tail"):
        con.print(f"[dim]{report['stderr_tail']}[/dim]")
    con.print("[green]holds[/green]" if report["passed"] else "[bold red]missed[/bold red]")
    con.print()


def bench_run_command(files: list[Path], *, as_json: bool = False, check_only: bool = False) -> int:
    """Run each condition file (or with check_only, validate it and its inputs); 0 when all hold, else 1.

    A file or input that cannot be used raises BenchInputError (exit 2) before anything runs.
    """
    if not files:
        raise BenchInputError("name at least one condition file, e.g. benchmarks/conditions/gate.yaml")
    root = repo_root()
    loaded = [(Path(f), *load_any_condition(Path(f))) for f in files]  # every file is valid before the first runs
    for path, kind, cond in loaded:
        if kind == "run":
            problems = verify_pins(cond.inputs, root)
            if problems:
                raise BenchInputError(f"{path}: the input differs from the condition file:\n  " + "\n  ".join(problems))
    if check_only:
        for path, kind, cond in loaded:
            print(f"ok {path} ({kind}: {cond.name})")
        return EXIT_OK
    reports = []
    for path, kind, cond in loaded:
        report = _run_retrieval(path, as_json) if kind == "retrieval" else run_condition(cond, root, echo=not as_json)
        reports.append(report)
        if not as_json:
            print_run(report)
    ok = all(r["passed"] for r in reports)
    if as_json:
        print(json.dumps({"passed": ok, "conditions": reports}, indent=2, ensure_ascii=False, default=str))
    return EXIT_OK if ok else EXIT_NO
