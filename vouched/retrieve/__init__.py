"""Retrieval: hybrid search, weighted RRF fusion, bounded evidence scores."""

from vouched.retrieve.evidence import clip_cosine, coverage, evidence
from vouched.retrieve.fusion import fused_order, rrf
from vouched.retrieve.hybrid import MODES, HybridRetriever

__all__ = ["MODES", "HybridRetriever", "clip_cosine", "coverage", "evidence", "fused_order", "rrf"]
