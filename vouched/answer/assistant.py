"""The Python API: `Assistant.from_config(path).ask(question)`.

One async core (`astream`); `stream` and `ask` are sync conveniences that drive it on a
private event loop, so sentences still arrive one by one.
"""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path
from typing import AsyncIterator, Iterator, Mapping

from vouched.answer.events import Answer, Event
from vouched.answer.build import Parts, build
from vouched.answer.pipeline import Pipeline, Previous, SpendGate
from vouched.config import Config, load_config
from vouched.engine import Engine

PreviousLike = Previous | Mapping[str, str] | tuple[str, str] | None


def as_previous(previous: PreviousLike) -> Previous | None:
    if previous is None or isinstance(previous, Previous):
        return previous
    if isinstance(previous, tuple):
        return Previous(*previous)
    return Previous(question=previous.get("question", ""), answer=previous.get("answer", ""))


class Assistant:
    """The Python API over a deployment's `Parts` (answer/build.py).

    ``Assistant(config)`` builds them from the config; ``engine``, ``provider``, ``spend`` and
    ``trace_sink`` are given to `build` instead of being built; ``parts`` are used as they are.
    """

    def __init__(
        self,
        config: Config,
        *,
        engine: Engine | None = None,
        provider=None,
        spend: SpendGate | None = None,
        trace_sink=None,
        parts: Parts | None = None,
    ) -> None:
        if parts is None:
            from vouched.answer.build import _UNSET

            parts = build(config, engine=engine, provider=provider, spend=spend if spend is not None else _UNSET,
                          trace_sink=trace_sink)
        self.config = parts.config
        self.parts = parts
        self.engine = parts.engine
        self.pipeline = Pipeline(parts)

    @classmethod
    def from_config(cls, path: str | Path | None = None, **kw) -> "Assistant":
        return cls(load_config(path), **kw)

    async def astream(self, question: str, previous: PreviousLike = None, *, lang: str | None = None,
                      tenant: str | None = None, as_of: date | None = None) -> AsyncIterator[Event]:
        from vouched.answer.numbering import ReaderNumbers

        numbers = ReaderNumbers()  # the reader's sources are numbered 1, 2, … as first cited
        async for e in self.pipeline.run(question, as_previous(previous), lang=lang, tenant=tenant, as_of=as_of):
            yield numbers.apply(e)

    async def aask(self, question: str, previous: PreviousLike = None, **kw) -> Answer:
        return Answer.from_events([e async for e in self.astream(question, previous, **kw)])

    def stream(self, question: str, previous: PreviousLike = None, **kw) -> Iterator[Event]:
        loop = asyncio.new_event_loop()
        agen = self.astream(question, previous, **kw)
        try:
            while True:
                try:
                    yield loop.run_until_complete(agen.__anext__())
                except StopAsyncIteration:
                    break
        finally:
            loop.run_until_complete(agen.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())  # e.g. an HTTP stream's inner generators
            loop.close()

    def ask(self, question: str, previous: PreviousLike = None, **kw) -> Answer:
        return Answer.from_events(list(self.stream(question, previous, **kw)))
