from __future__ import annotations

import httpx
import pytest

from tests.llm.contract import MESSAGES, run
from vouched.errors import ConfigError
from vouched.llm import (
    PROVIDER_NAMES,
    AnthropicProvider,
    OpenAICompatProvider,
    ProviderAuthError,
    ScriptedProvider,
    Usage,
    make_provider,
)


def test_names() -> None:
    assert PROVIDER_NAMES == ("extractive", "openai", "anthropic", "scripted")


def test_extractive_builds_no_provider() -> None:
    assert make_provider("extractive", {}) is None


def test_openai_local_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = make_provider("openai", {"base_url": "http://127.0.0.1:8080/v1", "model": "qwen", "api_key": None,
                                        "max_tokens": 400, "temperature": 0.0})
    assert isinstance(provider, OpenAICompatProvider) and provider.model == "qwen"


def test_openai_defaults_to_the_openai_api_and_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderAuthError, match="OPENAI_API_KEY"):
        make_provider("openai", {"model": "gpt-4o-mini"})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    provider = make_provider("OpenAI", {"model": "gpt-4o-mini"})
    assert isinstance(provider, OpenAICompatProvider) and provider.base_url == "https://api.openai.com/v1"


def test_anthropic_key_from_environment_no_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError("building must not connect")

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    provider = make_provider("anthropic", {"model": "claude-x", "transport": httpx.MockTransport(refuse)})
    assert isinstance(provider, AnthropicProvider)


def test_scripted_from_settings() -> None:
    provider = make_provider("scripted", {"chunks": ["a", "b"], "usage": {"input_tokens": 1, "output_tokens": 2}})
    assert isinstance(provider, ScriptedProvider)
    pieces = run(provider.stream(MESSAGES, max_tokens=5).__anext__())
    assert pieces.text == "a" and provider.default.usage == Usage(1, 2)


@pytest.mark.parametrize(
    ("name", "settings", "words"),
    [
        ("gpt", {}, "unknown provider"),
        ("openai", {"model": "m", "base_url": "http://localhost/v1", "modle": "typo"}, "modle"),
        ("openai", {"base_url": "http://localhost/v1"}, "needs model"),
        ("openai", {"model": "m", "base_url": "localhost:8080"}, "http://"),
        ("scripted", {"usage": {"tokens": 3}}, "invalid settings"),
    ],
)
def test_bad_settings_are_config_errors(name: str, settings: dict, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        make_provider(name, settings)


@pytest.mark.parametrize(("name", "settings"), [("gpt", {}), ("openai", {"base_url": "http://localhost/v1"}),
                                                ("openai", {"model": "m", "base_url": "http://x/v1", "modle": 1})])
def test_config_errors_name_the_table_that_exists(name: str, settings: dict) -> None:
    """The provider's settings live in [answer] of vouched.toml; there is no [llm] table."""
    from vouched.config import AnswerSettings

    with pytest.raises(ConfigError) as e:
        make_provider(name, settings)
    assert str(e.value).startswith("answer") and "llm" not in str(e.value)
    assert "provider" in AnswerSettings.model_fields
