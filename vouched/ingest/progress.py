"""Ingest progress that says something: an ETA from the average rate so far, and plain
periodic lines when stderr is not a terminal (a CI log, `nohup`, a pipe).

Rich's own remaining-time column estimates speed from the samples of the last 30 seconds;
embedding batches on a small machine arrive less often than that, so it showed `-:--:--`
for most of a long ingest. Here the rate is completed / elapsed since the stage started,
known from the first advance on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable


def eta_seconds(elapsed: float, completed: float, total: float | None) -> float | None:
    """Seconds left at the average rate so far; None while nothing is known (no total, nothing done)."""
    if total is None or completed <= 0 or elapsed <= 0:
        return None
    if completed >= total:
        return 0.0
    return elapsed * (total - completed) / completed


def clock(seconds: float | None) -> str:
    """H:MM:SS, or -:--:-- when unknown."""
    if seconds is None:
        return "-:--:--"
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def rich_eta_column():
    """A rich ProgressColumn showing `eta_seconds` for the task (rich is imported only here)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class _Eta(ProgressColumn):
        def render(self, task) -> Text:  # noqa: ANN001 - rich's Task
            if task.finished:
                return Text("0:00:00", style="progress.remaining")
            return Text(clock(eta_seconds(task.elapsed or 0.0, task.completed, task.total)), style="progress.remaining")

    return _Eta()


@dataclass
class _Stage:
    total: int | None
    started: float
    done: int = 0


@dataclass
class LineProgress:
    """Progress as plain lines, one per stage at most every `every_s` seconds, plus one when a stage ends."""

    write: Callable[[str], None]
    every_s: float = 10.0
    now: Callable[[], float] = time.monotonic
    _stages: dict[str, _Stage] = field(default_factory=dict)
    _last: float = float("-inf")

    def start(self, stage: str, total: int | None) -> None:
        self._stages[stage] = _Stage(total, self.now())

    def advance(self, stage: str, n: int = 1) -> None:
        st = self._stages.get(stage)
        if st is None:
            st = self._stages[stage] = _Stage(None, self.now())
        st.done += n
        t = self.now()
        finished = st.total is not None and st.done >= st.total
        if finished or t - self._last >= self.every_s:
            self._last = t
            self.write(self.line(stage, t))

    def line(self, stage: str, t: float | None = None) -> str:
        st = self._stages[stage]
        t = self.now() if t is None else t
        elapsed = t - st.started
        of = f"/{st.total}" if st.total is not None else ""
        pct = f" ({st.done / st.total:.0%})" if st.total else ""
        return f"{stage}: {st.done}{of}{pct}, elapsed {clock(elapsed)}, eta {clock(eta_seconds(elapsed, st.done, st.total))}"
