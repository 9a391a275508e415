"""Short texts a pattern should match, built from its parsed regex (for tests and checks).

``samples(body)`` walks the regex (``re._parser``, CPython's own parser) and writes, for
each top-level alternative, the shortest text it describes: the first branch of every
alternation, the minimum count of every repeat, a representative character for every
class (``\\s`` → space, ``\\w`` → "a", ``\\d`` → "1"); look-arounds and anchors write
nothing. Where an alternation holds the subject placeholder as one of its branches (the
pronoun variables: ``(?:she|he|they|{@S})``), the sample is written twice: once with the
first branch (the pronoun) and once with the placeholder, so a caller can put the
subject's name or an alias in its place. Because look-arounds are skipped, a sample may
not match the rule it came from; callers check that with the rule itself.
"""

from __future__ import annotations

from typing import Iterator

import re._constants as _c
import re._parser as _parser

from vouched.guard.packs._text import PLACEHOLDER

__all__ = ["Sample", "samples"]

Sample = tuple[str, str]  # (text with the pronoun, text with the placeholder)

_CAT_CHAR = {
    _c.CATEGORY_SPACE: " ",
    _c.CATEGORY_WORD: "a",
    _c.CATEGORY_DIGIT: "1",
    _c.CATEGORY_NOT_SPACE: "a",
    _c.CATEGORY_NOT_WORD: " ",
    _c.CATEGORY_NOT_DIGIT: "a",
}


def _in_class(items, ch: str) -> bool:
    for op, av in items:
        if op is _c.LITERAL and chr(av) == ch:
            return True
        if op is _c.RANGE and av[0] <= ord(ch) <= av[1]:
            return True
        if op is _c.CATEGORY:
            cat = av
            if cat is _c.CATEGORY_SPACE and ch.isspace():
                return True
            if cat is _c.CATEGORY_WORD and (ch.isalnum() or ch == "_"):
                return True
            if cat is _c.CATEGORY_DIGIT and ch.isdigit():
                return True
            if cat is _c.CATEGORY_NOT_SPACE and not ch.isspace():
                return True
            if cat is _c.CATEGORY_NOT_WORD and not (ch.isalnum() or ch == "_"):
                return True
            if cat is _c.CATEGORY_NOT_DIGIT and not ch.isdigit():
                return True
    return False


def _class_char(items) -> str:
    negate = bool(items) and items[0][0] is _c.NEGATE
    body = items[1:] if negate else items
    if negate:
        for ch in (" ", "a", "1", "x", "."):
            if not _in_class(body, ch):
                return ch
        return "\u2022"
    for op, av in body:
        if op is _c.LITERAL:
            return chr(av)
        if op is _c.RANGE:
            return chr(av[0])
        if op is _c.CATEGORY:
            return _CAT_CHAR.get(av, "a")
    return "a"


def _has_placeholder(items) -> bool:
    for op, av in items:
        if op is _c.LITERAL and chr(av) == PLACEHOLDER:
            return True
        if op is _c.SUBPATTERN and _has_placeholder(av[3]):
            return True
        if op is _c.BRANCH and any(_has_placeholder(b) for b in av[1]):
            return True
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT) and _has_placeholder(av[2]):
            return True
        if op is _c.ATOMIC_GROUP and _has_placeholder(av):
            return True
    return False


def _is_subject_branch(branches) -> bool:
    return any(len(b) == 1 and b[0][0] is _c.LITERAL and chr(b[0][1]) == PLACEHOLDER for b in branches)


def _write(items, subject: bool) -> str:
    out: list[str] = []
    for op, av in items:
        if op is _c.LITERAL:
            out.append(chr(av))
        elif op is _c.NOT_LITERAL:
            out.append("a" if chr(av) != "a" else "b")
        elif op is _c.ANY:
            out.append("a")
        elif op is _c.IN:
            out.append(_class_char(av))
        elif op is _c.SUBPATTERN:
            out.append(_write(av[3], subject))
        elif op is _c.ATOMIC_GROUP:
            out.append(_write(av, subject))
        elif op is _c.BRANCH:
            branches = av[1]
            if _is_subject_branch(branches):
                pick = next(b for b in branches if len(b) == 1 and b[0][0] is _c.LITERAL and chr(b[0][1]) == PLACEHOLDER) if subject else branches[0]
            else:  # prefer a branch that carries the subject, so the placeholder is exercised
                pick = next((b for b in branches if _has_placeholder(b)), branches[0])
            out.append(_write(pick, subject))
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            lo, _hi, body = av
            n = lo if (lo or not _has_placeholder(body)) else 1
            out.append(_write(body, subject) * n)
        # AT (anchors), ASSERT, ASSERT_NOT, GROUPREF...: write nothing
    return "".join(out)


def _top_alternatives(parsed) -> list:
    items = list(parsed)
    if len(items) == 1 and items[0][0] is _c.BRANCH:
        return list(items[0][1][1])
    if len(items) == 1 and items[0][0] is _c.SUBPATTERN:
        return _top_alternatives(items[0][1][3])
    return [items]


def samples(body: str) -> Iterator[Sample]:
    """(pronoun text, placeholder text) for each top-level alternative of ``body`` that
    holds the placeholder (see the module docstring); nothing for a rule without one."""
    for alt in _top_alternatives(_parser.parse(body)):
        if not _has_placeholder(alt):
            continue
        yield " ".join(_write(alt, False).split()), " ".join(_write(alt, True).split())
