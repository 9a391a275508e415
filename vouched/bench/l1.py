"""L1 latency benchmark: match_refusal over every question in the L1 tests, N runs.

    .venv/bin/python benchmarks/l1.py [--runs N] [--budget-us 200]

Loads the ten built-in packs once (load time is reported, not counted), then times each
call of ``match_refusal`` (subject names configured, as in production) with
``time.perf_counter_ns``. Prints the machine, the number of questions and runs, the mean
and the p95 in microseconds per question, and exits 1 if the mean is at or over the
budget (DESIGN/issue: L1 must cost under 0.2 ms per question on average).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "guard" / "test_refusal_cases.py"


def _cases():
    spec = importlib.util.spec_from_file_location("l1_cases", CASES)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="passes over the question set (default 20)")
    ap.add_argument("--budget-us", type=float, default=200.0, help="fail when the mean reaches this (default 200)")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from vouched.guard.packs import load_packs
    from vouched.guard.refusal import match_refusal

    cases = _cases()
    questions = cases.all_questions()
    names = cases.NAMES

    t0 = time.perf_counter()
    packs = load_packs()
    load_s = time.perf_counter() - t0
    for q in questions:  # warm-up: first compiles of the name regex, lazy tables
        match_refusal(q, packs, subject_names=names, pronoun="she")

    samples: list[float] = []
    refused = 0
    clock = time.perf_counter_ns
    for _ in range(args.runs):
        for q in questions:
            start = clock()
            hit = match_refusal(q, packs, subject_names=names, pronoun="she")
            samples.append((clock() - start) / 1000.0)
            refused += hit is not None
    mean = statistics.fmean(samples)
    p95 = statistics.quantiles(samples, n=20)[-1]

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"machine   : {_cpu()} ({os.cpu_count()} CPUs), {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}, load avg {load[0]:.2f}")
    print(f"packs     : {len(packs.by_lang)} languages, {len(packs.rules)} refusal rules, loaded in {load_s:.2f} s (not timed)")
    print(f"questions : {len(questions)} x {args.runs} runs = {len(samples)} calls ({refused // args.runs} refused per run)")
    print(f"mean      : {mean:.1f} us/question")
    print(f"p95       : {p95:.1f} us/question")
    print(f"max       : {max(samples):.1f} us")
    ok = mean < args.budget_us
    print(f"budget    : mean < {args.budget_us:.0f} us -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
