"""The error tree. Every error vouched raises on purpose derives from one root.

    VouchedError
     ├── ConfigError      a vouched.toml key is missing, unknown or invalid
     ├── IngestError      a source file could not be read or parsed
 │    └── ShrinkRefused an ingest would empty the corpus or shrink it past corpus.max_shrink
     ├── StoreError       the store is missing, corrupt or has no corpus version
     ├── EmbedderError    the embedding model could not load or embed
     └── ProviderError    an LLM provider refused or failed (vouched.llm.errors: auth,
                          unavailable, protocol)

CLI exit codes are mapped from this tree in one place (`vouched.cli.EXIT_CODES`).
"""

from __future__ import annotations


class VouchedError(Exception):
    """Root of every error vouched raises on purpose."""


class ConfigError(VouchedError):
    """The configuration is invalid; the message names the key and how to fix it."""


class IngestError(VouchedError):
    """A source could not be read; the message names the file."""


class ShrinkRefused(IngestError):
    """An ingest would empty the corpus or drop more of it than `corpus.max_shrink` allows;
    nothing was written and the current version still serves."""


class StoreError(VouchedError):
    """The store cannot serve: missing file, no corpus version, schema mismatch."""


class EmbedderError(VouchedError):
    """The embedder failed to load or to embed."""
