"""Guards on the path of a question: L1 refusal patterns, the records route, fixed texts.

Nothing is loaded at import time: pattern packs and texts are read on first use and cached.
"""

from vouched.guard.packs import Packs, load_packs
from vouched.guard.refusal import RefusalMatch, match_refusal
from vouched.guard.route import OverviewMatch, is_followup, match_overview, mentions_subject, resolve_ordinal
from vouched.guard.texts import TEXT_KEYS, fixed_text

__all__ = [
    "OverviewMatch",
    "Packs",
    "RefusalMatch",
    "TEXT_KEYS",
    "fixed_text",
    "is_followup",
    "load_packs",
    "match_overview",
    "match_refusal",
    "mentions_subject",
    "resolve_ordinal",
]
