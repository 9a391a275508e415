"""Fixed texts: refusals, notices and short replies, per language. Never model output.

The texts live in ``vouched/guard/texts/{lang}.toml`` as tables (``[refusal] fees = ...``)
and are addressed by dotted keys (``"refusal.fees"``). They speak about the site and its
subject in the third person, make no promises, and point fee, availability and hiring
questions to the site's contact form.

Look-up order for ``fixed_text(key, lang)``:

1. the deployment's override for (lang, key), then the built-in text;
2. for a ``refusal.*`` key with no text (a category a deployment added), the language's
   ``refusal.default``;
3. the same two steps in ``default_lang``;
4. otherwise ``KeyError`` naming the key.

Language tags are reduced to their primary subtag ("fa-IR" → "fa").
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Mapping

from vouched.errors import ConfigError
from vouched.text import LANGS

__all__ = ["TEXT_KEYS", "fixed_text", "texts_for"]

TEXT_KEYS: tuple[str, ...] = (
    "refusal.fees",
    "refusal.availability",
    "refusal.hiring",
    "refusal.private",
    "refusal.speculation",
    "refusal.meta",
    "refusal.task",
    "refusal.default",
    "refusal.no_evidence",
    "refusal.unsupported_language",
    "notice.held",
    "notice.held_name",
    "notice.truncated",
    "notice.limit",
    "notice.key_limit",
    "notice.unavailable",
    "notice.clarify",
    "notice.uncovered",
    "notice.conflict",
    "reply.greeting",
    "reply.thanks",
    "records.intro",
    "records.none",
)

_DEFAULT = "refusal.default"


def _flatten(table: Mapping, prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        elif isinstance(v, str):
            out[key] = v
        else:
            raise ConfigError(f"fixed text {key!r} must be a string, got {type(v).__name__}")
    return out


@lru_cache(maxsize=None)
def texts_for(lang: str) -> Mapping[str, str]:
    """The built-in texts of ``lang`` as {dotted key: text}; empty for a language without a file."""
    if lang not in LANGS:
        return MappingProxyType({})
    res = resources.files("vouched.guard").joinpath("texts", f"{lang}.toml")
    try:
        data = tomllib.loads(res.read_text("utf-8"))
    except FileNotFoundError:
        return MappingProxyType({})
    return MappingProxyType(_flatten(data))


def _primary(lang: str) -> str:
    return re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]


def _lookup(key: str, lang: str, overrides: Mapping[str, Mapping[str, str]] | None) -> str | None:
    mine = (overrides or {}).get(lang) or {}
    for k in (key, _DEFAULT) if key.startswith("refusal.") else (key,):
        text = mine.get(k) or texts_for(lang).get(k)
        if text:
            return text
    return None


def fixed_text(
    key: str,
    lang: str,
    overrides: Mapping[str, Mapping[str, str]] | None = None,
    default_lang: str = "en",
) -> str:
    """The fixed text for ``key`` in ``lang`` (see the module docstring for the fallbacks).

    ``overrides`` is a deployment's ``{lang: {key: text}}``, e.g.
    ``{"en": {"refusal.fees": "Rates are on the pricing page."}}``.
    """
    for candidate in dict.fromkeys((_primary(lang), _primary(default_lang))):
        text = _lookup(key, candidate, overrides)
        if text is not None:
            return text
    raise KeyError(f"no fixed text {key!r} for language {lang!r} or default {default_lang!r}")
