"""Evaluation: ranking metrics, benchmark datasets, golden sets, calibration.

The benchmarks themselves (the retrieval bench, condition files, `vouched bench …`) live in
`vouched.bench`; the pieces here are importable on their own (metrics are pure functions;
loaders read the published files).
"""

from vouched.eval.datasets import BenchDataset, BenchInputError, load_beir, load_dataset, load_xquad
from vouched.eval.metrics import evaluate, hit_at_k, ndcg_at_k, percentile, recall_at_k

__all__ = [
    "BenchDataset",
    "BenchInputError",
    "evaluate",
    "hit_at_k",
    "load_beir",
    "load_dataset",
    "load_xquad",
    "ndcg_at_k",
    "percentile",
    "recall_at_k",
]
