"""Evaluation: ranking metrics, benchmark datasets, regression conditions, the retrieval bench.

`vouched bench retrieval` calls `cli_bench.bench_retrieval_command`; the pieces it uses are
importable on their own (metrics are pure functions; loaders read the published files).
"""

from vouched.eval.bench_retrieval import check_targets, machine_info, run_retrieval_bench
from vouched.eval.conditions import Condition, load_condition, verify_inputs
from vouched.eval.datasets import BenchDataset, BenchInputError, load_beir, load_dataset, load_xquad
from vouched.eval.metrics import evaluate, hit_at_k, ndcg_at_k, percentile, recall_at_k

__all__ = [
    "BenchDataset",
    "BenchInputError",
    "Condition",
    "check_targets",
    "evaluate",
    "hit_at_k",
    "load_beir",
    "load_condition",
    "load_dataset",
    "load_xquad",
    "machine_info",
    "ndcg_at_k",
    "percentile",
    "recall_at_k",
    "run_retrieval_bench",
    "verify_inputs",
]
