"""Pattern packs: one TOML file per language, compiled once and cached.

A pack file (``{lang}.toml``) holds, for one language:

* ``[vars]`` — named regex fragments, used in patterns as ``{@name}`` (expanded
  recursively). ``{@S}`` is built in: the placeholder that replaces the subject's name
  (``_text.subject_texts``), so every pronoun variable should accept it;
* ``[refusal.<category>] patterns = [...]`` — L1 refusal patterns;
* ``[overview.<topic>] patterns = [...]`` — questions about the work as a whole (records);
* ``[ordinal]`` — ``frame`` (a regex using ``{@ORD}``) and ``[ordinal.words]`` (position
  ``"1"``..``"10"``/``"last"`` → alternatives), for "the second one";
* ``[followup]`` — ``starts`` (connectives at the start) and ``anaphora`` (anywhere);
* ``[pronouns]`` — ``she``/``he``/``they``/``it`` → third-person words of that gender.

How a pattern is read. Patterns are written against *comparable* text: ``normalize()``
(vouched.text) plus two folds that matching needs and normalisation leaves alone —
Latin/Cyrillic accents (U+0300-U+036F after NFD: "cuanto" ≡ "cuánto", "берет" ≡ "берёт")
and typographic apostrophes (’ ʼ ‘ → '). Every non-ASCII run of a pattern is passed
through the same function, so a pack may write «آدرس», «هزينه», «متأهل» or "cuánto" and
still match the normalised question (regex syntax is ASCII, so non-ASCII is always
literal). ASCII letters in patterns must be lower-case.

Each pattern is matched as whole words: the loader wraps it in look-arounds that forbid a
letter, digit or Devanagari sign right before and after the match (``\\b`` is not used: in
Python it treats Devanagari vowel signs as non-word characters, so "कितनी" would contain a
boundary). Chinese has no spaces, so a pack may set ``whole_words = false`` (zh does); its
patterns then match anywhere, and to let other packs see Latin words written inside Chinese
text, matching text gets a space at every Han/non-Han seam (see ``matching_text``). Use
``\\w*`` (or explicit endings) for an open ending. Patterns must not use named groups or
back-references (overview topics are combined into one alternation per language).

Refusal rules are compiled at load, so a bad pattern fails then, naming itself; matching
runs only the rules whose required literals occur in the question (``_index``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Mapping, Sequence

from vouched.errors import ConfigError
from vouched.guard.packs._index import LiteralIndex, required_literals
from vouched.guard.packs._text import PLACEHOLDER, comparable, matching_text, subject_texts
from vouched.text import LANGS

__all__ = [
    "ANY_LANG",
    "Combined",
    "PLACEHOLDER",
    "LangPack",
    "Packs",
    "Rule",
    "comparable",
    "default_packs",
    "load_packs",
    "matching_text",
    "subject_texts",
]

ANY_LANG = "*"

# Devanagari vowel signs, virama, nukta etc. are not \w in Python; Latin combining marks
# never reach matching (comparable() strips them). Small ranges: cheap to compile.
_MARK = "[\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963]"
_START = f"(?<!\\w)(?<!{_MARK})"
_END = f"(?!\\w)(?!{_MARK})"

_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_META = re.compile(r"([.^$*+?{}\[\]\\|()])")
_MACRO = re.compile(r"\{@([A-Za-z_][A-Za-z0-9_]*)\}")
_FORBIDDEN = re.compile(r"\(\?P[<=]|\\[1-9]|\\g<")


def _literal(run: str) -> str:
    return _META.sub(r"\\\1", comparable(run))


@dataclass(frozen=True)
class Rule:
    """One pattern as written (``source``) and as prepared for matching (``body``)."""

    lang: str
    group: str  # refusal category or overview topic
    source: str
    body: str  # macros expanded, literals in comparable form, no word boundaries
    whole_words: bool = True
    literals: frozenset[str] | None = None  # one of these is in every match (refusal rules)
    yes: tuple[str, ...] = ()  # example texts the pattern must match (``vouched packs check``)
    no: tuple[str, ...] = ()  # example texts it must not match

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """The body with the pack's word boundaries (refusal rules: compiled at load)."""
        return re.compile(_wrap(self.body, self.whole_words))


@dataclass(frozen=True)
class LangPack:
    lang: str
    whole_words: bool
    refusal: Mapping[str, tuple[Rule, ...]]
    overview: Mapping[str, tuple[Rule, ...]]
    ordinal: re.Pattern[str] | None  # named groups o1..o10, olast
    followup_starts: re.Pattern[str] | None
    followup_anaphora: re.Pattern[str] | None
    pronouns: Mapping[str, re.Pattern[str]]  # she/he/they/it -> whole-word alternation
    # category -> (texts the category must refuse, texts it must not): the pack's intent as data
    examples: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Combined:
    """All of one language's rules of one kind as one regex, one named group per category."""

    regex: re.Pattern[str]
    groups: tuple[str, ...]  # group "g{i}" -> groups[i]

    def search(self, text: str) -> tuple[str, re.Match[str]] | None:
        m = self.regex.search(text)
        if m is None:
            return None
        return self.groups[int(m.lastgroup[1:])], m


@dataclass(frozen=True)
class Packs:
    """Compiled packs for ``langs`` (plus ``"*"`` when a deployment added global patterns).

    ``rules`` holds every refusal rule in precedence order (language, then category, then
    pattern, as listed); ``index`` picks the few that can match a given text, so a
    question costs a handful of small searches instead of ~500. ``overview[lang]`` is
    one regex per language with one named group per topic (the route is not hot).
    """

    langs: tuple[str, ...]
    by_lang: Mapping[str, LangPack]
    rules: tuple[Rule, ...]
    index: LiteralIndex

    @cached_property
    def overview(self) -> Mapping[str, Combined | None]:
        """Per language, the overview topics as one regex (built on first use)."""
        return MappingProxyType({k: _combine(p.overview, p.whole_words, f"{k} overview") for k, p in self.by_lang.items()})

    def categories(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for pack in self.by_lang.values():
            seen.update(dict.fromkeys(pack.refusal))
        return tuple(seen)


# --- reading ----------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _read(lang: str) -> Mapping:
    raw = resources.files("vouched.guard.packs").joinpath(f"{lang}.toml").read_text("utf-8")
    try:
        return tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:  # a packaging bug, not a user error
        raise ConfigError(f"pattern pack {lang}.toml is not valid TOML: {exc}") from exc


def _expand(src: str, env: Mapping[str, str], where: str) -> str:
    out = src
    for _ in range(8):
        if "{@" not in out:
            return out
        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in env:
                raise ConfigError(f"{where}: pattern {src!r} uses unknown variable {{@{name}}}")
            return env[name]
        out = _MACRO.sub(sub, out)
    raise ConfigError(f"{where}: pattern {src!r}: variables nest too deeply")


def _wrap(body: str, whole_words: bool) -> str:
    return f"{_START}(?:{body}){_END}" if whole_words else f"(?:{body})"


def _literals(src: str) -> str:
    return _NON_ASCII.sub(lambda m: _literal(m.group()), src)


def _prepare(src: object, env: Mapping[str, str], where: str) -> str:
    if not isinstance(src, str) or not src.strip():
        raise ConfigError(f"{where}: every pattern must be a non-empty string, got {src!r}")
    if _FORBIDDEN.search(src):
        raise ConfigError(f"{where}: pattern {src!r} uses a named group or back-reference; use (?:...) instead")
    return _literals(_expand(src, env, where))


def _compiled(src: str, body: str, whole: bool, where: str) -> re.Pattern[str]:
    try:
        return re.compile(_wrap(body, whole))
    except re.error as exc:
        raise ConfigError(f"{where}: invalid regular expression {src!r}: {exc}") from None


def _texts(v: object, where: str) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        return (v,)
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{where}: examples must be a list of strings, got {v!r}")
    return tuple(v)


def entry(item: object, where: str) -> tuple[object, tuple[str, ...], tuple[str, ...]]:
    """One pattern entry as (source, yes, no): a string, or a table ``{re, yes, no}``."""
    if isinstance(item, Mapping):
        unknown = set(item) - {"re", "yes", "no"}
        if unknown or "re" not in item:
            raise ConfigError(f"{where}: a pattern table needs 're' (and optional 'yes', 'no'), got keys {sorted(item)}")
        return item["re"], _texts(item.get("yes"), where), _texts(item.get("no"), where)
    if isinstance(item, tuple) and len(item) == 3:  # frozen form of a table (see _freeze)
        return item[0], item[1], item[2]
    return item, (), ()


def _rule(item: object, env: Mapping[str, str], where: str, lang: str, group: str, whole: bool, eager: bool) -> Rule:
    src, yes, no = entry(item, where)
    body = _prepare(src, env, where)
    if not eager:
        return Rule(lang, group, str(src), body, whole)
    try:  # parse the body alone (a wrapper could hide an unclosed "["), then compile
        rule = Rule(lang, group, str(src), body, whole, required_literals(body), yes, no)
        rule.regex
    except re.error as exc:
        raise ConfigError(f"{where}: invalid regular expression {src!r}: {exc}") from None
    return rule


def _env(data: Mapping, lang: str) -> dict[str, str]:
    env = {"S": PLACEHOLDER}
    for k, v in data.get("vars", {}).items():
        if not isinstance(v, str):
            raise ConfigError(f"{lang}.toml: [vars] {k} must be a string")
        env[k] = v
    return env


def _rules(
    section: Mapping, env: Mapping[str, str], lang: str, kind: str, whole: bool, eager: bool = True
) -> dict[str, tuple[Rule, ...]]:
    out: dict[str, tuple[Rule, ...]] = {}
    for name, spec in section.items():
        pats = spec.get("patterns", ()) if isinstance(spec, Mapping) else spec
        if isinstance(pats, str):
            pats = [pats]
        if isinstance(spec, Mapping) and spec.get("rule"):  # [[refusal.<cat>.rule]] tables
            pats = [*pats, *spec["rule"]]
        where = f"{lang} {kind}.{name}"
        out[str(name)] = tuple(_rule(p, env, where, lang, str(name), whole, eager) for p in pats)
    return out


def _alternation(alts: Sequence[str], env: Mapping[str, str], where: str) -> str:
    return "|".join(_prepare(a, env, where) for a in alts)


def _ordinal(data: Mapping, env: Mapping[str, str], lang: str, whole: bool) -> re.Pattern[str] | None:
    sec = data.get("ordinal")
    if not sec:
        return None
    where = f"{lang} ordinal"
    groups = []
    for pos, alts in sec.get("words", {}).items():
        name = "olast" if pos == "last" else f"o{int(pos)}"
        groups.append(f"(?P<{name}>{_alternation(alts, env, where)})")
    ord_env = {**env, "ORD": "(?:" + "|".join(groups) + ")"}
    frame = sec.get("frame", "{@ORD}")
    return _compiled(frame, _literals(_expand(frame, ord_env, where)), whole, where)


def _words_rx(alts: Sequence[str], env: Mapping[str, str], where: str, whole: bool) -> re.Pattern[str] | None:
    return _compiled(" | ".join(alts), _alternation(alts, env, where), whole, where) if alts else None


def _lang_pack(lang: str, extra: Mapping[str, Sequence[str]] | None) -> LangPack:
    data = _read(lang)
    env = _env(data, lang)
    whole = bool(data.get("pack", {}).get("whole_words", True))
    refusal = _rules(data.get("refusal", {}), env, lang, "refusal", whole)
    for cat, pats in (extra or {}).items():
        refusal[cat] = refusal.get(cat, ()) + _rules({cat: list(pats)}, env, lang, "extra", whole)[cat]
    fu = data.get("followup", {})
    pronouns = {g: _words_rx(alts, env, f"{lang} pronouns", whole) for g, alts in data.get("pronouns", {}).items()}
    return LangPack(
        lang=lang,
        whole_words=whole,
        refusal=MappingProxyType(refusal),
        overview=MappingProxyType(_rules(data.get("overview", {}), env, lang, "overview", whole, eager=False)),
        ordinal=_ordinal(data, env, lang, whole),
        followup_starts=_words_rx(fu.get("starts", ()), env, f"{lang} followup", whole),
        followup_anaphora=_words_rx(fu.get("anaphora", ()), env, f"{lang} followup", whole),
        pronouns=MappingProxyType({g: rx for g, rx in pronouns.items() if rx is not None}),
        examples=MappingProxyType(_examples(data.get("refusal", {}), lang)),
    )


def _examples(section: Mapping, lang: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    out = {}
    for name, spec in section.items():
        if isinstance(spec, Mapping) and ("yes" in spec or "no" in spec):
            where = f"{lang} refusal.{name}"
            out[str(name)] = (_texts(spec.get("yes"), where), _texts(spec.get("no"), where))
    return out


def _any_pack(extra: Mapping[str, Sequence[str]]) -> LangPack:
    refusal = _rules({c: list(p) for c, p in extra.items()}, {"S": PLACEHOLDER}, ANY_LANG, "extra", True)
    empty: Mapping = MappingProxyType({})
    return LangPack(ANY_LANG, True, MappingProxyType(refusal), empty, None, None, None, empty)


def _combine(rules: Mapping[str, tuple[Rule, ...]], whole: bool, where: str) -> Combined | None:
    """One regex, ``(?P<g0>a|b)|(?P<g1>c)``, with the word boundaries factored out."""
    names = tuple(n for n, rs in rules.items() if rs)
    if not names:
        return None
    body = "|".join(f"(?P<g{i}>" + "|".join(f"(?:{r.body})" for r in rules[n]) + ")" for i, n in enumerate(names))
    try:
        return Combined(re.compile(_wrap(body, whole)), names)
    except re.error as exc:
        raise ConfigError(f"{where} patterns do not combine into one expression: {exc}") from None


# --- public -----------------------------------------------------------------------------

_Frozen = tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]


def _freeze(extra: Mapping[str, Mapping[str, Sequence[str]]] | None) -> _Frozen:
    if not extra:
        return ()
    out = []
    for lang, cats in extra.items():
        if not isinstance(cats, Mapping):
            raise ConfigError(f"extra refusal patterns for {lang!r} must map category -> [regex, ...]")
        items = []
        for cat, pats in cats.items():
            if isinstance(pats, (str, Mapping)):
                pats = [pats]
            frozen = []
            for p in pats:  # a {re, yes, no} table is kept as a hashable (re, yes, no) tuple
                if isinstance(p, Mapping):
                    src, yes, no = entry(p, f"extra refusal patterns {lang}.{cat}")
                    p = (src, yes, no)
                frozen.append(p)
            items.append((str(cat), tuple(frozen)))
        out.append((str(lang), tuple(items)))
    return tuple(out)


@lru_cache(maxsize=32)
def _build(langs: tuple[str, ...], extra: _Frozen) -> Packs:
    by_extra = {lang: dict(cats) for lang, cats in extra}
    unknown = [x for x in by_extra if x != ANY_LANG and x not in LANGS]
    if unknown:
        raise ConfigError(f"extra refusal patterns name unknown language(s) {unknown}; use one of {list(LANGS)} or '*'")
    by_lang = {lang: _lang_pack(lang, by_extra.get(lang)) for lang in langs}
    if ANY_LANG in by_extra:
        by_lang[ANY_LANG] = _any_pack(by_extra[ANY_LANG])
    rules = tuple(r for p in by_lang.values() for rs in p.refusal.values() for r in rs)
    index = LiteralIndex.build([r.literals for r in rules])
    return Packs(langs, MappingProxyType(by_lang), rules, index)


def load_packs(
    langs: Sequence[str] | None = None,
    extra: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> Packs:
    """Compiled packs for ``langs`` (default: all ten), with a deployment's ``extra`` patterns.

    ``extra`` is ``{lang or "*": {category: [regex, ...]}}``; a new category is allowed
    (its refusal text falls back to ``refusal.default``). A language's extras may use that
    pack's ``{@var}`` fragments; ``"*"`` extras only ``{@S}``, and they run whatever the
    configured languages (extras for a language not in ``langs`` are not loaded). Invalid
    patterns raise ``ConfigError`` naming the pattern. Results are cached per (langs, extra).
    """
    chosen = tuple(dict.fromkeys(langs)) if langs is not None else LANGS
    bad = [x for x in chosen if x not in LANGS]
    if bad:
        raise ConfigError(f"no pattern pack for language(s) {bad}; choose from {list(LANGS)}")
    return _build(chosen, _freeze(extra))


def default_packs() -> Packs:
    """All ten built-in packs, no extras (cached)."""
    return load_packs()
