"""Every benchmark script teaches with --help: argparse's usage, exit 0, nothing run.

A benchmark that reads its command line by hand ran its workload (or crashed on int('--help'))
instead; a '%' in a help string made argparse itself raise.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


def test_there_are_benchmarks():
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_help(script: Path):
    res = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "usage:" in res.stdout.lower() and len(res.stdout) > 100
