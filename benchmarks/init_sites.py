"""Shim: the code is vouched/bench/init_sites.py (`python -m vouched.bench.init_sites`, same options and output)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vouched.bench.init_sites import main

if __name__ == "__main__":
    sys.exit(main())
