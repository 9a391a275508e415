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
   A contentful sentence without a marker that *quotes* a source — its words, in order, in
   one span of that source, leaving out at most one content word in eight and never a
   "not", "only", "unless" … (``vouched.guard.gate_quote``) — cites that source instead
   (the lowest-numbered when several hold it) and meets every rule below against it;
   ``attribute_quotes=False`` turns this off.
3. ``unsupported_value`` — every number, URL and e-mail of the sentence appears in a
   source that *this* sentence cites (``vouched.guard.values``: digits normalised, whole
   values only, "12,000" ≡ "12.000" ≡ "۱۲٬۰۰۰", "2023" is not in "20234").
4. ``first_person`` — no first-person word (L5, ``vouched.guard.voice``).
5. ``no_answer`` — the sentence is, or contains, ``NO_ANSWER`` (exact: any occurrence, even
   glued to other text — the token must never reach the reader; in another case, as models
   misspell it, "No_ANSWER", as a word of its own; never "no answer" without the underscore); the
   pipeline answers with its fixed refusal. Because of the order, a sentence that both
   breaks a rule above and says NO_ANSWER is reported under that rule.

A leading citation: a unit that is nothing but markers and punctuation ("[1].", "[2][3]:"),
as a model writes when it puts the citation before its sentence, is ok on its own (it
releases no text) and its markers cite the next sentence when that sentence has no marker
of its own (``leading_citation``, ``with_leading_citation``). The next sentence is checked,
by every rule, as "[1] The sentence ..." — the verdict's ``sentence`` shows the markers where
they were carried — so its values and names must be in the sources so cited. A sentence with
markers of its own keeps exactly its own.

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

from typing import Iterable, Mapping

from vouched.guard.gate_check import (
    _HAN,  # noqa: F401 (re-exported)
    _WORD_TOKEN,  # noqa: F401 (re-exported)
    DEFAULT_MIN_WORDS,
    NO_ANSWER,
    RULES,
    GateVerdict,
    _check,
    _tuple_new,  # noqa: F401 (re-exported)
    allowed_keys,
    check_sentence,
    leading_citation,
    with_leading_citation,
    word_count,
)
from vouched.guard.gate_cuts import (
    _AFTER,
    _AFTER_CHARS,  # noqa: F401 (re-exported)
    _AFTER_REST,  # noqa: F401 (re-exported)
    _AFTER_TERMINAL,  # noqa: F401 (re-exported)
    _HELD,  # noqa: F401 (re-exported)
    _NEXT,  # noqa: F401 (re-exported)
    _SENTENCE,  # noqa: F401 (re-exported)
    _SPACES,  # noqa: F401 (re-exported)
    _TERMINAL,  # noqa: F401 (re-exported)
    _TERMINAL_CHAR,
    _TERMINAL_SPAN,
    _WINDOW,
    LOOKAHEAD,
    _cut_in,
)
from vouched.guard.gate_drain import _Drain
from vouched.guard.gate_markers import (
    _HEADER_FLAG,  # noqa: F401 (re-exported)
    _MARKER,  # noqa: F401 (re-exported)
    _MARKER_BODY,  # noqa: F401 (re-exported)
    _MARKER_PART,  # noqa: F401 (re-exported)
    _MARKER_SPLIT,  # noqa: F401 (re-exported)
    _MARKER_STRIP,  # noqa: F401 (re-exported)
    _PARTIAL_MARKER,  # noqa: F401 (re-exported)
    _citations_only,  # noqa: F401 (re-exported)
    _glued,  # noqa: F401 (re-exported)
    _is_code_index,  # noqa: F401 (re-exported)
    _markers,  # noqa: F401 (re-exported)
    _span,  # noqa: F401 (re-exported)
    strip_markers,
)
from vouched.guard.gate_probe import (
    _BOUNDARY,
    _CANDIDATE,
    _CANDIDATE_UNCASED,
    _DIGIT,  # noqa: F401 (re-exported)
    _OPEN_TAIL_CHARS,  # noqa: F401 (re-exported)
    _EarlyStop,
    cand_after,  # noqa: F401 (re-exported)
)
from vouched.guard.names import NamePool
from vouched.guard.values import source_values

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


class SentenceGate(_Drain, _EarlyStop):
    """Cuts a stream into sentences and checks each one (see the module docstring). The live
    drain (``_drain_live``) is in ``vouched.guard.gate_drain``, the early stop's probe
    (``_probe``) in ``vouched.guard.gate_probe``."""

    def __init__(
        self,
        sources: Mapping[int, str],
        lang: str | None = None,
        *,
        min_words_for_marker: int = DEFAULT_MIN_WORDS,
        allowed_names: Iterable[str] = (),
        early_stop: bool = False,
        attribute_quotes: bool = True,
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
        self._quotes = attribute_quotes  # an unmarked sentence quoting a source cites it (gate_quote)
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
        self._carry: str | None = None  # a leading citation's markers, for the next sentence
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
                piece = with_leading_citation(self._carry, piece)
                verdict = _check(piece, values, values.__getitem__, self._lang, self._min_words,
                                 self._pool_of, self._allowed, self._quotes)
                self._carry = leading_citation(verdict)
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
