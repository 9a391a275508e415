"""Shim: the code is vouched/bench/context_recall.py (`python -m vouched.bench.context_recall`, same options and output)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vouched.bench.context_recall import main

if __name__ == "__main__":
    sys.exit(main())
