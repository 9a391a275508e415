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

from vouched.errors import VouchedError

__all__ = ["ProviderAuthError", "ProviderError", "ProviderProtocolError", "ProviderUnavailable"]


class ProviderError(VouchedError):
    """The provider refused or failed the request; the message says what it reported."""

    def __init__(self, message: str, *, status: int | None = None, provider: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider


class ProviderAuthError(ProviderError):
    """No API key was found, or the provider rejected it; the message says how to fix it."""


class ProviderUnavailable(ProviderError):
    """The provider could not be reached or could not serve now: retrying later may work."""


class ProviderProtocolError(ProviderError):
    """The reply broke the wire protocol: not an event stream, or an event that cannot be read."""
