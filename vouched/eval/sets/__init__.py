"""Evaluation sets shipped with vouched (data only)."""
