"""Injection detector benchmark: adversarial set, SciFact/SQuAD 2.0/XQuAD false flags, speed.

    .venv/bin/python benchmarks/injection.py [--bench-dir ../shared/benchmarks] [--json]

Exits 1 when a target is missed (see vouched.eval.injection_bench).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vouched.eval.injection_bench import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
