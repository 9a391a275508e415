"""LLM providers: one streaming protocol, three implementations, one error branch.

    from vouched.llm import Message, make_provider
    provider = make_provider("openai", {"base_url": "http://127.0.0.1:8080/v1", "model": "qwen"})
    stream = provider.stream([Message("user", "hello")], max_tokens=200)
    async for piece in stream: ...
    cost = stream.settle(prompt_bytes=...)

The contract (pieces, cancellation, settling a cut stream) is written at the top of
`vouched.llm.base`; the error tree at the top of `vouched.llm.errors`.
"""

from vouched.llm.anthropic import AnthropicProvider
from vouched.llm.base import (
    Message,
    Provider,
    ProviderStream,
    StreamPiece,
    Usage,
    merge_usage,
    prompt_bytes,
    settle_usage,
)
from vouched.llm.errors import ProviderAuthError, ProviderError, ProviderProtocolError, ProviderUnavailable
from vouched.llm.openai_compat import OpenAICompatProvider
from vouched.llm.registry import PROVIDER_NAMES, make_provider
from vouched.llm.scripted import ScriptedProvider, ScriptedResponse

__all__ = [
    "PROVIDER_NAMES",
    "AnthropicProvider",
    "Message",
    "OpenAICompatProvider",
    "Provider",
    "ProviderAuthError",
    "ProviderError",
    "ProviderProtocolError",
    "ProviderStream",
    "ProviderUnavailable",
    "ScriptedProvider",
    "ScriptedResponse",
    "StreamPiece",
    "Usage",
    "make_provider",
    "merge_usage",
    "prompt_bytes",
    "settle_usage",
]
