"""The sentence gate's rules on one sentence (L4, ``vouched.guard.gate``): ``RULES``, the
verdict (``GateVerdict``), ``word_count``, and ``check_sentence`` / ``_check``, which the
streaming ``SentenceGate`` runs on every sentence it cuts."""

from __future__ import annotations

import re
from typing import Callable, Iterable, Mapping, NamedTuple

from vouched.guard.gate_markers import _MARKER, _markers
from vouched.guard.gate_quote import quoted_source
from vouched.guard.names import NamePool, name_keys, name_spans
from vouched.guard.values import source_values, value_spans
from vouched.guard.voice import first_person_word, mask_source_quotes
from vouched.text.scripts import HAN_CHAR

RULES = ("marker_range", "missing_marker", "unsupported_value", "unsupported_name", "first_person", "no_answer")
DEFAULT_MIN_WORDS = 7
NO_ANSWER = "NO_ANSWER"
# The token as models misspell it ("No_ANSWER", "no_answer"): any case, with its underscore
# (plain "no answer" is prose and stays prose).
_NO_ANSWER_ANY_CASE = re.compile(r"(?<![A-Za-z0-9_])no_answer(?![A-Za-z0-9_])", re.IGNORECASE)


def says_no_answer(text: str) -> bool:
    """Whether ``text`` holds the NO_ANSWER token, in any case (never without its underscore)."""
    return "_" in text and (NO_ANSWER in text or _NO_ANSWER_ANY_CASE.search(text) is not None)


def _without_no_answer(text: str) -> str:
    return _NO_ANSWER_ANY_CASE.sub(" ", text.replace(NO_ANSWER, " ")) if says_no_answer(text) else text
_HAN = HAN_CHAR  # re-exported by gate.py
_WORD_TOKEN = re.compile(r"\S*?[^\W_]\S*")


class GateVerdict(NamedTuple):
    """The decision on one sentence (a NamedTuple: immutable, and built ~10x faster than a
    frozen dataclass — one is built per sentence on the streaming path)."""

    sentence: str  # as written, markers included
    released: str  # markers stripped, spacing tidied; "" when not ok
    cited: tuple[int, ...]  # marker numbers, in order, deduplicated
    ok: bool
    rule: str | None  # one of RULES when not ok
    value: str | None  # the offending marker / value / word



_BARE = re.compile(r"[\W_]*\Z")


def leading_citation(verdict: GateVerdict) -> str | None:
    """The markers of an ok unit that is nothing but markers and punctuation ("[1].",
    "[2][3]:"), written as ``[n]`` each, or None.

    Models that follow the prompt sometimes put the citation *before* the sentence it
    supports ("[1]. The incident can be closed when ..."); the sentence splitter then cuts
    the marker off as a unit of its own and the sentence arrives unmarked. ``SentenceGate``
    gives such a unit's markers to the next sentence when that one cites nothing itself;
    that sentence is then checked against exactly those sources, by every rule.
    """
    if not verdict[3] or not verdict[2] or len(verdict[1]) > 8 or _BARE.match(verdict[1]) is None:
        return None
    return "".join(f"[{i}]" for i in verdict[2])


def with_leading_citation(carry: str | None, piece: str) -> str:
    """``piece`` as the gate checks it after a unit whose ``leading_citation`` is ``carry``:
    prefixed with those markers when it has no marker of its own, else unchanged (a sentence
    that cites its own sources keeps exactly those)."""
    if carry is None or _MARKER.search(piece) is not None:
        return piece
    return f"{carry} {piece}"


def word_count(text: str) -> float:
    """Space-separated tokens holding a letter or digit, plus 2/3 per Han character."""
    han = 0
    if not text.isascii():
        text, han = _HAN.subn(" ", text)
    return len(_WORD_TOKEN.findall(text)) + han * 2 / 3


# GateVerdict(...) runs the NamedTuple's Python-level __new__; tuple.__new__ builds the
# same object directly (one is built per sentence on the streaming path).
_tuple_new = tuple.__new__


def _check(
    sentence: str,
    given: Mapping[int, object],
    values_of: Callable[[int], frozenset[str]],
    lang: str | None,
    min_words: int,
    names_of: Callable[[int], NamePool],
    allowed: frozenset[str],
    quotes: bool,
) -> GateVerdict:
    cited, bad, text = _markers(sentence, given)
    if bad is not None:
        return _tuple_new(GateVerdict, (sentence, "", cited, False, "marker_range", bad))
    values = value_spans(text)
    # (No value: no digit outside a URL or address, whose words name_spans leaves out.)
    names = name_spans(_without_no_answer(text), lang, allowed,
                       digits=bool(values) or "@" in text or "://" in text or "ww." in text or "WW." in text or "Ww." in text)
    if not cited and (values or names or word_count(text) >= min_words):
        # An unmarked sentence that quotes a source cites it (vouched.guard.gate_quote) and
        # meets every rule below against exactly that source.
        quoted = quoted_source(text, given, lambda i: names_of(i).text) if quotes else None
        if quoted is None:
            return _tuple_new(GateVerdict, (sentence, "", cited, False, "missing_marker",
                                            values[0][1] if values else None))
        cited = (quoted,)
    if values:
        if len(cited) == 1:
            pool = values_of(cited[0])
            for _kind, raw, canonical in values:
                if canonical not in pool:
                    return _tuple_new(GateVerdict, (sentence, "", cited, False, "unsupported_value", raw))
        else:
            pools = [values_of(i) for i in cited]
            for _kind, raw, canonical in values:
                if not any(canonical in pool for pool in pools):
                    return _tuple_new(GateVerdict, (sentence, "", cited, False, "unsupported_value", raw))
    if names:
        name_pools = [names_of(i) for i in cited]
        for kind, raw, key in names:
            for pool in name_pools:
                if pool.has(kind, key):
                    break
            else:
                return _tuple_new(GateVerdict, (sentence, "", cited, False, "unsupported_name", raw))
    word = first_person_word(text, lang)
    if word is not None and cited:
        # A quotation of a cited source's own words holds no speaker but the source's.
        masked = mask_source_quotes(text, [names_of(i).text for i in cited])
        if masked != text:
            word = first_person_word(masked, lang)
    if word is not None:
        return _tuple_new(GateVerdict, (sentence, "", cited, False, "first_person", word))
    if says_no_answer(sentence):
        return _tuple_new(GateVerdict, (sentence, "", cited, False, "no_answer", NO_ANSWER))
    return _tuple_new(GateVerdict, (sentence, text, cited, True, None, None))


def check_sentence(
    sentence: str,
    sources: Mapping[int, str],
    lang: str | None = None,
    *,
    min_words_for_marker: int = DEFAULT_MIN_WORDS,
    allowed_names: Iterable[str] = (),
    attribute_quotes: bool = True,
) -> GateVerdict:
    """Check one sentence against the numbered ``sources`` (pure; see the module docstring)."""
    cache: dict[int, frozenset[str]] = {}

    def values_of(i: int) -> frozenset[str]:
        if i not in cache:
            cache[i] = source_values(sources[i])
        return cache[i]

    pools: dict[int, NamePool] = {}

    def names_of(i: int) -> NamePool:
        if i not in pools:
            pools[i] = NamePool(sources[i])
        return pools[i]

    return _check(sentence, sources, values_of, lang, min_words_for_marker, names_of,
                  allowed_keys(allowed_names), attribute_quotes)


def allowed_keys(names: Iterable[str]) -> frozenset[str]:
    """Keys the name rule never reports: every word of the subject's and site's names."""
    out: set[str] = set()
    for name in names:
        if name:
            out.update(name_keys(name))
            out.update(name_keys("".join(name.split())))  # "Data Dog" also as "DataDog"
    return frozenset(out)
