"""vouched — a retrieval-augmented answer engine that would rather refuse than guess.

Nothing is loaded at import time: models, stores and clients are built lazily
by the objects that need them.
"""

from vouched.errors import ConfigError, IngestError, StoreError, EmbedderError, VouchedError
from vouched.types import Chunk, Passage, SearchFilters, SearchResult, Record

__version__ = "0.1.0"

__all__ = [
    "Chunk",
    "ConfigError",
    "EmbedderError",
    "IngestError",
    "Passage",
    "Record",
    "SearchFilters",
    "SearchResult",
    "StoreError",
    "VouchedError",
    "__version__",
]
