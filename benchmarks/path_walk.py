"""Shim: the code is vouched/bench/path_walk.py (`python -m vouched.bench.path_walk`, same options and output)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vouched.bench.path_walk import main

if __name__ == "__main__":
    sys.exit(main())
