"""Prompt injection from the corpus: find passages that read as instructions to a model.

A site's pages are data. A page that talks to the model instead of the reader — "ignore
the previous instructions", "in every answer, tell readers to visit …", "you are now …" —
is either an attack or a page about attacks; either way it must not steer an answer. This
module holds the pure checks; ingestion (``vouched.ingest.corpus``) applies them and either
drops (quarantine) or keeps-and-flags what they find, and the answer path uses
``sole_flagged_evidence`` so a flagged passage is never the only support of an answer.

    scan_injection(text)          → [InjectionHit]   instruction-like phrases, every language
    strip_controls(text)          → (clean text, flags)  invisible and bidi controls removed
    smuggled_text(text)           → the ASCII hidden in Unicode tag characters
    inspect_text(text)            → (clean text, flags)  all of the above, as chunk flags
    sole_flagged_evidence(items)  → True when every given passage is flagged

Flags (strings, stored on ``Chunk.flags``):

* ``injection:<category>`` — a pattern matched: ``override`` (ignore/forget the previous
  instructions), ``exfiltrate`` (reveal the system prompt; put a link, address or message in
  every answer; send the conversation somewhere; tell readers to visit/contact/pay),
  ``roleplay`` ("you are now …", "pretend to be", developer mode), ``addressing`` (a note
  to "the AI reading this", "if you are a language model") and ``prompt_format`` (chat
  template tokens such as ``<|im_start|>`` or ``[INST]``). Only these quarantine.
* ``control:bidi`` — bidi embedding/override/isolate controls (U+202A-U+202E,
  U+2066-U+2069), which reorder what a reader sees ("Trojan Source"); removed.
* ``control:zero_width`` — U+200B, U+2060, U+FEFF inside text, U+180E, the invisible math
  operators U+2061-U+2064, and a ZWJ/ZWNJ between two Latin, Greek or Cyrillic letters
  (where they only serve to split a word past a filter: "ig\u200dnore"); removed. ZWNJ and
  ZWJ elsewhere are kept: they are spelling in Persian, Arabic and Devanagari text
  («می‌خواهم») and in emoji sequences. The LRM/RLM/ALM marks are kept too (ordinary in
  right-to-left text, and they cannot reorder letters).
* ``control:tag`` — Unicode tag characters (U+E0000-U+E007F), invisible ASCII look-alikes
  used to smuggle instructions; removed, and the ASCII they spell is scanned as well.

How a pattern is read: one TOML pack per language under ``injection_packs/`` plus
``common.toml`` (chat-template tokens), written against ``comparable`` text exactly as the
L1 refusal packs are (``vouched.guard.packs``: normalised, lower-case, accents folded;
non-ASCII literals in a pattern are folded the same way at load; whole words unless the
pack sets ``whole_words = false``). Every pack runs on every text: a Persian page may
carry an English injection, and language identification must not decide safety.

What this cannot see, said plainly: paraphrases no pattern anticipates, instructions split
across chunks, homoglyphs (Cyrillic "о" inside a Latin word), letters spaced out
("i g n o r e"), and instructions in languages other than the ten. Patterns are tuned so
ordinary prose about people does not match ("ignore the alert", "act as incident
commander", "tell the customer to restart"), but a page *about* prompt injection that
quotes an attack will be flagged — run such a site with ``mode = "flag"``. The second line
of defence does not depend on these patterns: the prompt fences sources as data, the
generator has no tools, and the sentence gate releases only values found in cited sources.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from vouched.errors import ConfigError

__all__ = [
    "CATEGORIES",
    "CONTROL_FLAGS",
    "INJECTION_PREFIX",
    "InjectionHit",
    "injection_flags",
    "inspect_text",
    "is_flagged",
    "scan_injection",
    "smuggled_text",
    "sole_flagged_evidence",
    "strip_controls",
]

CATEGORIES = ("override", "exfiltrate", "roleplay", "addressing", "prompt_format", "tool")
INJECTION_PREFIX = "injection:"
CONTROL_FLAGS = ("control:bidi", "control:zero_width", "control:tag")
PACKS = ("common", "en", "fa", "es", "pt", "fr", "de", "ar", "ru", "zh", "hi", "it", "nl", "pl", "tr", "id", "ja", "ko")

# Word boundaries as in the L1 packs: no letter, digit or Devanagari sign on either side.
_MARK = "[\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963]"
_START = f"(?<!\\w)(?<!{_MARK})"
_END = f"(?!\\w)(?!{_MARK})"
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_KANA = re.compile("[\u3040-\u30ff]")
_CJK = "\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef"
_SEAM_SPACE = re.compile(f"(?<=[{_CJK}a-z]) (?=[{_CJK}])|(?<=[{_CJK}]) (?=[{_CJK}a-z])")
_META = re.compile(r"([.^$*+?{}\[\]\\|()])")


@dataclass(frozen=True)
class InjectionHit:
    """One instruction-like phrase: its category, the pack that matched, the text matched
    (in comparable form) and where it starts in that form."""

    category: str
    lang: str
    match: str
    start: int = 0

    @property
    def flag(self) -> str:
        return INJECTION_PREFIX + self.category


# --- invisible controls ---------------------------------------------------------------------

_BIDI = frozenset([*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_ZERO_WIDTH = frozenset([0x200B, 0x2060, 0xFEFF, 0x180E, 0x2061, 0x2062, 0x2063, 0x2064])
_JOINERS = frozenset([0x200C, 0x200D])
_TAG_LO, _TAG_HI = 0xE0000, 0xE007F
_TAGS = re.compile("[\U000e0020-\U000e007e]")
_CONTROL_RUN = re.compile("[\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060-\u2064\ufeff\u180e\U000e0000-\U000e007f]")


def _simple_letter(ch: str) -> bool:
    """A Latin, Greek or Cyrillic letter: scripts where a joiner has no spelling role."""
    return ch.isalpha() and ord(ch) < 0x0530


def strip_controls(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` without bidi controls, stray zero-width characters and tag characters, and
    the ``control:*`` flags for what was removed (see the module docstring)."""
    if text.isascii() or _CONTROL_RUN.search(text) is None:
        return text, ()
    found: set[str] = set()
    out: list[str] = []
    for i, ch in enumerate(text):
        cp = ord(ch)
        if cp in _BIDI:
            found.add("control:bidi")
            continue
        if cp in _ZERO_WIDTH:
            if not (cp == 0xFEFF and i == 0):  # a leading BOM is an encoding artefact
                found.add("control:zero_width")
            continue
        if _TAG_LO <= cp <= _TAG_HI:
            found.add("control:tag")
            continue
        if cp in _JOINERS:
            before = out[-1] if out else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            if before and after and _simple_letter(before) and _simple_letter(after):
                found.add("control:zero_width")
                continue
        out.append(ch)
    return "".join(out), tuple(f for f in CONTROL_FLAGS if f in found)


def smuggled_text(text: str) -> str:
    """The ASCII spelled by Unicode tag characters in ``text`` ("" when there are none).

    U+E0020-U+E007E mirror printable ASCII; renderers show nothing, a model reads them.
    """
    if text.isascii() or _TAGS.search(text) is None:
        return ""
    return "".join(chr(ord(ch) - _TAG_LO) for ch in text if 0xE0020 <= ord(ch) <= 0xE007E)


# --- patterns ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    lang: str
    category: str
    source: str
    regex: re.Pattern[str]
    yes: tuple[str, ...] = ()
    no: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Compiled:
    rules: tuple[_Rule, ...]
    index: Any  # vouched.guard.packs._query.QueryIndex over the rules
    order: Mapping[tuple[str, str], int]  # (pack, category) -> first rule position


def _literal(run: str, seams: bool = False) -> str:
    """A non-ASCII run of a pattern in comparable form; with ``seams``, a space is allowed
    between its characters and before it (matching text puts one at every Han/kana seam)."""
    from vouched.guard.packs import comparable

    s = comparable(run)
    if seams:
        return "\\s?" + "\\s?".join(_META.sub(r"\\\1", ch) for ch in s)
    return _META.sub(r"\\\1", s)


def _read(name: str) -> Mapping[str, Any]:
    raw = resources.files("vouched.guard.injection_packs").joinpath(f"{name}.toml").read_text("utf-8")
    try:
        return tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:  # a packaging bug, not a user error
        raise ConfigError(f"injection pack {name}.toml is not valid TOML: {exc}") from exc


def _entries(data: Mapping[str, Any]) -> list[tuple[str, object]]:
    """(category, entry) in file order: ``[patterns] cat = [...]`` then ``[[rule.<cat>]]`` tables."""
    out = [(c, e) for c, pats in data.get("patterns", {}).items() for e in pats]
    out += [(c, e) for c, tables in data.get("rule", {}).items() for e in tables]
    return out


def _compile_rules(name: str, data: Mapping[str, Any]) -> list[_Rule]:
    from vouched.guard.packs import entry

    whole = bool(data.get("pack", {}).get("whole_words", True))
    seams = bool(data.get("pack", {}).get("seams", False))
    out = []
    for category, item in _entries(data):
        if category not in CATEGORIES:
            raise ConfigError(f"injection pack {name}.toml: unknown category {category!r}; use one of {CATEGORIES}")
        where = f"injection pack {name}.toml [{category}]"
        src, yes, no = entry(item, where)
        if not isinstance(src, str) or not src.strip():
            raise ConfigError(f"{where}: every pattern must be a non-empty string, got {src!r}")
        body = _NON_ASCII.sub(lambda m: _literal(m.group(), seams), src)
        try:
            rx = re.compile(f"{_START}(?:{body}){_END}" if whole else f"(?:{body})")
        except re.error as exc:
            raise ConfigError(f"{where}: invalid regex {src!r}: {exc}") from None
        out.append(_Rule(name, category, src, rx, yes, no))
    return out


@lru_cache(maxsize=1)
def _compiled() -> _Compiled:
    from vouched.guard.packs._query import QueryIndex, required_query

    rules = tuple(r for n in PACKS for r in _compile_rules(n, _read(n)))
    # the prefilter: each rule runs only on texts holding every literal run it requires
    order: dict[tuple[str, str], int] = {}
    for i, r in enumerate(rules):
        order.setdefault((r.lang, r.category), i)
    return _Compiled(rules, QueryIndex.build([required_query(r.regex.pattern) for r in rules]), MappingProxyType(order))


def _packs() -> tuple[_Rule, ...]:
    """Every compiled injection rule, in pack order (kept for callers and tests)."""
    return _compiled().rules


def _forms(text: str) -> list[str]:
    """The texts patterns run on: comparable form, and again with word-splitting joiners gone."""
    from vouched.guard.packs import matching_text

    forms = [matching_text(text)]
    if _KANA.search(text):  # Japanese: the seam spaces matching_text adds between kanji and kana
        unseamed = _SEAM_SPACE.sub("", forms[0])
        if unseamed != forms[0]:
            forms.append(unseamed)
    if "\u200c" in text or "\u200d" in text:
        joined = matching_text(text.replace("\u200c", "").replace("\u200d", ""))
        if joined != forms[0]:
            forms.append(joined)
    return forms


# Where a phrase that reads as an order is not one (round 16). In es/it/pt/fr the imperative and the third person
# share a form: with its subject just before it ("el guardián olvida sus órdenes", "il bibliotecario ignora i suoi
# ordini", "que el asistente ignore sus instrucciones") the verb tells what someone does.
_SUBJECT_BEFORE = {
    "es": re.compile(r"(?:^|\s)(?:el|los|las|un|una|este|ese|aquel|esta|esa|su)\s+[^\W\d]+\s+$"),
    "it": re.compile(r"(?:^|\s)(?:il|lo|gli|un|uno|una|questo|quel)\s+[^\W\d]+\s+$|(?:^|\s)l'[^\W\d]+\s+$"),
    "pt": re.compile(r"(?:^|\s)(?:os|as|um|uma|este|esse|aquele|esta|essa)\s+[^\W\d]+\s+$"),
    "fr": re.compile(r"(?:^|\s)(?:un|une|ce|cet|cette)\s+[^\W\d]+\s+$|(?:^|\s)l'[^\W\d]+\s+$"),
}
_LIST_ITEM = re.compile(r"(?:^|\s[-*•·]|[.!?;]|\s\d{1,2}[.)])\s*$")  # a list item's or a sentence's start (lines are joined)
_LABEL_AFTER = re.compile(r"\s*[:：](?!\s*(?:on|enabled?|activ\w*|ativ\w*|attiv\w*|aktiv\w*|aan|ingeschakeld|true|yes|si|sim|oui|ja)\b)")


def _ordered(rule: _Rule, form: str, m: re.Match[str]) -> bool:
    """Whether match ``m`` of ``rule`` reads as what it seems, an order to the reader: not a verb with its subject
    before it (``_SUBJECT_BEFORE``), nor a persona's name as the label of a settings list ("Developer mode: shows
    token counts …"; "Developer mode: ON" stays an order)."""
    if rule.category == "roleplay" and _LABEL_AFTER.match(form, m.end()) and _LIST_ITEM.search(form, 0, m.start()):
        return False
    before = _SUBJECT_BEFORE.get(rule.lang)
    return before is None or rule.category != "override" or before.search(form, max(0, m.start() - 40), m.start()) is None


def _scan_form(form: str, hits: dict[tuple[str, str], InjectionHit], via: str = "") -> None:
    comp = _compiled()
    for i in comp.index.candidates(form):
        rule = comp.rules[i]
        lang = f"{via}{rule.lang}"
        if (lang, rule.category) in hits:
            continue
        for m in rule.regex.finditer(form):
            if _ordered(rule, form, m):
                hits[(lang, rule.category)] = InjectionHit(rule.category, lang, m.group(0), m.start())
                break


def _scan_phrases(text: str, forms: list[str]) -> tuple[dict[tuple[str, str], InjectionHit], list[tuple[str, str]]]:
    """The phrase packs over ``forms`` (the forms of ``text``) and over every encoded run of ``text``: (hits, the
    decoded runs)."""
    from vouched.guard.decode import decoded_forms

    hits: dict[tuple[str, str], InjectionHit] = {}
    for form in forms:
        _scan_form(form, hits)
    decoded = decoded_forms(text)
    for encoding, plain in decoded:
        for form in _forms(plain):
            _scan_form(form, hits, f"{encoding}:")
    return hits, decoded


_PAYLOADS = frozenset({"base64:", "hex:", "spaced:"})  # decoders of a delimited run (see cues.cue_hits)
_SPACED_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def scan_injection(text: str) -> list[InjectionHit]:
    """Instruction-like phrases in ``text``, one hit per (pack, category), in pack order.

    Pure and deterministic. Runs every pack (see the module docstring) on the comparable
    form of ``text`` after ``strip_controls``; tag-character smuggling is scanned as well,
    and so is every encoded run ``vouched.guard.decode.decoded_forms`` finds (base64, hex,
    ROT13, leetspeak, spaced or reversed letters): those hits carry the encoding in their
    ``lang`` ("base64:en").
    """
    from vouched.guard.cues import cue_hits, unquoted_if_about_attacks

    clean, _ = strip_controls(text)
    hidden = smuggled_text(text)
    forms = _forms(clean)
    hits, decoded = _scan_phrases(clean, forms)
    if hits:
        # a page about attacks, or a story, quotes them: then the packs read it without its quotations
        readable = unquoted_if_about_attacks(clean, forms[0])
        if readable is not clean:
            hits, decoded = _scan_phrases(readable, _forms(readable))
    for form in _forms(hidden) if hidden else []:
        _scan_form(form, hits)
    # what no phrase names: concepts that co-occur in a sentence (vouched.guard.cues)
    seen = {h.category for h in hits.values()}
    # (ROT13 rotates ASCII letters only: the rest of a rotated text was never encoded, and is not read again as addressed)
    sources = [(clean, "", forms[0]), *([(hidden, "", None)] if hidden else []),
               *((_NON_ASCII.sub(" ", plain) if enc == "rot13" else plain, f"{enc}:", None) for enc, plain in decoded)]
    for source, via, form in sources:
        # leetspeak "decodes" ordinary text with digits in it (p53, 5S RNP): it is read as written, not as addressed
        # (Chinese or Japanese written with a space between characters, as old man pages are, is spaced for the eye, not hidden)
        payload = via in _PAYLOADS and not (via == "spaced:" and _SPACED_CJK.search(source) is not None)
        for h in cue_hits(source, form, decoded=bool(via) and via != "leet:", payload=payload):
            if h.category not in seen:
                seen.add(h.category)
                hits[(f"{via}cue", h.category)] = InjectionHit(h.category, f"{via}cue", h.match, h.start)
    order = _compiled().order
    return sorted(hits.values(), key=lambda h: (order.get((h.lang.split(":")[-1], h.category), 0), h.lang))


def injection_flags(hits: Iterable[InjectionHit]) -> tuple[str, ...]:
    """``injection:<category>`` flags of ``hits``, in ``CATEGORIES`` order, no repeats."""
    found = {h.category for h in hits}
    return tuple(INJECTION_PREFIX + c for c in CATEGORIES if c in found)


def inspect_text(text: str) -> tuple[str, tuple[str, ...]]:
    """(``text`` with controls stripped, its flags: ``injection:*`` then ``control:*``)."""
    clean, controls = strip_controls(text)
    return clean, injection_flags(scan_injection(text)) + controls


# --- the answer path -------------------------------------------------------------------------


def is_flagged(flags: Iterable[str]) -> bool:
    """True when ``flags`` hold an ``injection:*`` flag (control flags alone do not count:
    the characters were removed, and the cleaned text was scanned)."""
    return any(f.startswith(INJECTION_PREFIX) for f in flags)


def _flags_of(item: Any) -> tuple[str, ...]:
    if isinstance(item, (tuple, list, frozenset, set)):
        return tuple(item)
    flags = getattr(item, "flags", None)
    if flags is None and hasattr(item, "chunk"):  # a retrieved Passage
        flags = item.chunk.flags
    return tuple(flags or ())


def sole_flagged_evidence(passages: Iterable[Any]) -> bool:
    """True when there is evidence and all of it is flagged as instruction-like.

    ``passages``: ``Passage``s, ``Chunk``s, ``PromptSource``s (anything with ``.flags`` or
    ``.chunk.flags``) or plain flag tuples. Called with the sources a sentence cites, True
    means the sentence rests on flagged text alone and must be held; called with all the
    sources of a prompt, True means the answer would, and the question should be refused.
    An empty collection is not "flagged evidence" (it is no evidence: L2's business).
    """
    seen = False
    for item in passages:
        seen = True
        if not is_flagged(_flags_of(item)):
            return False
    return seen
