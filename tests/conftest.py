import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT.parent / "shared" / "benchmarks"


def pytest_configure(config):
    # Tests never read or write the user's embedding cache: each run starts cold, in a temp dir.
    os.environ["VOUCHED_CACHE_DIR"] = tempfile.mkdtemp(prefix="vouched-test-cache-")


@pytest.fixture(scope="session")
def bench_dir() -> Path:
    return BENCH
