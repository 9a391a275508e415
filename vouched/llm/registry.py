"""Build a provider from its name and settings (e.g. the `[answer]` table of vouched.toml).

    "extractive"  → None: no LLM; the extractive generator (vouched.answer) answers
    "openai"      → OpenAICompatProvider (OpenAI, vLLM, llama.cpp, Ollama)
    "anthropic"   → AnthropicProvider
    "scripted"    → ScriptedProvider (tests, demos)

Keys come from the environment (OPENAI_API_KEY / ANTHROPIC_API_KEY, or the variable named
by `api_key_env`) unless `api_key` is set. Building opens no connection: the first
`stream()` that is iterated does. Settings the provider does not take are a ConfigError, so
a typo cannot fall back to a default silently; None values are treated as absent.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from vouched.errors import ConfigError
from vouched.llm.anthropic import AnthropicProvider
from vouched.llm.base import Provider, Usage
from vouched.llm.openai_compat import OpenAICompatProvider
from vouched.llm.scripted import ScriptedProvider

__all__ = ["PROVIDER_NAMES", "make_provider"]

PROVIDER_NAMES = ("extractive", "openai", "anthropic", "scripted")

# Call-time settings that may sit in the same config table; they are not the builder's.
_CALL_SETTINGS = frozenset({"provider", "max_tokens", "temperature", "reasoning_reserve"})

_DEFAULTS: dict[str, dict[str, Any]] = {
    "openai": {"base_url": "https://api.openai.com/v1"},
    "anthropic": {},
    "scripted": {},
}


def make_provider(name: str, settings: Mapping[str, Any] | None = None) -> Provider | None:
    """The provider named `name`, or None for "extractive" (no model is called)."""
    key = name.strip().lower()
    if key == "extractive":
        return None
    factories: dict[str, Callable[..., Provider]] = {
        "openai": OpenAICompatProvider,
        "anthropic": AnthropicProvider,
        "scripted": ScriptedProvider,
    }
    if key not in factories:
        raise ConfigError(f"answer.provider: unknown provider {name!r}; use one of {', '.join(PROVIDER_NAMES)}")
    factory = factories[key]
    params = inspect.signature(factory).parameters
    given = {k: v for k, v in (settings or {}).items() if v is not None and k not in _CALL_SETTINGS}
    unknown = sorted(set(given) - set(params))
    if unknown:
        allowed = ", ".join(p for p in params if p not in ("transport",))
        raise ConfigError(f"answer: {', '.join(unknown)} not understood by the {key} provider; it takes {allowed}")
    kwargs = {**_DEFAULTS[key], **given}
    missing = [p.name for p in params.values() if p.default is inspect.Parameter.empty and p.name not in kwargs]
    if missing:
        raise ConfigError(f"answer: the {key} provider needs {', '.join(missing)} (e.g. answer.{missing[0]} = \"...\" in vouched.toml)")
    try:
        if key == "scripted" and isinstance(kwargs.get("usage"), Mapping):
            kwargs["usage"] = Usage(**kwargs["usage"])
        return factory(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"answer: invalid settings for the {key} provider: {exc}") from exc
