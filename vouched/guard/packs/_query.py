"""A stricter sound pre-filter: every literal a rule needs, as an AND/OR query.

``_index.LiteralIndex`` keeps one literal set per rule (one of them occurs in every match).
Long documents hold most single words somewhere, so that lets many rules through: a
chunk of 1,300 characters passed about 13 of the injection rules, each searched in full.
This module keeps everything the parsed regex requires, as Russ Cox's trigram index does
("Regular Expression Matching with a Trigram Index", 2012) but with whole literals: a
sequence needs each of its literal runs (AND), an alternation needs one of its branches
(OR). ``(?:ignore|disregard)\\s+(?:the\\s+)?(?:previous|prior)\\s+instructions?`` becomes
``{ignore, disregard} AND {previous, prior} AND {instruction}``.

Each literal node also records what the regex guarantees around it: *word* (a non-word
character or the text edge on both sides, as between ``(?<!\\w)``/``\\s`` and ``(?!\\w)``/
``\\s``), *initial* (only before it) or *anywhere* (after ``\\S+``, ``\\s*`` or a letter, a
literal starting with punctuation, every literal of a pack without word boundaries such as
Chinese). A text's literals are then found four ways (``QueryIndex.present``):

* whole-word literals: a set intersection with the text's ``\\w+`` runs;
* word-initial ASCII literals: one regex scan (a prefix-factored trie behind ``(?<!\\w)``)
  that skips every position inside a word;
* literals holding a non-ASCII character: two more scans, run only when the text holds the
  first non-ASCII character of one of them (an English chunk skips them);
* ASCII literals wanted anywhere (few: markup, "](", ASCII after ``\\S+``): ``in`` tests,
  made only when a rule's query gets to that node.

A rule is looked at only when the finders report one of its *entry* literals (those of its
rarest required node, ``_entry``); a rule without such a node is evaluated on every text.

Soundness: if a rule matches, each literal node its query requires is satisfied inside the
match, at a position the finder for that literal's kind inspects (a word-initial literal has
a non-word character before it by construction, a whole word one on both sides); a finder
reports there the longest literal of its group and ``prefixes`` adds every literal of the
group it starts with; lazy nodes test the text itself. So the query holds on the text and
the rule runs. A rule the parser can say nothing about (no literal of two or more
characters, or one Han/kana/Hangul character, required anywhere) always runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence, Union

import re._constants as _c
import re._parser as _parser

from vouched.guard.packs._index import _MAXSET, _exact_item, _pick_gram, _trie

__all__ = ["Query", "QueryIndex", "required_query"]

# a query: None (nothing known: always true), ("lit", literals, word_initial),
# ("and", children) or ("or", children)
Query = Union[None, tuple]

_WORD = re.compile(r"\w")


def _is_word(ch: str) -> bool:
    return _WORD.match(ch) is not None


def _class_nonword(av) -> bool:
    """True when a parsed character class can only match non-word characters."""
    for op, arg in av:
        if op is _c.LITERAL:
            if _is_word(chr(arg)):
                return False
        elif op is _c.CATEGORY:
            if arg not in (_c.CATEGORY_SPACE, _c.CATEGORY_NOT_WORD):
                return False
        else:  # ranges, negation, other categories: could be a word character
            return False
    return True


def _is_not_word_behind(av) -> bool:
    """``(?<!\\w)``: a negative look-behind on one word character."""
    direction, body = av
    if direction != -1:
        return False
    items = list(body)
    if len(items) != 1:
        return False
    op, arg = items[0]
    return op is _c.IN and list(arg) == [(_c.CATEGORY, _c.CATEGORY_WORD)]


def _and(parts: list[Query]) -> Query:
    kept = [p for p in parts if p is not None]
    flat: list[tuple] = []
    for p in kept:
        flat.extend(p[1] if p[0] == "and" else (p,))
    if not flat:
        return None
    return flat[0] if len(flat) == 1 else ("and", tuple(flat))


def _or(parts: list[Query]) -> Query:
    if not parts or any(p is None for p in parts):
        return None
    flat: list[tuple] = []
    for p in parts:
        flat.extend(p[1] if p[0] == "or" else (p,))
    # literal nodes of the same kind merge: "one of these" either way
    merged: dict[bool, set[str]] = {}
    rest = []
    for p in flat:
        if p[0] == "lit":
            merged.setdefault(p[2], set()).update(p[1])
        else:
            rest.append(p)
    flat = [("lit", frozenset(v), k) for k, v in merged.items()] + rest
    return flat[0] if len(flat) == 1 else ("or", tuple(flat))


def _usable(s: str) -> bool:
    """Long enough to tell texts apart: two characters, or one Han/kana/Hangul character."""
    return len(s) >= 2 or (len(s) == 1 and ord(s) >= 0x2E80)


def _run_node(strings: set[str], ws: bool, final: bool) -> Query:
    """The node for a run of exact items: ``ws`` — a non-word character precedes it in every
    match; ``final`` — one follows it."""
    if not strings or not all(_usable(s) for s in strings):
        return None
    if ws and all(_is_word(s[0]) for s in strings):
        kind = "word" if final and all(_WHOLE.fullmatch(s) for s in strings) else "initial"
    else:
        kind = "anywhere"
    return ("lit", frozenset(strings), kind)


_WHOLE = re.compile(r"\w+")
_LAST_WORDS: tuple = (None, [])  # (the last text whose words were read, its words): the injection scan's cue gate reads the same form


def words_of(text: str) -> list[str]:
    """``\\w+`` runs of ``text``, remembered for the last text (the phrase prefilter and the cue gate share them).
    One tuple is rebound at a time, so a thread never pairs one text with another's words."""
    global _LAST_WORDS
    last = _LAST_WORDS
    if last[0] is text:
        return last[1]
    words = _WHOLE.findall(text)
    _LAST_WORDS = (text, words)
    return words


def _starts_nonword(op, av, after: bool) -> bool:
    """True when every match of the item, followed by what ``after`` describes, begins with a
    non-word character or the text end (``after``: the same of what follows the item)."""
    if op is _c.LITERAL:
        return not _is_word(chr(av))
    if op is _c.IN:
        return _class_nonword(av)
    if op is _c.SUBPATTERN:
        return False if (av[1] or av[2]) else _seq_starts(av[3], after)
    if op is _c.ATOMIC_GROUP:
        return _seq_starts(av, after)
    if op is _c.BRANCH:
        return all(_seq_starts(b, after) for b in av[1])
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        lo, _, body = av
        first = _seq_starts(body, after)
        return first if lo >= 1 else (first and after)
    if op is _c.ASSERT_NOT and av[0] == 1 and list(av[1]) == [(_c.IN, [(_c.CATEGORY, _c.CATEGORY_WORD)])]:
        return True  # (?!\w)
    if op in (_c.ASSERT, _c.ASSERT_NOT, _c.AT):
        return after
    return False


def _seq_starts(items, after: bool) -> bool:
    for op, av in reversed(list(items)):
        after = _starts_nonword(op, av, after)
    return after


def _seq(items, ws: bool, after: bool = False) -> tuple[Query, bool]:
    """(query, ws after) for a parsed sequence entered with ``ws`` (a non-word character
    before it) and followed by what ``after`` says (a non-word character after it)."""
    items = list(items)
    follow = [after] * (len(items) + 1)  # follow[i]: a non-word char begins what follows item i-1
    for i in range(len(items) - 1, -1, -1):
        follow[i] = _starts_nonword(items[i][0], items[i][1], follow[i + 1])
    parts: list[Query] = []
    acc: set[str] = {""}
    acc_ws = ws  # the state where the current run of exact items started

    def flush(i: int) -> None:
        if acc != {""}:
            parts.append(_run_node(acc if "" not in acc else set(), acc_ws, follow[i]))

    for i, (op, av) in enumerate(items):
        e = _exact_item(op, av)
        if e is not None:
            grown = {a + b for a in acc for b in e}
            if len(grown) <= _MAXSET:
                if acc == {""}:
                    acc_ws = ws
                acc = grown
            else:
                flush(i)
                acc, acc_ws = set(e), ws
            ws = _exact_end(e, ws)
            continue
        flush(i)
        acc = {""}
        q, ws_after = _item(op, av, ws, follow[i + 1])
        parts.append(q)
        ws = ws_after
        acc_ws = ws
    flush(len(items))
    return _and(parts), ws


def _exact_end(strings: set[str], ws: bool) -> bool:
    """ws after a finite set of strings: each non-empty one ends in a non-word character."""
    ends = [not _is_word(s[-1]) for s in strings if s]
    if "" in strings:
        return ws and all(ends)
    return all(ends)


def _item(op, av, ws: bool, after: bool) -> tuple[Query, bool]:
    if op is _c.SUBPATTERN:
        if av[1] or av[2]:  # inline flags change what literals mean: opaque
            return None, False
        return _seq(av[3], ws, after)
    if op is _c.ATOMIC_GROUP:
        return _seq(av, ws, after)
    if op is _c.BRANCH:
        results = [_seq(b, ws, after) for b in av[1]]
        return _or([q for q, _ in results]), all(w for _, w in results)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        lo, hi, body = av
        # the first pass is followed by the way out or, when it may repeat, by another pass
        body_after = after if hi == 1 else (after and _seq_starts(body, False))
        q_first, end_first = _seq(body, ws, body_after)
        _, end_later = _seq(body, False, body_after)
        end = end_first if hi == 1 else (end_first and end_later)
        if lo == 0:
            return None, ws and end
        return q_first, end
    if op is _c.IN:
        return None, _class_nonword(av)
    if op is _c.ASSERT_NOT and _is_not_word_behind(av):
        return None, True
    if op in (_c.ASSERT, _c.ASSERT_NOT, _c.AT):
        return None, ws  # zero width
    return None, False  # ANY, NOT_LITERAL, CATEGORY, group references ...


def required_query(pattern: str) -> Query:
    """What every match of the regex ``pattern`` needs in the text (see the module docstring)."""
    q, _ = _seq(list(_parser.parse(pattern)), False)
    return q


def _literals(q: Query, out: set[tuple[str, str]]) -> None:
    """(literal, kind) for every literal node of ``q``."""
    if q is None:
        return
    if q[0] == "lit":
        out.update((s, q[2]) for s in q[1])
        return
    for child in q[1]:
        _literals(child, out)


def _looked_up(q: tuple) -> tuple[frozenset[str], tuple[str, ...]]:
    """A literal node's (literals the finders report, literals tested with ``in``): ASCII
    literals to be found anywhere are few and are tested on the text only when needed."""
    if q[2] != "anywhere":
        return q[1], ()
    lazy = tuple(sorted(s for s in q[1] if s.isascii()))
    return q[1].difference(lazy), lazy


def _entry(q: tuple) -> frozenset[str] | None:
    """Non-lazy literals one of which is in every text ``q`` holds on (None: none such):
    a rule is looked at only when the finders report one of them. Of an AND's children the
    one with the rarest literals is taken (``_rarity``)."""
    if q[0] == "lit":
        found, lazy = _looked_up(q)
        return None if lazy else found
    subs = [_entry(c) for c in q[1]]
    if q[0] == "or":
        return None if any(e is None for e in subs) else frozenset().union(*subs)
    usable = [e for e in subs if e is not None]
    if not usable:
        return None
    return min(usable, key=_rarity)


def _rarity(lits: frozenset[str]) -> tuple:
    """Sort key, rarest first: sets without a stop word of any language, then without a
    literal of under four characters, then by the commonness of their most common literal's
    rarest 3-gram among the stop words (as ``_index`` scores literals), then smaller sets."""
    stop = _all_stopwords()
    return (sum(x in stop for x in lits), sum(len(x) < 4 and x.isascii() for x in lits),
            max(_pick_gram(x)[0] if len(x) > 1 else 0 for x in lits), len(lits))


@lru_cache(maxsize=1)
def _all_stopwords() -> frozenset[str]:
    from vouched.text import LANGS, stopwords

    return frozenset(w for lang in LANGS for w in stopwords(lang))


def _compile(q: tuple):
    """``q`` as a function of (the set of literals found, the text), and its cost (0: no
    substring test). A node's lazy literals are tested on the text with ``in`` only when the query
    gets to it; nodes that need no test come first in every AND and OR (``_looked_up``)."""
    if q[0] == "lit":
        found, look = _looked_up(q)
        if not look:
            return (lambda present, text: not found.isdisjoint(present)), 0
        if not found:
            return (lambda present, text: any(s in text for s in look)), 1
        return (lambda present, text: not found.isdisjoint(present) or any(s in text for s in look)), 1
    kids = sorted((_compile(c) for c in q[1]), key=lambda kc: kc[1])
    cost = max(c for _, c in kids)
    fns = tuple(f for f, _ in kids)
    if q[0] == "and":
        def all_of(present, text, fns=fns):
            for f in fns:
                if not f(present, text):
                    return False
            return True
        return all_of, cost

    def any_of(present, text, fns=fns):
        for f in fns:
            if f(present, text):
                return True
        return False
    return any_of, cost


@dataclass(frozen=True)
class QueryIndex:
    """Which rules may match a text: those whose query the text's literals satisfy.

    Literals are found four ways: whole-word ones among the text's ``\\w+`` runs (a set
    intersection); word-initial ASCII ones with one regex scan that skips positions inside
    words; the literals holding non-ASCII characters with two more scans, run only when the
    text holds one of their characters (``keys``: the first non-ASCII character of each);
    and the rest (few: markup, "](", ASCII after ``\\S+`` or ``\\s*``) by substring tests,
    made only while a rule's query needs them (``lazy``: the rules that name one are always
    evaluated).
    """

    queries: tuple[Query, ...]
    tests: tuple  # compiled queries (None: always a candidate)
    words: frozenset[str]  # whole-word literals: looked up among the text's \\w+ runs
    initial_ascii: tuple | None  # (finder, prefixes) of word-initial ASCII literals
    other: tuple  # (finder, prefixes) of literals holding a non-ASCII character ...
    keys: frozenset[str]  # ... run only when the text holds one of these
    rules_of: Mapping[str, frozenset[int]]  # literal -> rules it is an entry literal of (``_entry``)
    always: frozenset[int]  # rules evaluated on every text (no entry literals)

    @classmethod
    def build(cls, queries: Sequence[Query]) -> "QueryIndex":
        queries = list(queries)
        rules_of: dict[str, set[int]] = {}
        groups: dict[str, set[str]] = {"word": set(), "initial": set(), "anywhere": set()}
        always: set[int] = set()
        for i, q in enumerate(queries):
            entry = None if q is None else _entry(q)
            if entry is None:
                always.add(i)
            else:
                for s in entry:
                    rules_of.setdefault(s, set()).add(i)
            if q is None:
                continue
            uses: set[tuple[str, str]] = set()
            _literals(q, uses)
            for s, kind in uses:
                if not (kind == "anywhere" and s.isascii()):  # those are tested lazily
                    groups[kind].add(s)
        words = frozenset(groups["word"])
        init_a = sorted(s for s in groups["initial"] if s.isascii())
        init_o = sorted(s for s in groups["initial"] if not s.isascii())
        any_o = sorted(groups["anywhere"])  # the ASCII ones are lazy
        keys = frozenset(next(ch for ch in s if not ch.isascii()) for s in init_o + any_o)

        def finder(group: list[str], lead: str):
            """(regex, found literal -> the group's literals it starts with): the regex reports
            the longest literal of the group at a position, the map adds its prefixes."""
            if not group:
                return None
            have = set(group)
            pre = {s: frozenset(s[:n] for n in range(1, len(s) + 1) if s[:n] in have) for s in group}
            return re.compile(f"{lead}(?=({_trie(group)}))"), pre

        return cls(
            tuple(queries), tuple(None if q is None else _compile(q)[0] for q in queries), words,
            finder(init_a, r"(?<!\w)"),
            tuple(f for f in (finder(init_o, r"(?<!\w)"), finder(any_o, "")) if f is not None), keys,
            {s: frozenset(v) for s, v in rules_of.items()}, frozenset(always),
        )

    def present(self, text: str) -> set[str]:
        """The indexed literals found in ``text`` (with the indexed prefixes of each), but
        for the lazily tested ones."""
        out = set(self.words.intersection(words_of(text)))
        finders = [self.initial_ascii] if self.initial_ascii is not None else []
        if not text.isascii() and not self.keys.isdisjoint(text):
            finders += self.other
        for rx, pre in finders:
            for s in set(rx.findall(text)):
                out |= pre[s]
        return out

    def candidates(self, text: str) -> list[int]:
        """Positions of the rules that may match ``text``, in rule order."""
        present = self.present(text)
        touched: set[int] = set(self.always)
        rules_of = self.rules_of
        for s in present:
            touched |= rules_of.get(s, frozenset())
        tests = self.tests
        return sorted(i for i in touched if tests[i] is None or tests[i](present, text))
