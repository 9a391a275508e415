"""The sentence gate's early stop (L4, ``vouched.guard.gate``, ``early_stop=True``): which
characters may start a value or a name, and ``_probe``, which checks the words completed so
far against all the sources (a mixin of ``SentenceGate``; ``_feed_early`` calls it)."""

from __future__ import annotations

import re

from vouched.guard.gate_check import GateVerdict, _tuple_new, says_no_answer
from vouched.guard.gate_cuts import _TERMINAL
from vouched.guard.gate_markers import _PARTIAL_MARKER, strip_markers
from vouched.guard.names import _UPPER, NamePool, name_spans
from vouched.guard.values import value_spans

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


class _EarlyStop:
    """``SentenceGate``'s early-stop probe (its state is set up by ``SentenceGate.__init__``)."""

    _parts: list[str]
    _off: int
    _probe_at: int
    _cand: bool
    _uncased: bool
    _union: frozenset[str]
    _union_pool: NamePool | None
    _pools: dict[int, NamePool]
    _lang: str | None
    _allowed: frozenset[str]

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
                if says_no_answer(raw):
                    continue
                if not pool.has(kind, key):
                    return _tuple_new(GateVerdict, (buf[off:end].strip(), "", (), False, "unsupported_name", raw))
        return None
