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

Cost: chunks are appended to a list and joined only when terminal punctuation (or a line
break) has arrived with enough text after it; then ``split_sentences`` runs over the
held text only — about one split per sentence, not one per chunk — and each source's
value set was computed once, in the constructor. Full stops that cannot end a sentence
("3.5", "x.com") trigger nothing; those that might but do not ("e.g. ", "Dr. ") cost one
extra split each, over the held text — so one endless sentence full of them costs more
than linear time; the pipeline's output length limit bounds that.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, NamedTuple

from vouched.guard.values import source_values, value_spans
from vouched.guard.voice import first_person_word
from vouched.text.sentences import first_sentence_end
from vouched.text.scripts import HAN_CLASS

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

RULES = ("marker_range", "missing_marker", "unsupported_value", "first_person", "no_answer")
DEFAULT_MIN_WORDS = 7
LOOKAHEAD = 16  # > the splitter's longest look-ahead (a month name, a list-item prefix)
_WINDOW = 256  # first window split per sentence; doubled while no boundary is in it

_MARKER_BODY = r"\[\s*\d+(?:\s*(?:[,،;]|[-–])\s*\d+)*\s*\]"
_MARKER = re.compile(_MARKER_BODY)
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
_TERMINAL_CHARS = frozenset(".!?…．؟۔।॥。！？\n")
# The splitter's look-ahead: spaces, opening quotes/brackets, then the next character.
_NEXT = re.compile(r"\s*[\"'“‘«¿¡(]*")
# From terminal punctuation to where the next sentence would start: the rest of the
# punctuation run, closers, markers (maybe unfinished), spaces, opening quotes.
_AFTER_TERMINAL = re.compile(
    r"[.!?…．؟۔।॥。！？]*[\"'”’»)\]」』）】》〉]*(?:[ \t]*\[[\s\d,،;\-–]*\]?)*\s*[\"'“‘«¿¡(]*"
)


def _find_terminal(buf: str, pos: int) -> int:
    """``_TERMINAL.search(buf, pos).start()``, or -1 — several times faster.

    A plain character class finds each candidate at C speed and ``_TERMINAL`` is only
    matched there; searching with ``_TERMINAL`` itself tries its look-ahead everywhere.
    """
    while (hit := _TERMINAL_CHAR.search(buf, pos)) is not None:
        start = hit.start()
        if _TERMINAL.match(buf, start) is not None:
            return start
        pos = start + 1
    return -1


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
    cited: dict[int, None] = {}
    kept: list[str] = []
    prev = 0
    for m in _MARKER.finditer(sentence):
        marker = m.group(0)
        inner = marker[1:-1]
        if inner.isdigit():  # the common "[3]"; int() reads Persian/Arabic-Indic digits too
            if int(inner) not in given:
                return tuple(cited), marker, ""
            cited[int(inner)] = None
        else:
            for a, b in map(_span, _MARKER_PART.findall(marker)):
                if b < a or b - a > len(given) or any(i not in given for i in range(a, b + 1)):
                    return tuple(cited), marker, ""
                cited.update(dict.fromkeys(range(a, b + 1)))
        kept.append(sentence[prev : m.start()].rstrip(" \t\u00a0"))
        prev = m.end()
    kept.append(sentence[prev:])
    return tuple(cited), None, "".join(kept).strip()


def _span(part: str) -> tuple[int, int]:
    lo, _, hi = part.replace("–", "-").partition("-")
    return int(lo), int(hi) if hi else int(lo)


def strip_markers(sentence: str) -> str:
    """The sentence without its markers: "built it [1]." → "built it."."""
    if "[" not in sentence:
        return sentence.strip()
    return _MARKER_STRIP.sub("", sentence).strip()


def word_count(text: str) -> float:
    """Space-separated tokens holding a letter or digit, plus 2/3 per Han character."""
    han = 0
    if not text.isascii():
        text, han = _HAN.subn(" ", text)
    return len(_WORD_TOKEN.findall(text)) + han * 2 / 3


def _verdict(sentence: str, cited: tuple[int, ...], rule: str | None = None,
             value: str | None = None, released: str = "") -> GateVerdict:
    return GateVerdict(sentence, released if rule is None else "", cited, rule is None, rule, value)


def _check(
    sentence: str,
    given: Mapping[int, object],
    values_of: Callable[[int], frozenset[str]],
    lang: str | None,
    min_words: int,
) -> GateVerdict:
    cited, bad, text = _markers(sentence, given)
    if bad is not None:
        return _verdict(sentence, cited, "marker_range", bad)
    values = value_spans(text)
    if not cited and (values or word_count(text) >= min_words):
        return _verdict(sentence, cited, "missing_marker", values[0][1] if values else None)
    if values:
        pools = [values_of(i) for i in cited]
        for _kind, raw, canonical in values:
            if not any(canonical in pool for pool in pools):
                return _verdict(sentence, cited, "unsupported_value", raw)
    word = first_person_word(text, lang)
    if word is not None:
        return _verdict(sentence, cited, "first_person", word)
    if NO_ANSWER in sentence:
        return _verdict(sentence, cited, "no_answer", NO_ANSWER)
    return _verdict(sentence, cited, released=text)


def check_sentence(
    sentence: str,
    sources: Mapping[int, str],
    lang: str | None = None,
    *,
    min_words_for_marker: int = DEFAULT_MIN_WORDS,
) -> GateVerdict:
    """Check one sentence against the numbered ``sources`` (pure; see the module docstring)."""
    cache: dict[int, frozenset[str]] = {}

    def values_of(i: int) -> frozenset[str]:
        if i not in cache:
            cache[i] = source_values(sources[i])
        return cache[i]

    return _check(sentence, sources, values_of, lang, min_words_for_marker)


class SentenceGate:
    """Cuts a stream into sentences and checks each one (see the module docstring)."""

    def __init__(
        self,
        sources: Mapping[int, str],
        lang: str | None = None,
        *,
        min_words_for_marker: int = DEFAULT_MIN_WORDS,
    ) -> None:
        if min_words_for_marker < 1:
            raise ValueError("min_words_for_marker must be at least 1")
        self._values = {int(i): source_values(text) for i, text in sources.items()}
        self._lang = lang
        self._min_words = min_words_for_marker
        # The stream so far, as chunks joined only when a sentence may have ended (so
        # feeding stays linear); positions below are offsets into the joined text, whose
        # checked prefix is dropped now and then.
        self._parts: list[str] = []
        self._len = 0
        self._off = 0  # start of the held text
        self._need = -1  # try to cut at this length; -1: wait for terminal punctuation
        self._failed: GateVerdict | None = None
        self._closed = False

    @property
    def pending(self) -> str:
        """Held text not yet checked."""
        return self._text()[self._off :]

    @property
    def closed(self) -> bool:
        """True after a failing verdict or ``finish()``; feeding then returns ``[]``."""
        return self._closed

    @property
    def failed(self) -> GateVerdict | None:
        """The verdict that closed the gate, if one did."""
        return self._failed

    def feed(self, chunk: str) -> list[GateVerdict]:
        """Verdicts of every sentence this chunk completes (0, 1 or more)."""
        if self._closed or not chunk:
            return []
        self._parts.append(chunk)
        n = self._len = self._len + len(chunk)
        need = self._need
        if need < 0:  # nothing can end a sentence until terminal punctuation arrives
            if _TERMINAL_CHARS.isdisjoint(chunk):  # twice as fast as the regex on a chunk
                return []
            at = _find_terminal(chunk, 0)
            if at < 0:
                return []
            # The terminal found in the chunk is the buffer's first one from there (the
            # buffer ends where the chunk does): compute the wait without searching again.
            need = self._need = _AFTER_TERMINAL.match(self._text(), n - len(chunk) + at).end() + LOOKAHEAD + 1
        if n < need:
            return []
        return self._drain(final=False)

    def finish(self) -> list[GateVerdict]:
        """Verdicts of the rest of the stream; closes the gate."""
        if self._closed:
            return []
        out = self._drain(final=True)
        self._closed = True
        return out

    def _text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def _advance(self, pos: int) -> None:
        """Mark everything before ``pos`` as checked; drop it once it is most of the text."""
        self._off = pos
        if pos > 4096 and 2 * pos > self._len:
            self._parts = [self._text()[pos:]]
            self._len -= pos
            self._off = 0

    def _arm(self, start: int) -> None:
        """Wait for the first terminal punctuation at or after ``start``, plus look-ahead."""
        buf = self._text()
        at = _find_terminal(buf, start)
        if at < 0:
            self._need = -1
        else:
            self._need = _AFTER_TERMINAL.match(buf, at).end() + LOOKAHEAD + 1

    def _drain(self, final: bool) -> list[GateVerdict]:
        out: list[GateVerdict] = []
        while self._failed is None:
            cut = self._next_cut(final)
            if cut is None:
                break
            piece = self._text()[self._off : cut].strip()
            self._advance(cut)
            if piece:
                verdict = _check(piece, self._values, self._values.__getitem__,
                                 self._lang, self._min_words)
                out.append(verdict)
                if not verdict.ok:
                    self._failed = verdict
                    self._closed = True
        return out

    def _next_cut(self, final: bool) -> int | None:
        """End of the first held sentence, once no later chunk can move it."""
        buf, off = self._text(), self._off
        if final and not buf[off:].strip():
            self._advance(len(buf))
            return None
        size = _WINDOW
        if not final:
            # Line breaks before the first word end nothing: look past them.
            at = _find_terminal(buf, _SPACES.match(buf, off).end())
            if at < 0:
                self._need = -1
                return None
            need = _AFTER_TERMINAL.match(buf, at).end() + LOOKAHEAD + 1
            if len(buf) < need:
                self._need = need
                return None
            size = need - off  # the least text that can settle the first boundary
        while True:
            whole = off + size >= len(buf)
            cut, need_in = _cut_in(buf[off : off + size], final and whole)
            if cut is not None or whole:
                break
            size *= 2
        if cut is not None:
            return off + cut
        if not final:
            if need_in is not None:
                self._need = off + need_in
            else:  # no boundary yet: wait for terminal punctuation near or past the end
                self._arm(max(_SPACES.match(buf, off).end(), len(buf) - LOOKAHEAD))
        return None


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
