"""Shim: the code is vouched/bench/pg_agreement.py (`python -m vouched.bench.pg_agreement`, same options and output)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vouched.bench.pg_agreement import main

if __name__ == "__main__":
    sys.exit(main())
