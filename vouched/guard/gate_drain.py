"""The sentence gate's live drain (L4, ``vouched.guard.gate``): ``_drain_live`` cuts and
checks every held sentence whose end is settled — the streaming hot path, one regular
expression match per sentence in the usual case (a mixin of ``SentenceGate``)."""

from __future__ import annotations

from typing import Callable

from vouched.guard.gate_check import GateVerdict, _check, leading_citation, with_leading_citation
from vouched.guard.gate_cuts import (
    _AFTER,
    _AFTER_CHARS,
    _NEXT,
    _SENTENCE,
    _SPACES,
    _TERMINAL_SPAN,
    LOOKAHEAD,
)
from vouched.guard.gate_markers import _PARTIAL_MARKER
from vouched.guard.names import NamePool
from vouched.text.sentences import _ALWAYS, _dot_is_boundary, first_sentence_end


class _Drain:
    """``SentenceGate``'s live drain (its state is set up by ``SentenceGate.__init__``)."""

    _parts: list[str]
    _len: int
    _off: int
    _need: int
    _scan: int
    _scan_part: int
    _probe_at: int
    _failed: GateVerdict | None
    _closed: bool
    _values: dict[int, frozenset[str]]
    _value_set: Callable[[int], frozenset[str]]
    _pool_of: Callable[[int], NamePool]
    _lang: str | None
    _min_words: int
    _allowed: frozenset[str]
    _carry: str | None

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
                carry = self._carry
                if carry is not None:
                    piece = with_leading_citation(carry, piece)
                verdict = _check(piece, self._values, self._value_set, self._lang, self._min_words,
                                 self._pool_of, self._allowed, self._quotes)
                self._carry = leading_citation(verdict)
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
