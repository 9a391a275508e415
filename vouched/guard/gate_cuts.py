"""The sentence gate's boundaries (L4, ``vouched.guard.gate``): the expressions that find
terminal punctuation in a stream and tell when a sentence's end is settled (``LOOKAHEAD``),
the drain's one-match fast path (``_SENTENCE``), and ``_cut_in``, the general way."""

from __future__ import annotations

import re

from vouched.guard.gate_markers import _PARTIAL_MARKER
from vouched.text.sentences import _CUT, first_sentence_end

LOOKAHEAD = 16  # > the splitter's longest look-ahead (a month name, a list-item prefix)
_WINDOW = 256  # first window split per sentence; doubled while no boundary is in it
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


# Every character _AFTER_TERMINAL can take that is no space: terminal punctuation,
# closers, "[" (markers, maybe unfinished) and opening quotes.
_AFTER_CHARS = frozenset(".!?…．؟۔।॥。！？\"'”’»)]」』）】》〉[“‘«¿¡(")


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
