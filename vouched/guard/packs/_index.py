"""A sound pre-filter for many regexes: run only the rules whose required text is present.

For each rule, the parsed regex (``re._parser``, CPython's own parser) is walked to find
a set of literal strings at least one of which occurs in EVERY match of it (``{"rate"}``
for ``(?:hourly|daily)\\s+rates?``, ``{"her", "his"}`` for ``(?:her|his)\\s+\\w+``);
among the candidate sets the one whose rarest 3-gram is least common in the stop-word
lists of vouched.text is kept. All literals go into one prefix-factored regex (a trie)
that reports the literals present in a text in one C-level scan; only their rules run.
A rule with no literal of two or more characters runs on every text.

Soundness: if a rule matches, one of its literals is in the text; at that position the
finder reports that literal or a longer one it is a prefix of, and ``hits`` maps the
longer one to the rules of all its indexed prefixes. So the filter only skips rules that
cannot match. (The idea is the trigram pre-filter of Russ Cox, "Regular Expression
Matching with a Trigram Index", 2012, with whole literals instead of trigrams.)
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

import re._constants as _c
import re._parser as _parser

from vouched.text import LANGS, stopwords

_MAXSET = 64
_Lits = frozenset[str]


def _exact_item(op, av) -> set[str] | None:
    """All strings one parsed item can match, when that set is finite and small."""
    if op is _c.LITERAL:
        return {chr(av)}
    if op is _c.SUBPATTERN:
        return _exact(av[3]) if not av[1] else None
    if op is _c.BRANCH:
        out: set[str] = set()
        for branch in av[1]:
            e = _exact(branch)
            if e is None:
                return None
            out |= e
        return out if len(out) <= _MAXSET else None
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        lo, hi, body = av
        if hi <= 1:
            e = _exact(body)
            return None if e is None else (e | {""} if lo == 0 else e)
        return None
    if op is _c.IN and all(o is _c.LITERAL for o, _ in av) and len(av) <= 8:
        return {chr(v) for _, v in av}
    return None


def _exact(items) -> set[str] | None:
    acc = {""}
    for op, av in items:
        e = _exact_item(op, av)
        if e is None:
            return None
        acc = {a + b for a in acc for b in e}
        if len(acc) > _MAXSET:
            return None
    return acc


def _required(items, score) -> list[set[str]]:
    """Candidate OR-sets for a sequence: each one is present in every match of it."""
    cands: list[set[str]] = []
    acc = {""}

    def flush(s: set[str]) -> None:
        if "" not in s:
            cands.append(s)

    for op, av in items:
        e = _exact_item(op, av)
        if e is not None:
            grown = {a + b for a in acc for b in e}
            if len(grown) <= _MAXSET:
                acc = grown
            else:
                flush(acc)
                acc = e
            continue
        flush(acc)
        acc = {""}
        inner: set[str] | None = None
        if op is _c.SUBPATTERN and not av[1]:
            inner = _best(_required(av[3], score), score)
        elif op is _c.ATOMIC_GROUP:
            inner = _best(_required(av, score), score)
        elif op is _c.BRANCH:
            subs = [_best(_required(b, score), score) for b in av[1]]
            if all(subs):
                inner = set().union(*subs)
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT) and av[0] >= 1:
            inner = _best(_required(av[2], score), score)
        if inner:
            cands.append(inner)
    flush(acc)
    return cands


def _best(cands: list[set[str]], score) -> set[str] | None:
    usable = [c for c in cands if all(len(s) >= 2 for s in c)]
    if not usable:
        return None
    # prefer sets without two-character literals ("ai", "si" occur inside many words), then
    # the set whose most common literal is rarest, then the smaller set
    return min(usable, key=lambda c: (min(len(s) for s in c) < 3, max(score(s)[0] for s in c), len(c)))


def _grams(s: str, n: int) -> list[str]:
    return [s[i : i + n] for i in range(len(s) - n + 1)]


@lru_cache(maxsize=1)
def _commonness() -> Mapping[str, int]:
    """2- and 3-gram counts over the stop words of all languages (space-padded)."""
    counts: Counter[str] = Counter()
    for lang in LANGS:
        for w in stopwords(lang):
            padded = f" {w} "
            counts.update(_grams(padded, 2))
            counts.update(_grams(padded, 3))
    return counts


def _pick_gram(s: str) -> tuple[int, str]:
    """(commonness, gram): the rarest 3-gram of ``s`` (its 2-gram when it has two characters)."""
    common = _commonness()
    grams = _grams(s, 3) or _grams(s, 2)
    return min((common.get(g, 0), g) for g in grams)


def required_literals(body: str) -> frozenset[str] | None:
    """Strings one of which is in every text the regex ``body`` matches; None if unknown.

    Parses ``body`` on its own, so it doubles as validation: raises ``re.error``.
    """
    parsed = _parser.parse(body)
    best = _best(_required(list(parsed), _pick_gram), _pick_gram)
    return frozenset(best) if best else None


def _trie(words: Iterable[str]) -> str:
    """A regex matching the longest of ``words`` that starts at a position (prefix-factored)."""
    root: dict = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        alts = [re.escape(ch) + emit(node[ch]) for ch in sorted(k for k in node if k)]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


@dataclass(frozen=True)
class LiteralIndex:
    """Which rules may match a text, from the literals found in it.

    ``finder`` reports, at every position, the longest indexed literal starting there
    (a look-ahead, so occurrences may overlap); ``hits[lit]`` holds the rules of that
    literal and of every indexed literal that is a prefix of it, so nothing shorter
    starting at the same position is lost.
    """

    finder: re.Pattern[str] | None
    hits: Mapping[str, frozenset[int]]
    always: frozenset[int]
    size: int
    ascii_finder: re.Pattern[str] | None = None  # the ASCII literals only: enough for an ASCII text

    @classmethod
    def build(cls, literal_sets: Sequence[frozenset[str] | None], short_at_word_start: bool = False) -> "LiteralIndex":
        """From each rule's ``required_literals`` (None: the rule always runs).

        ``short_at_word_start``: a two-letter ASCII literal counts only where it starts a word
        ("ai" in "ai model", not in "again"). Not sound for a rule whose two-character
        literal may sit inside a word; the injection packs (whole words, long documents, where
        "ai", "ia", "si" occur inside most texts) use it, the L1 packs do not.
        """
        by_lit: dict[str, set[int]] = {}
        always: set[int] = set()
        for i, lits in enumerate(literal_sets):
            if lits is None:
                always.add(i)
                continue
            for lit in lits:
                by_lit.setdefault(lit, set()).add(i)
        hits = {}
        for lit in by_lit:
            ids: set[int] = set()
            for n in range(1, len(lit) + 1):
                ids |= by_lit.get(lit[:n], set())
            hits[lit] = frozenset(ids)
        def finder_for(lits: list[str]) -> re.Pattern[str] | None:
            if not lits:
                return None
            if not short_at_word_start:
                return re.compile(f"(?=({_trie(lits)}))")
            # only Latin-script short literals: Han and kana have no word starts to wait for
            short = [x for x in lits if len(x) <= 2 and x.isascii() and x.isalpha()]
            long_ = [x for x in lits if x not in short]
            parts = ([f"(?=({_trie(long_)}))"] if long_ else []) + ([f"(?<![^\\W\\d_])(?=({_trie(short)}))"] if short else [])
            return re.compile("|".join(parts))

        finder = finder_for(list(by_lit))
        ascii_finder = finder_for([lit for lit in by_lit if lit.isascii()])
        return cls(finder, hits, frozenset(always), len(literal_sets), ascii_finder)

    def candidates(self, text: str) -> list[int]:
        """Positions of the rules that may match ``text``, in rule order."""
        found = set(self.always)
        # a non-ASCII literal cannot occur in an ASCII text, so the smaller finder suffices there
        finder = self.ascii_finder if text.isascii() else self.finder
        if finder is not None:
            hits = self.hits
            for lit in set(finder.findall(text)):
                if isinstance(lit, tuple):  # two groups: long literals, word-start short ones
                    for part in lit:
                        if part:
                            found |= hits[part]
                else:
                    found |= hits[lit]
        return sorted(found)
