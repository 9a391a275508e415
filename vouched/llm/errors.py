"""Errors raised by the LLM provider layer; a branch of the vouched error tree.

    VouchedError                      (vouched.errors)
     └── ProviderError                the provider refused the request or failed it
          ├── ProviderAuthError       no API key, or the key was rejected (401/403);
          │                           the message names the variable to set
          ├── ProviderUnavailable     connection refused or dropped, timeout, 429, 5xx,
          │                           529, an overloaded/api_error event: try again later
          └── ProviderProtocolError   the reply is not the stream the protocol promises
                                      (not SSE, malformed JSON, unknown shape)

A stream that fails after it has yielded text raises after those pieces: what was
released stays released, and the `ProviderStream` keeps the figures needed to settle.
"""

from __future__ import annotations

from vouched.errors import ProviderAuthError, ProviderError, ProviderProtocolError, ProviderUnavailable

__all__ = ["ProviderAuthError", "ProviderError", "ProviderProtocolError", "ProviderUnavailable"]


# Defined in vouched.errors (the one error tree); this module keeps the names importable.
