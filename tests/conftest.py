import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT.parent / "shared" / "benchmarks"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Tests never write the user's embedding cache."""
    monkeypatch.setenv("VOUCHED_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "embed-cache"))


@pytest.fixture(scope="session")
def bench_dir() -> Path:
    return BENCH
