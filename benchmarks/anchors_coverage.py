"""Shim: the code is vouched/bench/anchors_coverage.py (`python -m vouched.bench.anchors_coverage`, same options and output)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vouched.bench.anchors_coverage import main

if __name__ == "__main__":
    sys.exit(main())
