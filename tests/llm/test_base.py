from __future__ import annotations

import vouched.llm as llm
from vouched.errors import VouchedError
from vouched.llm import (
    AnthropicProvider,
    Message,
    OpenAICompatProvider,
    Provider,
    ProviderAuthError,
    ProviderError,
    ProviderProtocolError,
    ProviderUnavailable,
    ScriptedProvider,
    Usage,
    merge_usage,
    prompt_bytes,
    settle_usage,
)


def test_public_api_is_pinned() -> None:
    assert sorted(llm.__all__) == sorted([
        "PROVIDER_NAMES", "AnthropicProvider", "Message", "OpenAICompatProvider", "Provider", "ProviderAuthError",
        "ProviderError", "ProviderProtocolError", "ProviderStream", "ProviderUnavailable", "ScriptedProvider",
        "ScriptedResponse", "StreamPiece", "Usage", "make_provider", "merge_usage", "prompt_bytes", "settle_usage",
    ])
    assert all(hasattr(llm, name) for name in llm.__all__)


def test_error_tree() -> None:
    for cls in (ProviderAuthError, ProviderUnavailable, ProviderProtocolError):
        assert issubclass(cls, ProviderError)
    assert issubclass(ProviderError, VouchedError)


def test_every_provider_meets_the_protocol() -> None:
    providers = [
        ScriptedProvider(["x"]),
        OpenAICompatProvider("http://127.0.0.1:1/v1", "m"),
        AnthropicProvider("claude", api_key="k"),
    ]
    assert all(isinstance(p, Provider) and p.name and p.model for p in providers)


def test_settle_uses_provider_figures_and_fills_only_gaps() -> None:
    assert settle_usage(Usage(10, 20, 5), prompt_bytes=999, received_bytes=999) == Usage(10, 20, 5)
    assert settle_usage(None, prompt_bytes=300, received_bytes=40) == Usage(300, 40)
    # Anthropic cut after message_start: input known, output from bytes.
    assert settle_usage(Usage(input_tokens=25), prompt_bytes=300, received_bytes=40) == Usage(25, 40)
    # Reasoning text received but never reported: it is output too.
    assert settle_usage(None, prompt_bytes=1, received_bytes=4, reasoning_bytes=6) == Usage(1, 10, 6)
    assert settle_usage(Usage(output_tokens=3), prompt_bytes=1, received_bytes=50, reasoning_bytes=6) == Usage(1, 3, None)


def test_merge_usage_keeps_earlier_fields() -> None:
    assert merge_usage(Usage(input_tokens=25), Usage(output_tokens=9)) == Usage(25, 9)
    assert merge_usage(None, Usage(1)) == Usage(1)
    assert merge_usage(Usage(1), None) == Usage(1)
    assert merge_usage(Usage(1, 2), Usage(3)) == Usage(3, 2)


def test_prompt_bytes_counts_utf8() -> None:
    assert prompt_bytes([Message("system", "ab"), Message("user", "سلام")]) == 2 + 8
