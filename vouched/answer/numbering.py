"""Source numbers as the reader sees them: 1, 2, 3 … in the order they are first cited.

The prompt numbers every source it gives the generator (1..k, best first); the reader sees
only the sources the released sentences cite. Passed through unchanged, an answer whose
first sentence came from the second passage showed "[2]" first and no "[1]" at all. Here
each prompt number is mapped, on its first citation, to the next reader number; the done
event's sources are renumbered and ordered the same way (a source listed there that no
sentence cited keeps its order after the cited ones). Traces keep the prompt numbers.
"""

from __future__ import annotations

from dataclasses import replace
from vouched.answer.events import DoneEvent, Event, SentenceEvent


class ReaderNumbers:
    """Maps prompt source numbers to reader numbers, event by event."""

    def __init__(self) -> None:
        self.mapping: dict[int, int] = {}

    def _number(self, n: int) -> int:
        if n not in self.mapping:
            self.mapping[n] = len(self.mapping) + 1
        return self.mapping[n]

    def apply(self, event: Event) -> Event:
        if isinstance(event, SentenceEvent) and event.sources:
            return replace(event, sources=tuple(self._number(n) for n in event.sources))
        if isinstance(event, DoneEvent) and event.sources:
            cited = sorted((s for s in event.sources if s.number in self.mapping), key=lambda s: self.mapping[s.number])
            rest = [s for s in event.sources if s.number not in self.mapping]
            ordered = [replace(s, number=self.mapping[s.number]) for s in cited]
            ordered += [replace(s, number=len(ordered) + i + 1) for i, s in enumerate(rest)]
            return replace(event, sources=tuple(ordered))
        return event
