"""Every benchmark: condition files and `vouched bench run`, the retrieval, abstention, verify,
fabricated and scale benches behind `vouched bench …`, and the measurement scripts
(gate, l1, path_walk, pg_*, …), each runnable as `python -m vouched.bench.<name>`;
`benchmarks/<name>.py` are shims that call the same `main`.

`vouched bench retrieval` calls `cli.bench_retrieval_command`. The names below are imported on
first use, so `python -m vouched.bench.gate` does not load the retrieval bench.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "check_targets": "vouched.bench.retrieval",
    "machine_info": "vouched.bench.retrieval",
    "run_retrieval_bench": "vouched.bench.retrieval",
    "Condition": "vouched.bench.conditions",
    "load_condition": "vouched.bench.conditions",
    "verify_inputs": "vouched.bench.conditions",
}

__all__ = ["Condition", "check_targets", "load_condition", "machine_info", "run_retrieval_bench", "verify_inputs"]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'vouched.bench' has no attribute {name!r}")
