"""L1 paraphrase benchmark: recall per category x language and benign refusals (issue 15.3).

    .venv/bin/python benchmarks/l1_paraphrase.py [--split dev|holdout|holdout2|holdout3|all] [--summary] [--set FILE] [--json]

Exits 1 when a target is missed (see vouched.eval.l1_paraphrase).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vouched.eval.l1_paraphrase import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
