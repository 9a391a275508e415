"""L2 coverage: the question's anchors must be in the passages that would be given (pure).

After the threshold passes (the passages are about the right *topic*), every name, code,
number and quoted title of the question (vouched.text.anchors) must be found in one of the
passages — whole word, normalised and stemmed as the keyword index does — and at least
``rare_share`` of its rare words (when it has ``MIN_RARE`` or more), so that a paraphrase
with one synonym still answers.

Languages. An anchor that is not script-independent is looked for only in passages written
in the question's language (a Spanish word cannot be expected in an English page; the dense
retriever found that page across languages). Numbers, codes and Latin-script names are
looked for in every passage. An anchor with no passage to be looked for in is not counted
either way; rare words count only against passages in the question's language.

A word is found when all of an anchor's analysed terms are in one passage's analysed terms
(or its plain words are, for a stemmer that differs); a name only by its plain words, except
in languages where names inflect (Russian, German) and in a passage of another language
("Canarias" / "Canary"), because a stem would let "Telefónica" match "teléfono"; a code or number when its words appear in that order ("pg-core-2" is the
words pg core 2 in sequence).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from vouched.text import analyze, words
from vouched.text.anchors import Anchor, Anchors

DEFAULT_RARE_SHARE = 0.5
# Rare words are judged only when the question has at least this many: one missing rare word
# is as often a paraphrase ("how long" where the page says "within 30 days") as a sign of
# another subject, and names, codes and numbers already carry the hard cases.
MIN_RARE = 2


@dataclass(frozen=True)
class PassageKeys:
    lang: str
    terms: frozenset[str]  # analysed terms and plain words
    joined: str  # " w1 w2 … " for in-order matches


@dataclass(frozen=True)
class CoverageVerdict:
    passed: bool
    anchors: tuple[str, ...]  # "kind:text" for every anchor
    found: tuple[str, ...]
    missing: tuple[str, ...]
    rare_found: int = 0
    rare_total: int = 0
    reason: str = ""

    def trace(self) -> dict:
        return {"anchors": list(self.anchors), "found": list(self.found), "missing": list(self.missing),
                "rare": [self.rare_found, self.rare_total]}


@lru_cache(maxsize=4096)
def passage_keys(text: str, lang: str) -> PassageKeys:
    """What a passage offers to the anchors (memoised: the same chunks come back question after question)."""
    plain = words(text)
    stripped = [w[:-2] if w.endswith(("'s", "’s")) else w for w in plain]
    terms = frozenset(analyze(text, lang)) | frozenset(plain) | frozenset(stripped)
    return PassageKeys(lang, terms, " " + " ".join(plain) + " ")


def _same_script(a: str, b: str) -> bool:
    latin = {"en", "es", "pt", "fr", "de"}
    return a == b or (a in latin and b in latin)


# Languages whose names inflect ("в Яндексе", "Googles"): a name matches on its stems there;
# elsewhere on its plain words, because a stem would let "Telefónica" match "teléfono".
_INFLECTED_NAMES = frozenset({"ru", "de"})


def _found_in(a: Anchor, p: PassageKeys, lang: str) -> bool:
    if a.kind in ("code", "number"):
        return (" " + " ".join(a.words) + " ") in p.joined
    if set(a.words) <= p.terms:
        return True
    # Across languages a name is spelled by each language's rules (Canarias / Canary, Lisboa /
    # Lisbon): there the stems are the bridge.
    return (a.kind != "name" or lang in _INFLECTED_NAMES or p.lang != lang) and set(a.terms) <= p.terms


def _label(a: Anchor) -> str:
    return f"{a.kind}:{a.text}"


def check_coverage(anchors: Anchors, passages: Sequence[PassageKeys], *,
                   rare_share: float = DEFAULT_RARE_SHARE) -> CoverageVerdict:
    """Whether ``passages`` cover ``anchors`` (see the module docstring)."""
    labels = tuple(_label(a) for a in anchors.items)
    if not anchors.items:
        return CoverageVerdict(True, (), (), ())
    found: list[str] = []
    missing: list[str] = []
    for a in anchors.required:
        pool = passages if a.script_free else [p for p in passages if _same_script(p.lang, anchors.lang)]
        if not pool:
            continue
        (found if any(_found_in(a, p, anchors.lang) for p in pool) else missing).append(_label(a))
    same_lang = [p for p in passages if p.lang == anchors.lang]
    rare_total = rare_found = 0
    if same_lang:
        for a in anchors.rare:
            rare_total += 1
            if any(_found_in(a, p, anchors.lang) for p in same_lang):
                rare_found += 1
                found.append(_label(a))
            else:
                missing.append(_label(a))
    rare_ok = rare_total < MIN_RARE or rare_found >= rare_share * rare_total
    required_missing = [m for m in missing if not m.startswith("rare:")]
    passed = not required_missing and rare_ok
    reason = ""
    if required_missing:
        reason = "in none of the passages: " + ", ".join(required_missing)
    elif not rare_ok:
        reason = f"{rare_found} of {rare_total} rare words found (< {rare_share:.0%})"
    return CoverageVerdict(passed, labels, tuple(found), tuple(missing), rare_found, rare_total, reason)


def passages_keys(passages) -> list[PassageKeys]:
    """Keys of retrieved passages (``vouched.types.Passage``): title, section and text, as given."""
    return [passage_keys(p.chunk.embed_text, p.chunk.lang) for p in passages]
