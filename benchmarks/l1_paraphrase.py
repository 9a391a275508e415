"""Shim: the code is vouched/bench/l1_paraphrase.py (`python -m vouched.bench.l1_paraphrase`, same options and output)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vouched.bench.l1_paraphrase import main

if __name__ == "__main__":
    sys.exit(main())
