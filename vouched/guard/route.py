"""The records route and follow-up helpers (pure functions over the pattern packs).

* ``match_overview`` — is this a question about the work as a whole ("what does she do
  now?", "where did she study?", "who is Leila Navid?")? Overview patterns match the
  WHOLE question (``^...$`` in the packs, after edge punctuation is stripped), so a
  question about one specific thing ("what did she build for Tessera Health?") never
  routes to records: it goes to retrieval.
* ``mentions_subject`` — the name, an alias, or a third-person pronoun of the configured
  gender in any language.
* ``is_followup`` — does the question lean on the previous turn (connective at the start,
  an anaphoric word or an ordinal in a short question, or one or two words)?
* ``resolve_ordinal`` — "the second one" → the second item of the previous answer, read
  unambiguously (numbered list, else bullets, else quoted names, else bold/heading titles).

Every function takes an optional ``packs`` (default: the ten built-in packs, cached).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from vouched.guard.packs import Packs, default_packs, matching_text, subject_texts
from vouched.text.scripts import HAN_RANGES

__all__ = [
    "OVERVIEW_TOPICS",
    "OverviewMatch",
    "is_followup",
    "list_items",
    "match_overview",
    "mentions_subject",
    "resolve_ordinal",
]

OVERVIEW_TOPICS = (
    "current", "recent", "career", "projects", "research", "writing",
    "education", "skills", "services", "talks", "overview",
)

_EDGES = re.compile(r"^[\s¿¡\"'«»“”„()\[\]*_-]+|[\s?!.。？！؟,،;:…\"'«»“”()\[\]*_-]+$")
_LATIN_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class OverviewMatch:
    topic: str
    lang: str
    pattern: str
    matched: str


def _clean(question: str, subject_names: Sequence[str] = ()) -> tuple[str, ...]:
    return tuple(_EDGES.sub("", t) for t in subject_texts(question, subject_names))


def _size(text: str) -> int:
    """Words in ``text``: space-separated tokens, Han counted as one word per 2 characters."""
    han = sum(1 for ch in text if any(lo <= ord(ch) <= hi for lo, hi in HAN_RANGES))
    latin = len(_LATIN_WORD.findall(re.sub(r"[\u3400-\u9fff\uf900-\ufaff]", " ", text)))
    return latin + (han + 1) // 2


def _pick(packs: Packs, langs: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(x for x in (langs or packs.langs) if x in packs.by_lang)


def _ordinal_position(text: str, packs: Packs, langs: Sequence[str] | None = None) -> str | None:
    """"1".."10" or "last" if ``text`` is an ordinal follow-up in exactly one sense."""
    found: set[str] = set()
    for lang in _pick(packs, langs):
        rx = packs.by_lang[lang].ordinal
        m = rx.search(text) if rx is not None else None
        if m is not None:
            found.update(k[1:] for k, v in m.groupdict().items() if v is not None and k.startswith("o"))
    return found.pop() if len(found) == 1 else None


def is_ordinal(question: str, *, packs: Packs | None = None, langs: Sequence[str] | None = None,
               matching: str | None = None) -> bool:
    """True for a short follow-up that points at an item by position ("the second one", «دومی»).

    ``matching``: ``matching_text(question)`` when the caller already has it (here and below:
    answer.front.Question.match_text, so the question is not normalised again)."""
    packs = packs or default_packs()
    text = _EDGES.sub("", matching_text(question) if matching is None else matching)
    if not 0 < _size(text) <= 8:
        return False
    return _ordinal_position(text, packs, _pick(packs, langs)) is not None


def is_followup(question: str, *, packs: Packs | None = None, langs: Sequence[str] | None = None,
                matching: str | None = None) -> bool:
    """True for a short question that leans on the previous turn.

    A connective at the start ("and …", "what about …", "¿y …", «و …», "那…"); or at most
    two words ("how much?", "and hers?", "el segundo"); or at most eight words with an
    anaphoric word ("the other one", "¿y eso?", «اون چی؟») or an ordinal.
    """
    packs = packs or default_packs()
    text = _EDGES.sub("", matching_text(question) if matching is None else matching)
    size = _size(text)
    if size == 0:
        return False
    chosen = _pick(packs, langs)
    for lang in chosen:
        rx = packs.by_lang[lang].followup_starts
        if rx is not None and rx.match(text):
            return True
    if size <= 2:
        return True
    if size > 8:
        return False
    for lang in chosen:
        rx = packs.by_lang[lang].followup_anaphora
        if rx is not None and rx.search(text):
            return True
    return _ordinal_position(text, packs, chosen) is not None


def mentions_subject(
    question: str,
    subject_names: Sequence[str],
    pronoun: str,
    *,
    packs: Packs | None = None,
    langs: Sequence[str] | None = None,
    texts: Sequence[str] | None = None,
) -> bool:
    """The name, an alias, or a third-person pronoun of gender ``pronoun`` in any language.

    ``texts``: the question's ``subject_texts`` when the caller already has them."""
    texts = subject_texts(question, subject_names) if texts is None else texts
    if len(texts) > 1:
        return True
    packs = packs or default_packs()
    for lang in _pick(packs, langs):
        rx = packs.by_lang[lang].pronouns.get(pronoun)
        if rx is not None and rx.search(texts[0]):
            return True
    return False


def match_overview(
    question: str,
    *,
    subject_names: Sequence[str] = (),
    pronoun: str = "they",
    previous_question: str | None = None,
    langs: Sequence[str] | None = None,
    packs: Packs | None = None,
    texts: Sequence[str] | None = None,
) -> OverviewMatch | None:
    """The records topic of a question about the work as a whole, or None.

    A bare continuation (at most three words, a follow-up, not an ordinal: "and now?",
    "¿y ahora?") inherits the topic of ``previous_question``. ``texts``: the question's
    ``subject_texts`` when the caller already has them (answer.front.Question.matching).
    """
    del pronoun  # overview patterns accept any third-person pronoun and the placeholder
    packs = packs or default_packs()
    chosen = _pick(packs, langs)
    cleaned = _clean(question, subject_names) if texts is None else tuple(_EDGES.sub("", t) for t in texts)
    for text in cleaned:
        for lang in chosen:
            combined = packs.overview.get(lang)
            hit = combined.search(text) if combined is not None else None
            if hit is not None:
                topic, m = hit
                rule = next((r for r in packs.by_lang[lang].overview[topic] if r.regex.match(text, m.start())), None)
                return OverviewMatch(topic, lang, rule.source if rule else "", m.group(0))
    matching = texts[-1] if texts else None  # subject_texts ends with the question's matching text
    if previous_question and is_followup(question, packs=packs, langs=langs, matching=matching):
        text = _EDGES.sub("", matching_text(question) if matching is None else matching)
        if _size(text) <= 3 and _ordinal_position(text, packs, chosen) is None:
            return match_overview(previous_question, subject_names=subject_names, langs=langs, packs=packs)
    return None


# --- ordinals ---------------------------------------------------------------------------

_NUMBERED = re.compile(r"^(\s*)(\d{1,2})[.)]\s+(\S.*)$")
_BULLET = re.compile(r"^(\s*)[-•*–·▪●]\s+(\S.*)$")
_QUOTED = re.compile(r"“([^”\n]{1,80})”|«([^»\n]{1,80})»|„([^“”\n]{1,80})[“”]|「([^」\n]{1,80})」|『([^』\n]{1,80})』|\"([^\"\n]{1,80})\"")
_BOLD = re.compile(r"\*\*([^*\n]{1,80})\*\*|__([^_\n]{1,80})__")
_HEADING = re.compile(r"^#{1,6}\s+(\S.*)$", re.M)
_CITES = re.compile(r"\s*\[\d+(?:\s*[,،、]\s*\d+)*\]")


def _title(item: str) -> str:
    item = _CITES.sub("", item).strip()
    for rx in (_BOLD, _QUOTED):
        m = rx.match(item)
        if m is not None:
            return next(g for g in m.groups() if g is not None).strip()
    return _BOLD.sub(lambda m: m.group(1) or m.group(2), item).strip().rstrip(".;,،")


def _blocks(lines: list[str], rx: re.Pattern[str]) -> list[list[tuple[int, re.Match[str]]]]:
    """Runs of top-level matching lines (blank lines and deeper-indented lines do not break a run)."""
    blocks: list[list[tuple[int, re.Match[str]]]] = []
    current: list[tuple[int, re.Match[str]]] = []
    base: int | None = None
    for line in lines:
        m = rx.match(line)
        indent = len(m.group(1)) if m else None
        if m is not None and (base is None or indent <= base):
            base = indent if base is None else base
            current.append((indent, m))
        elif not line.strip() or (base is not None and len(line) - len(line.lstrip()) > base):
            continue
        elif current:
            blocks.append(current)
            current, base = [], None
    if current:
        blocks.append(current)
    return blocks


def list_items(answer: str) -> tuple[str, ...] | None:
    """The items ``answer`` enumerates, or None when they cannot be read unambiguously."""
    lines = answer.splitlines()
    numbered = _blocks(lines, _NUMBERED)
    bullets = _blocks(lines, _BULLET)
    if numbered:
        top = numbered[0][0][0]
        if len(numbered) > 1 or any(b[0][0] <= top for b in bullets):
            return None  # two lists, or a list beside top-level bullets: which one is meant?
        nums = [int(m.group(2)) for _, m in numbered[0]]
        if nums != list(range(1, len(nums) + 1)):
            return None
        return tuple(_title(m.group(3)) for _, m in numbered[0])
    if bullets:
        return tuple(_title(m.group(2)) for _, m in bullets[0]) if len(bullets) == 1 else None
    quoted = [next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(answer)]
    if quoted:
        return tuple(dict.fromkeys(q for q in quoted if q))
    bold = [(m.group(1) or m.group(2)).strip() for m in _BOLD.finditer(answer)]
    if bold:
        return tuple(dict.fromkeys(bold))
    heads = [h.strip() for h in _HEADING.findall(answer)]
    return tuple(dict.fromkeys(heads)) if heads else None


def resolve_ordinal(question: str, previous_answer: str, *, packs: Packs | None = None,
                    matching: str | None = None) -> str | None:
    """The previous answer's item an ordinal follow-up points to, or None.

    None when the question is not an ordinal follow-up, when the items cannot be read
    unambiguously, or when the position is past the last item (the caller then joins
    the start of the previous answer instead).
    """
    packs = packs or default_packs()
    pos = _ordinal_position(_EDGES.sub("", matching_text(question) if matching is None else matching), packs)
    if pos is None or not previous_answer:
        return None
    items = list_items(previous_answer)
    if not items:
        return None
    if pos == "last":
        return items[-1]
    n = int(pos)
    return items[n - 1] if 1 <= n <= len(items) else None
