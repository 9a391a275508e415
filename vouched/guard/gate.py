"""L4 — the sentence gate: hold text until a sentence ends, check it, release it.

A generator (a model, or the extractive one) streams text in arbitrary chunks. Every
factual sentence must end with source markers — ``[1]``, ``[1][3]``, ``[1, 3]``,
``[۲]`` — that point to the numbered sources the pipeline gave it. ``check_sentence``
decides one sentence; ``SentenceGate`` cuts a stream into sentences and decides each.

Rules, checked in this order (``RULES``); the first one broken is the verdict:

1. ``marker_range`` — every marker points to a given source (a key of ``sources``).
   Digits of any script; ``[1-3]`` is 1, 2 and 3; ``[0]`` and ``[3-1]`` are out of range.
2. ``missing_marker`` — a *contentful* sentence carries at least one marker. Contentful:
   it holds a value (number, URL, e-mail), or it has at least ``min_words_for_marker``
   words (default 7, i.e. "more than 6"), counting space-separated tokens that hold a
   letter or digit plus 2 words for every 3 Han characters. "In short:" (2) and "Here is
   what the sources say." (6) pass unmarked; "以下是来源中的信息。" (9 Han = 6 words) too.
3. ``unsupported_value`` — every number, URL and e-mail of the sentence appears in a
   source that *this* sentence cites (``vouched.guard.values``: digits normalised, whole
   values only, "12,000" ≡ "12.000" ≡ "۱۲٬۰۰۰", "2023" is not in "20234").
4. ``first_person`` — no first-person word (L5, ``vouched.guard.voice``).
5. ``no_answer`` — the sentence is, or contains, ``NO_ANSWER`` (exact, upper-case; any
   occurrence, even glued to other text — the token must never reach the reader); the
   pipeline answers with its fixed refusal. Because of the order, a sentence that both
   breaks a rule above and says NO_ANSWER is reported under that rule.

Markers are checked on the sentence as written; the other rules run on the sentence with
its markers stripped, which is also what is released (``GateVerdict.released``). Markers
use ASCII brackets (digits of any script inside); full-width 【1】 or ［1］ are not markers,
so a sentence cited only that way fails ``missing_marker``.

Streaming (``SentenceGate``): the text being checked (``pending``) is kept apart from the
text being sent (``released`` of each ok verdict), as NeMo Guardrails' streaming buffer
does. ``vouched.text.split_sentences`` decides boundaries. A boundary is only trusted once
the text after it is long enough that no later chunk can move it: a marker may still follow
the full stop ("…in 2023." then "[2] Next"), a digit may turn "3." into "3.5", "!" may
join "?". So a sentence is released when, after its end, the next non-space character
and ``LOOKAHEAD`` more characters have arrived (and the text there is not an unfinished
marker), or when the stream ends (``finish()``). Sentences are cut one at a time, each time
splitting from the end of the previous one, so the verdicts do not depend on how the stream
was chunked — feeding it whole gives the same verdicts as feeding it a character at a time.

Once a verdict is not ok the gate is closed: the caller stops the stream, and later
``feed``/``finish`` calls return ``[]`` and ignore their input (``closed`` is True,
``failed`` holds that verdict). ``finish()`` also closes the gate.

Cost: chunks are appended to a list and joined only when a sentence may have ended;
most chunks cost one length comparison (terminal punctuation is looked for lazily, with
the result of looking at each chunk on arrival — see ``feed``); then, for the usual held
text, one regular-expression match (``_SENTENCE``) finds the first terminal, makes
``first_sentence_end``'s decision there and looks past the cut for the next one — about
one match per sentence, not one per chunk; anything unusual (a line break or "«" before
the terminal, a bracket or closer after it, an abbreviation) takes the general way,
``first_sentence_end`` over the held text. Each source's value set was computed once, in
the constructor. Full
stops that cannot end a sentence ("3.5", "x.com") trigger nothing; those that might but
do not ("e.g. ", "Dr. ") cost one extra split each, over the held text — so one endless
sentence full of them costs more than linear time; the pipeline's output length limit
bounds that. tests/guard/test_gate_fastpaths.py keeps the plain algorithm this one
replaced and checks, feed by feed, that both give the same verdicts.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Mapping, NamedTuple

from vouched.guard.names import _UPPER, NamePool, name_keys, name_spans
from vouched.guard.values import source_values, value_spans
from vouched.guard.voice import first_person_word, mask_source_quotes
from vouched.text.scripts import HAN_CLASS
from vouched.text.sentences import _ALWAYS, _CUT, _dot_is_boundary, first_sentence_end

__all__ = [
    "DEFAULT_MIN_WORDS",
    "LOOKAHEAD",
    "NO_ANSWER",
    "RULES",
    "GateVerdict",
    "SentenceGate",
    "check_sentence",
    "strip_markers",
    "word_count",
]

RULES = ("marker_range", "missing_marker", "unsupported_value", "unsupported_name", "first_person", "no_answer")
DEFAULT_MIN_WORDS = 7
LOOKAHEAD = 16  # > the splitter's longest look-ahead (a month name, a list-item prefix)
_WINDOW = 256  # first window split per sentence; doubled while no boundary is in it

_MARKER_BODY = r"\[\s*\d+(?:\s*(?:[,،;]|[-–])\s*\d+)*\s*\]"
_MARKER = re.compile(_MARKER_BODY)
_MARKER_SPLIT = re.compile(f"({_MARKER_BODY})")
_MARKER_STRIP = re.compile(rf"[ \t\u00a0]*{_MARKER_BODY}")
_MARKER_PART = re.compile(r"\d+(?:\s*[-–]\s*\d+)?")
_PARTIAL_MARKER = re.compile(r"\[[\s\d,،;\-–]*\Z")
NO_ANSWER = "NO_ANSWER"
_HAN = re.compile(f"[{HAN_CLASS}]")
_WORD_TOKEN = re.compile(r"\S*?[^\W_]\S*")
# What may end a sentence for split_sentences: terminal punctuation or a line break. A
# "." (or "!", "?", "…") run directly followed by anything but a space, a closer or a
# marker never does ("3.5", "x.com", "Hi!there"); the splitter would reject it.
_TERMINAL = re.compile(r"[.!?…．]+(?![^\s\"'”’»)\]」』）】》〉\[])|[؟۔।॥。！？\n]")
_TERMINAL_CHAR = re.compile(r"[.!?…．؟۔।॥。！？\n]")
_SPACES = re.compile(r"\s*")
# The splitter's look-ahead: spaces, opening quotes/brackets, then the next character.
_NEXT = re.compile(r"\s*[\"'“‘«¿¡(]*")
# From terminal punctuation to where the next sentence would start: the rest of the
# punctuation run, closers, markers (maybe unfinished), spaces, opening quotes.
_AFTER_TERMINAL = re.compile(
    r"[.!?…．؟۔।॥。！？]*[\"'”’»)\]」』）】》〉]*(?:[ \t]*\[[\s\d,،;\-–]*\]?)*\s*[\"'“‘«¿¡(]*"
)


_AFTER = LOOKAHEAD + 1  # a boundary is settled this far past _AFTER_TERMINAL's end
# ``_TERMINAL.search`` then ``_AFTER_TERMINAL.match`` from where it found terminal
# punctuation, in one search: start() is the terminal, end() where _AFTER_TERMINAL ends.
# It starts with a plain class, so the regex engine skips to the next terminal character
# at C speed (``_TERMINAL`` starts with a branch: a search with it tries its look-ahead at
# every position). An "always" terminal stands alone; a "." (or "!", "?", "…") run must
# be followed by a space, a closer, a marker or the end. Past its first character
# _AFTER_TERMINAL goes on the same way (a punctuation run absorbs the rest of itself),
# except after a line break, where only spaces and opening quotes follow.
_AFTER_REST = _AFTER_TERMINAL.pattern
_TERMINAL_SPAN = re.compile(
    r"[.!?…．؟۔।॥。！？\n](?:(?<=\n)\s*[\"'“‘«¿¡(]*|(?<=[؟۔।॥。！？])" + _AFTER_REST
    + r"|(?=[.!?…．]*(?![^\s\"'”’»)\]」』）】》〉\[]))" + _AFTER_REST + ")"
)


# The drain's fast path (see ``_drain_live``): from the held text's start, everything up
# to its first terminal punctuation (as ``_TERMINAL_SPAN`` defines it) or its first line
# break, paragraph separator or "«" (the cases the fast path leaves alone); then, if it
# stopped at terminal punctuation, ``first_sentence_end``'s own cut expression there
# (``_CUT``: the punctuation run, closers, markers, and the next non-space character,
# groups 1-4). The body is atomic: it never gives back a "." run it took as not terminal
# ("3.5", "..x"), so ``_CUT`` is tried at the first terminal only, where it always
# matches (a terminal "." run is followed by a space, a closer, "[" or the end — never
# by a word character, which is all ``_CUT`` asks). It always matches: group 1 is unset
# when the body stopped at something else or at the end. After ``_CUT`` the same body
# again, over the next sentence: the match ends at the text's end when no terminal
# punctuation (nor line break, separator or "«") follows the next character either.
_HELD = r"(?>(?:[^.!?…．؟۔।॥。！？\n\u2029«]+|[.!?…．]+(?=[^\s\"'”’»)\]」』）】》〉\[.!?…．]))*)"
_SENTENCE = re.compile(_HELD + "(?:" + _CUT.pattern + _HELD + ")?")

# The early stop (``SentenceGate._feed_early``): a character that may be part of a value
# or a name (cased text: a capital of any script, a digit of any script, "@", "/" or a
# quote; fa/ar/zh/hi text: a Latin letter instead of a capital), a word boundary, and the unfinished Latin word or number at the end of
# fa/ar/zh/hi text.
# (A digit right after "[" or another digit does not count: a marker's digits are no value.)
_CANDIDATE = re.compile(f"[{_UPPER.pattern[1:-1]}@/\"“«„《「『]|(?<![\\[\\d])\\d")
_CANDIDATE_UNCASED = re.compile(r"[A-Za-z\d@/\"“«„《「『]")
_BOUNDARY = re.compile(r"\s")
_DIGIT = re.compile(r"\d")
_OPEN_TAIL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-.,@:/%+~#=?&\u066b\u066c\u00a0\u202f")


def cand_after(buf: str, at: int, uncased: bool) -> bool:
    """Whether the unfinished text from ``at`` holds a candidate character."""
    return (_CANDIDATE_UNCASED if uncased else _CANDIDATE).search(buf, at) is not None


# Every character _AFTER_TERMINAL can take that is no space: terminal punctuation,
# closers, "[" (markers, maybe unfinished) and opening quotes.
_AFTER_CHARS = frozenset(".!?…．؟۔।॥。！？\"'”’»)]」』）】》〉[“‘«¿¡(")


class GateVerdict(NamedTuple):
    """The decision on one sentence (a NamedTuple: immutable, and built ~10x faster than a
    frozen dataclass — one is built per sentence on the streaming path)."""

    sentence: str  # as written, markers included
    released: str  # markers stripped, spacing tidied; "" when not ok
    cited: tuple[int, ...]  # marker numbers, in order, deduplicated
    ok: bool
    rule: str | None  # one of RULES when not ok
    value: str | None  # the offending marker / value / word


def _markers(sentence: str, given: Mapping[int, object]) -> tuple[tuple[int, ...], str | None, str]:
    """(cited numbers, first out-of-range marker as written or None, stripped sentence)."""
    if "[" not in sentence:
        return (), None, sentence.strip()
    if "]" in sentence and "`" not in sentence and _HEADER_FLAG.search(sentence):
        sentence = _HEADER_FLAG.sub("", sentence)  # the prompt's "[current]" / "[conflict]" (see strip_markers)
        if "[" not in sentence:
            return (), None, sentence.strip()
    # [text, marker, text, marker, ..., text]: the matches of _MARKER.finditer, in one call.
    pieces = _MARKER_SPLIT.split(sentence)
    # Code (``r[0]``) or a code span is no citation: only a bracket glued to an ASCII word
    # character, ")" or "]", or any bracket in a sentence with a backtick, needs a look.
    if len(pieces) == 3:
        before = pieces[0]
        code = "`" in sentence or (bool(before) and before[-1] < "\x80" and (before[-1].isalnum() or before[-1] in "_)]"))
    else:
        code = "`" in sentence or any(_glued(pieces, k) for k in range(1, len(pieces), 2))
    if code:
        pieces = _citations_only(pieces)
        if len(pieces) == 1:
            return (), None, sentence.strip()
    if len(pieces) == 3:  # one marker, the usual case
        marker = pieces[1]
        inner = marker[1:-1]
        if inner.isdigit():  # the common "[3]"; int() reads Persian/Arabic-Indic digits too
            i = int(inner)
            if i not in given:
                return (), marker, ""
            return (i,), None, (pieces[0].rstrip(" \t\u00a0") + pieces[2]).strip()
    cited: dict[int, None] = {}
    for k in range(1, len(pieces), 2):
        marker = pieces[k]
        inner = marker[1:-1]
        if inner.isdigit():
            i = int(inner)
            if i not in given:
                return tuple(cited), marker, ""
            cited[i] = None
        else:
            for a, b in map(_span, _MARKER_PART.findall(marker)):
                if b < a or b - a > len(given) or any(i not in given for i in range(a, b + 1)):
                    return tuple(cited), marker, ""
                cited.update(dict.fromkeys(range(a, b + 1)))
        pieces[k - 1] = pieces[k - 1].rstrip(" \t\u00a0")
        pieces[k] = ""
    return tuple(cited), None, "".join(pieces).strip()


def _glued(pieces: list[str], k: int) -> bool:
    """Whether marker ``k`` of ``_MARKER_SPLIT``'s pieces is glued to an ASCII word
    character, ")" or "]" (cheap test; identifiers are ASCII: "用户[5]" is a citation)."""
    before = pieces[k - 1]
    return bool(before) and before[-1] < "\x80" and (before[-1].isalnum() or before[-1] in "_)]")


def _is_code_index(before: str, marker: str, after: str, bracket_next: bool) -> bool:
    """A bracket that is code, not a citation: ``r[0]``, ``rows_by_id[2]``, ``f()[1]``,
    ``a[1][2]``, ``a[1]=…``, ``a[1].x`` — glued to an identifier that is one ASCII letter,
    holds "_" or "(", or ends with ")" or "]"; or followed at once by "[", "(", "=" or a
    letter/digit (or "." and one); or an index 0 (no source is numbered 0). ``before`` and
    ``after``: the text on either side; ``bracket_next``: another bracket follows at once."""
    if not before or before[-1] >= "\x80" or not (before[-1].isalnum() or before[-1] in "_)]"):
        return False
    token = before.rsplit(None, 1)[-1]
    if bracket_next and not after:  # "a[1][2]": glued to the next bracket
        return True
    if marker[1:-1].strip() in ("0", "٠", "۰"):
        return True
    if (len(token) == 1 and token.isascii() and token.isalpha()) or "_" in token or "(" in token \
            or token[-1] in ")]":
        return True
    return bool(after) and (after[0] in "[(=" or after[0].isalnum()
                            or (after[0] == "." and len(after) > 1 and after[1].isalnum()))


def _citations_only(pieces: list[str]) -> list[str]:
    """``pieces`` with every bracket that is not a citation merged back into the text:
    one inside a code span (between backticks) or one that is code (``_is_code_index``)."""
    out = [pieces[0]]
    ticks = pieces[0].count("`")
    for k in range(1, len(pieces), 2):
        marker, after = pieces[k], pieces[k + 1]
        if ticks % 2 == 1 or _is_code_index(out[-1], marker, after, k + 2 < len(pieces)):
            out[-1] += marker + after
        else:
            out += [marker, after]
        ticks += after.count("`")
    return out


def _span(part: str) -> tuple[int, int]:
    lo, _, hi = part.replace("–", "-").partition("-")
    return int(lo), int(hi) if hi else int(lo)


# The prompt's source-header flags (vouched.guard.prompt.render_source). A real model echoed them
# as its whole answer ("[conflict]", "[current]"): they are prompt format, never text for the reader.
_HEADER_FLAG = re.compile(r"[ \t\u00a0]*\[(?:current|conflict)\]", re.I)


def strip_markers(sentence: str) -> str:
    """The sentence without its markers: "built it [1]." → "built it."; code such as
    ``r[0]`` or a bracket inside a code span stays (see ``_is_code_index``). The prompt's header
    flags ``[current]`` and ``[conflict]`` go too (outside code spans)."""
    if "[" not in sentence:
        return sentence.strip()
    if "]" in sentence and "`" not in sentence and _HEADER_FLAG.search(sentence):
        sentence = _HEADER_FLAG.sub("", sentence)
        if "[" not in sentence:
            return sentence.strip()
    if "`" in sentence:
        pieces = _MARKER_SPLIT.split(sentence)
        pieces = _citations_only(pieces)
    else:
        pieces = _MARKER_SPLIT.split(sentence)
        if any(_glued(pieces, k) for k in range(1, len(pieces), 2)):
            pieces = _citations_only(pieces)
        elif len(pieces) > 1:
            return _MARKER_STRIP.sub("", sentence).strip()
    for k in range(1, len(pieces), 2):
        pieces[k - 1] = pieces[k - 1].rstrip(" \t\u00a0")
        pieces[k] = ""
    return "".join(pieces).strip()


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
) -> GateVerdict:
    cited, bad, text = _markers(sentence, given)
    if bad is not None:
        return _tuple_new(GateVerdict, (sentence, "", cited, False, "marker_range", bad))
    values = value_spans(text)
    # (No value: no digit outside a URL or address, whose words name_spans leaves out.)
    names = name_spans(text if NO_ANSWER not in text else text.replace(NO_ANSWER, " "), lang, allowed,
                       digits=bool(values) or "@" in text or "://" in text or "ww." in text or "WW." in text or "Ww." in text)
    if not cited and (values or names or word_count(text) >= min_words):
        return _tuple_new(GateVerdict, (sentence, "", cited, False, "missing_marker",
                                        values[0][1] if values else None))
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
    if NO_ANSWER in sentence:
        return _tuple_new(GateVerdict, (sentence, "", cited, False, "no_answer", NO_ANSWER))
    return _tuple_new(GateVerdict, (sentence, text, cited, True, None, None))


def check_sentence(
    sentence: str,
    sources: Mapping[int, str],
    lang: str | None = None,
    *,
    min_words_for_marker: int = DEFAULT_MIN_WORDS,
    allowed_names: Iterable[str] = (),
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
                  allowed_keys(allowed_names))


def allowed_keys(names: Iterable[str]) -> frozenset[str]:
    """Keys the name rule never reports: every word of the subject's and site's names."""
    out: set[str] = set()
    for name in names:
        if name:
            out.update(name_keys(name))
            out.update(name_keys("".join(name.split())))  # "Data Dog" also as "DataDog"
    return frozenset(out)


class SentenceGate:
    """Cuts a stream into sentences and checks each one (see the module docstring)."""

    def __init__(
        self,
        sources: Mapping[int, str],
        lang: str | None = None,
        *,
        min_words_for_marker: int = DEFAULT_MIN_WORDS,
        allowed_names: Iterable[str] = (),
        early_stop: bool = False,
    ) -> None:
        if min_words_for_marker < 1:
            raise ValueError("min_words_for_marker must be at least 1")
        self._values = {int(i): source_values(text) for i, text in sources.items()}
        self._pools = {int(i): NamePool(text) for i, text in sources.items()}
        self._pool_of = self._pools.__getitem__
        self._allowed = allowed_keys(allowed_names)
        self._value_set = self._values.__getitem__
        self._lang = lang
        self._min_words = min_words_for_marker
        # The stream so far, as chunks joined only when a sentence may have ended (so
        # feeding stays linear); positions below are offsets into the joined text, whose
        # checked prefix is dropped now and then.
        self._parts: list[str] = []
        self._len = 0
        self._off = 0  # start of the held text
        # Feeding only appends while the text is shorter than ``_need``; at ``_need`` the
        # gate tries to cut (or, while scanning, looks at the chunks since ``_scan``).
        # -1 once closed. See ``feed``.
        self._need = _AFTER + 1
        self._scan = 0  # offset of the first chunk not yet scanned; -1: not scanning
        self._scan_part = 0  # its index in _parts
        self._failed: GateVerdict | None = None
        self._closed = False
        self._probe_at = 0  # the early stop: offset probed up to (may go below 0)
        if early_stop:
            # Look at every completed word as it arrives (see ``_feed_early``).
            self._union = frozenset().union(*self._values.values())
            self._cand = False  # the unfinished word holds a candidate character
            self._union_pool: NamePool | None = None
            self._uncased = lang is not None and lang[:2].lower() in ("fa", "ar", "zh", "hi")
            self.feed = self._feed_early  # type: ignore[method-assign]

    @property
    def pending(self) -> str:
        """Held text not yet checked."""
        return "".join(self._parts)[self._off :]  # joining in place would lose the chunks

    @property
    def closed(self) -> bool:
        """True after a failing verdict or ``finish()``; feeding then returns ``[]``."""
        return self._closed

    @property
    def failed(self) -> GateVerdict | None:
        """The verdict that closed the gate, if one did."""
        return self._failed

    def feed(self, chunk: str) -> list[GateVerdict]:
        """Verdicts of every sentence this chunk completes (0, 1 or more).

        The gate waits for terminal punctuation: each chunk is scanned for it (in the
        chunk alone — a "." at a chunk's end counts until the next chunk says otherwise),
        and the first one found sets the length at which a cut is tried (past the
        punctuation, closers and markers, plus ``LOOKAHEAD``). Scanning is done lazily,
        with the same result: the terminal at offset ``a`` cannot ask for fewer than
        ``a + LOOKAHEAD + 2`` characters, so chunks are only appended until the text
        reaches that length counted from the first unscanned chunk, and are then scanned
        one by one as they would have been on arrival. Most chunks cost one comparison.
        """
        n = self._len + len(chunk)
        if n < self._need:
            self._parts.append(chunk)
            self._len = n
            return []
        if self._closed or not chunk:
            return []
        parts = self._parts
        parts.append(chunk)
        self._len = n
        if self._scan >= 0:
            # Scan the chunks fed since _scan, each on its own as it arrived. The first
            # terminal character of them all tells which chunk to start with.
            first = self._scan_part
            last = len(parts)
            region = "".join(parts[first:]) if last - first > 1 else chunk
            # (On ASCII text four ``in`` tests — memchr — rule most regions out faster.)
            if region.isascii() and not (
                "." in region or "!" in region or "?" in region or "\n" in region
            ):
                hit = None
            else:
                hit = _TERMINAL_CHAR.search(region)
            if hit is None:
                self._scan = n
                self._scan_part = last
                self._need = n + _AFTER + 1
                return []
            pos = hit.start()
            start = self._scan
            i = first
            while pos >= len(parts[i]):
                pos -= len(parts[i])
                start += len(parts[i])
                i += 1
            while True:
                part = parts[i]
                m = _TERMINAL_SPAN.search(part, pos)
                if m is not None:
                    break
                i += 1
                if i == last:  # "3." + "5": no terminal after all
                    self._scan = n
                    self._scan_part = last
                    self._need = n + _AFTER + 1
                    return []
                start += len(part)
                pos = 0
            # The text ended with this chunk then: its _AFTER_TERMINAL end is the chunk's.
            need = self._need = m.end() + start + _AFTER
            self._scan = -1
            if n < need:
                return []
        return self._drain_live()

    def _feed_early(self, chunk: str) -> list[GateVerdict]:
        """``feed``, then the early stop: a value or name that is in *none* of the sources
        cannot be satisfied by any marker, so the sentence is decided as soon as the word
        holding it is complete (followed by a space; in fa/ar/zh/hi text by any character
        that cannot continue a Latin word or a number) — not at its end. The verdict's
        ``sentence`` is the text so far. Only the sentence being held is probed, up to its
        first terminal punctuation; everything the probe holds, the full check at the
        sentence's end would hold too (it uses the same functions, on the cited sources,
        which are among all the sources).
        """
        out = SentenceGate.feed(self, chunk)
        if self._closed or not chunk:
            return out
        cand = _CANDIDATE_UNCASED if self._uncased else _CANDIDATE
        if not self._cand:
            m = cand.search(chunk)
            if m is None:
                return out
            self._cand = True
            if _BOUNDARY.search(chunk, m.end()) is None and not self._uncased:
                return out  # the word is not complete yet
        elif not self._uncased and _BOUNDARY.search(chunk) is None:
            return out
        verdict = self._probe()
        if verdict is not None:
            self._failed = verdict
            self._closed = True
            self._need = -1
            out.append(verdict)
        return out

    def _probe(self) -> GateVerdict | None:
        """Check the words completed since the last probe against all the sources."""
        parts = self._parts
        buf = parts[0] if len(parts) == 1 else "".join(parts)  # (joining in place would lose the scan's chunks)
        off = self._off
        if self._uncased:
            end = len(buf)  # back over the unfinished Latin word or number at the end
            while end > off and (buf[end - 1] in _OPEN_TAIL_CHARS or buf[end - 1].isdigit()):
                end -= 1
        else:
            end = max(buf.rfind(" "), buf.rfind("\n"), buf.rfind("\t")) + 1
        start = max(self._probe_at, off)
        if end <= start:
            self._cand = cand_after(buf, start, self._uncased)
            return None
        t = _TERMINAL.search(buf, start, end)  # (any before ``start`` stopped an earlier probe there)
        if t is not None:  # the held sentence ends before: leave it to the full check
            end = t.start()
            if end <= start:
                self._cand = True
                return None
        # From the start of the word before (its context: German trigger words, clause starts).
        ps = max(off, buf.rfind(" ", off, max(off, start - 1)) + 1) if start > off else off
        opened = buf.rfind("[", off, ps)
        if opened > buf.rfind("]", off, ps):  # inside a marker ("[1, 2]"): from its "["
            ps = opened
        region = buf[ps:end]
        pm = _PARTIAL_MARKER.search(region)
        if pm is not None:  # an unfinished marker: probe it next time
            end = ps + pm.start()
            region = region[: pm.start()]
        self._probe_at = end
        self._cand = cand_after(buf, end, self._uncased)
        text = strip_markers(region) if "[" in region else region.strip()
        if not text or (ps == off and text.isalpha() and text.istitle()):
            return None  # nothing, or the sentence's first word (no name by its capital alone)
        if _DIGIT.search(text) is not None:
            for _kind, raw, canonical in value_spans(text):
                if canonical not in self._union:
                    return _tuple_new(GateVerdict, (buf[off:end].strip(), "", (), False, "unsupported_value", raw))
        before = buf[off:ps]
        if "[" in before:
            before = strip_markers(before)
        before = before.rstrip()
        initial = not before or before[-1] in ":;—–•"
        names = name_spans(text, self._lang, self._allowed, initial=initial)
        if names:
            pool = self._union_pool
            if pool is None:  # every source's words in one pool (found in one = found in the union)
                pool = self._union_pool = NamePool("\n".join(p.text for p in self._pools.values()))
            for kind, raw, key in names:
                if NO_ANSWER in raw:
                    continue
                if not pool.has(kind, key):
                    return _tuple_new(GateVerdict, (buf[off:end].strip(), "", (), False, "unsupported_name", raw))
        return None

    def finish(self) -> list[GateVerdict]:
        """Verdicts of the rest of the stream; closes the gate."""
        if self._closed:
            return []
        out = self._drain(final=True)
        self._closed = True
        self._need = -1
        return out

    def _text(self) -> str:
        parts = self._parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""

    def _advance(self, pos: int) -> None:
        """Mark everything before ``pos`` as checked; drop it once it is most of the text."""
        self._off = pos
        if 2 * pos > self._len:
            self._parts = [self._text()[pos:]]
            self._len -= pos
            self._off = 0
            self._probe_at -= pos

    def _drain_live(self) -> list[GateVerdict]:
        """Cut and check every held sentence whose end is settled (``_next_cut`` without
        ``final``, ``_cut_in`` and ``_advance`` inlined: this runs once per sentence)."""
        out: list[GateVerdict] = []
        parts = self._parts
        while True:
            if len(parts) > 1:
                buf = "".join(parts)
                parts[:] = [buf]
            else:
                buf = parts[0]
            off = self._off
            n = len(buf)
            # Fast path: held text whose first terminal comes before any line break,
            # paragraph separator or "«", and ends a settled sentence. One match finds
            # the terminal and does first_sentence_end's work there (a line break after
            # the cut moves nothing: its cut is no earlier). Anything else but "no
            # terminal at all" goes the general way below, which gives the same answer.
            m = _SENTENCE.match(buf, off)
            end = m.end(3)
            cut = -1
            if end < 0:
                if m.end() == n:  # no terminal punctuation held: scan the chunks to come
                    self._scan = n
                    self._scan_part = 1
                    self._need = n + _AFTER + 1
                    return out
            else:
                nxt_at = m.start(4)
                # Settled, as _cut_in decides on any window that holds it: LOOKAHEAD
                # characters past the next one (a "[" there may be an unfinished marker).
                # The general way also waits for LOOKAHEAD characters past where
                # _AFTER_TERMINAL ends, which is past the next character only when that
                # character is one _AFTER_TERMINAL can take: those go the general way.
                # (A marker may hold a line break, "[\n1]": first_sentence_end would cut
                # there when the line is a list item — those go the general way too.)
                if n - nxt_at > LOOKAHEAD and buf[nxt_at] not in _AFTER_CHARS and (
                    m.start(3) == end or m.group(3).isprintable()
                ):
                    run = m.group(1)
                    if run[0] in _ALWAYS:
                        cut = end
                    elif not buf[end].isspace():
                        cut = -1  # "…." then a letter (see first_sentence_end)
                    elif "!" not in run and "?" not in run:
                        # _dot_is_boundary's first tests, inlined (in its order).
                        at = m.start(1)
                        nxt = m.group(4)
                        if "..." in run or "…" in run:
                            cut = end if nxt.isupper() else -1
                        elif nxt.islower():
                            cut = -1
                        elif at == off or not ((last := buf[at - 1]).isalnum() or last.isupper()):
                            cut = end
                        else:
                            # On the text from the held start (it looks back to a token's
                            # start and forward one word past the next character).
                            window = buf[off : nxt_at + LOOKAHEAD + 1]
                            cut = end if _dot_is_boundary(window, at - off, run, nxt, nxt_at - off) else -1
                    elif m.group(2) and m.group(4).islower():
                        cut = -1  # a quoted question inside a sentence
                    else:
                        cut = end
            # Whether the fast match went on to the end of the text past its cut: then
            # nothing after the cut can end a sentence yet.
            clear = cut >= 0 and m.end() == n
            if cut < 0:
                # Line breaks before the first word end nothing: look past them.
                hit = _TERMINAL_SPAN.search(buf, _SPACES.match(buf, off).end())
                if hit is None:  # wait for terminal punctuation in the chunks to come
                    self._scan = n
                    self._scan_part = 1
                    self._need = n + _AFTER + 1
                    return out
                at = hit.start()
                need = hit.end() + _AFTER
                if n < need:
                    self._scan = -1
                    self._need = need
                    return out
                size = need - off  # the least text that can settle the first boundary
                # Before the first terminal the splitter cuts nowhere, unless a "«" (a closer
                # to it, not to _TERMINAL) follows a full stop: start its scan there.
                at -= off
                if "«" in buf[off:at + off]:
                    at = 0
                while True:  # _cut_in(window, at_end=False), growing the window as _next_cut did
                    window = buf[off : off + size]
                    first = first_sentence_end(window, at)
                    need_in = -1
                    if first is not None and first[1]:
                        end = first[0]
                        nxt = _NEXT.match(window, end).end()
                        if len(window) - nxt <= LOOKAHEAD:
                            need_in = nxt + LOOKAHEAD + 1
                        elif _PARTIAL_MARKER.match(window, nxt):
                            need_in = len(window) + 1
                        else:
                            break  # settled: cut at end
                    if off + size >= n:  # the window is all the text: wait
                        if need_in >= 0:
                            self._scan = -1
                            self._need = off + need_in
                        else:
                            # No boundary yet: wait for terminal punctuation near or past the end.
                            hit = _TERMINAL_SPAN.search(buf, max(_SPACES.match(buf, off).end(), n - LOOKAHEAD))
                            if hit is None:
                                self._scan = n
                                self._scan_part = 1
                                self._need = n + _AFTER + 1
                            else:
                                self._scan = -1
                                self._need = hit.end() + _AFTER
                        return out
                    size *= 2
                cut = off + end
            # Release the sentence before the cut (``_advance`` inlined).
            piece = buf[off:cut].strip()
            self._off = cut
            if 2 * cut > self._len:
                parts[:] = [buf[cut:]]
                self._len -= cut
                self._off = 0
                self._probe_at -= cut  # (the early stop's offset moves with the text)
            if piece:
                verdict = _check(piece, self._values, self._value_set, self._lang, self._min_words,
                                 self._pool_of, self._allowed)
                out.append(verdict)
                if not verdict[3]:  # ok
                    self._failed = verdict
                    self._closed = True
                    self._need = -1
                    return out
            if clear:
                # (The general way would find no terminal past the leading spaces.) Scan
                # the chunks to come.
                n = self._len
                self._scan = n
                self._scan_part = 1
                self._need = n + _AFTER + 1
                return out

    def _drain(self, final: bool) -> list[GateVerdict]:
        """Verdicts of the held sentences that are settled (all of them when ``final``)."""
        if not final:
            return self._drain_live()
        out: list[GateVerdict] = []
        values = self._values
        while True:
            cut = self._next_cut()
            if cut is None:
                break
            piece = self._parts[0][self._off : cut].strip()  # _next_cut joined the parts
            self._advance(cut)
            if piece:
                verdict = _check(piece, values, values.__getitem__, self._lang, self._min_words,
                                 self._pool_of, self._allowed)
                out.append(verdict)
                if not verdict[3]:  # ok
                    self._failed = verdict
                    self._closed = True
                    self._need = -1
                    break
        return out

    def _next_cut(self) -> int | None:
        """End of the first held sentence, the stream having ended (while it runs,
        ``_drain_live`` also waits until no later chunk can move the end)."""
        buf = self._text()
        off = self._off
        n = len(buf)
        if not buf[off:].strip():
            self._advance(n)
            return None
        size = _WINDOW
        while True:
            whole = off + size >= n
            cut, _ = _cut_in(buf[off : off + size], whole)
            if cut is not None or whole:
                break
            size *= 2
        return None if cut is None else off + cut


def _cut_in(window: str, at_end: bool) -> tuple[int | None, int | None]:
    """(end of the first sentence of ``window`` if settled, else a length to wait for)."""
    first = first_sentence_end(window)
    if first is None or not first[1]:  # blank, or one sentence so far
        return (len(window), None) if at_end else (None, None)
    end = first[0]
    if at_end:
        return end, None
    nxt = _NEXT.match(window, end).end()
    if len(window) - nxt <= LOOKAHEAD:
        return None, nxt + LOOKAHEAD + 1
    if _PARTIAL_MARKER.match(window, nxt):
        return None, len(window) + 1
    return end, None
