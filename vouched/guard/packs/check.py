"""Run every pattern against the example texts kept beside it (issue 15.2).

A pack entry may carry its intent as data: ``yes`` texts it must match and ``no`` texts it
must not (``{re = '...', yes = [...], no = [...]}`` or a ``[[refusal.<category>.rule]]``
table), and a category may list ``yes``/``no`` texts of its own (``[refusal.<category>]
yes = [...]``): each ``yes`` must be refused by some pattern of the category, each ``no``
by none. Examples are read as questions are: ``matching_text`` with the example subject's
name and aliases (``EXAMPLE_NAMES``) read as the subject, so an example may say "she" or
"Mara Quint".

``check_builtin()`` checks the ten shipped packs; ``check_file(path)`` a site owner's pack
(the shipped TOML format, language from ``lang = "xx"`` or the file name) or a vouched.toml
whose ``[guard.extra_patterns]`` entries carry examples; ``vouched packs check`` prints the
results. Each result names the pattern that matched (or the one that should have).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from vouched.errors import ConfigError
from vouched.guard.packs import (
    ANY_LANG,
    PLACEHOLDER,
    Rule,
    _env,
    _examples,
    _read,
    _rules,
    entry,
    load_packs,
    subject_texts,
)
from vouched.text import LANGS

__all__ = ["EXAMPLE_NAMES", "ExampleResult", "check_builtin", "check_file", "check_rules"]

EXAMPLE_NAMES = ("Mara Quint", "Mara", "Quint")

Examples = Mapping[str, tuple[Sequence[str], Sequence[str]]]


@dataclass(frozen=True)
class ExampleResult:
    lang: str
    category: str
    pattern: str | None  # the entry's pattern; None for a category-level example
    text: str
    must_match: bool
    matched_by: str | None  # the pattern that matched the text, if any

    @property
    def ok(self) -> bool:
        return (self.matched_by is not None) == self.must_match

    def line(self) -> str:
        kind = "yes" if self.must_match else "no "
        state = "ok  " if self.ok else "FAIL"
        where = f"{self.lang} {self.category}"
        target = f" [{_short(self.pattern)}]" if self.pattern else ""
        got = f" <- {_short(self.matched_by)}" if self.matched_by else " (no pattern matched)"
        return f"{state} {kind} {where}{target}: {self.text!r}{got}"


def _short(src: str, width: int = 72) -> str:
    return src if len(src) <= width else src[: width - 3] + "..."


def _hits(rule: Rule, text: str, names: Sequence[str]) -> bool:
    return any(rule.regex.search(t) for t in subject_texts(text, names))


def check_rules(
    lang: str,
    rules: Mapping[str, Sequence[Rule]],
    examples: Examples = {},
    names: Sequence[str] = EXAMPLE_NAMES,
) -> list[ExampleResult]:
    """Results for every example of ``rules`` (per pattern) and ``examples`` (per category)."""
    out: list[ExampleResult] = []
    for cat, rs in rules.items():
        for rule in rs:
            for text in rule.yes:
                out.append(ExampleResult(lang, cat, rule.source, text, True, rule.source if _hits(rule, text, names) else None))
            for text in rule.no:
                out.append(ExampleResult(lang, cat, rule.source, text, False, rule.source if _hits(rule, text, names) else None))
    for cat, (yes, no) in examples.items():
        rs = rules.get(cat, ())
        for text, must in [(t, True) for t in yes] + [(t, False) for t in no]:
            by = next((r.source for r in rs if _hits(r, text, names)), None)
            out.append(ExampleResult(lang, cat, None, text, must, by))
    return out


def check_builtin(langs: Iterable[str] = LANGS) -> list[ExampleResult]:
    """Every example in the shipped packs."""
    packs = load_packs(tuple(langs))
    out: list[ExampleResult] = []
    for lang, pack in packs.by_lang.items():
        out += check_rules(lang, pack.refusal, pack.examples)
    return out


def _extras(extra: Mapping, where: str) -> list[ExampleResult]:
    out: list[ExampleResult] = []
    for lang, cats in extra.items():
        if not isinstance(cats, Mapping):
            raise ConfigError(f"{where}: extra_patterns.{lang} must map category -> [pattern, ...]")
        if lang != ANY_LANG and lang not in LANGS:
            raise ConfigError(f"{where}: unknown language {lang!r}; use one of {list(LANGS)} or '*'")
        env = {"S": PLACEHOLDER} if lang == ANY_LANG else _env(_read(lang), lang)
        whole = True if lang == ANY_LANG else bool(_read(lang).get("pack", {}).get("whole_words", True))
        spec = {c: ([p] if isinstance(p, (str, Mapping)) else list(p)) for c, p in cats.items()}
        for c, items in spec.items():
            for item in items:
                entry(item, f"{where}: {lang}.{c}")  # validates the table shape
        out += check_rules(lang, _rules(spec, env, lang, "extra", whole))
    return out


def check_file(path: Path) -> list[ExampleResult]:
    """Examples of a site owner's pack file, or of the extra patterns in a vouched.toml."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read as TOML: {exc}") from None
    if "guard" in data:
        return _extras(data["guard"].get("extra_patterns", {}) or {}, str(path))
    lang = str(data.get("lang") or path.stem)
    if lang not in LANGS and lang != ANY_LANG:
        raise ConfigError(f"{path}: say which language the pack is for: lang = one of {list(LANGS)} or '*'")
    base = {"S": PLACEHOLDER} if lang == ANY_LANG else _env(_read(lang), lang)
    env = {**base, **{k: v for k, v in data.get("vars", {}).items() if isinstance(v, str)}}
    whole = bool(data.get("pack", {}).get("whole_words", True))
    section = data.get("refusal", {})
    return check_rules(lang, _rules(section, env, lang, "refusal", whole), _examples(section, lang))
