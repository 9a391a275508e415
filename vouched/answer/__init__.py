"""The answer path: the pipeline, its events, the extractive generator and the records route."""

from vouched.answer.assistant import Assistant
from vouched.answer.events import Answer, CitedSource, DoneEvent, Event, NoticeEvent, RefusalEvent, SentenceEvent
from vouched.answer.pipeline import Pipeline, Previous

__all__ = ["Answer", "Assistant", "CitedSource", "DoneEvent", "Event", "NoticeEvent", "Pipeline", "Previous", "RefusalEvent", "SentenceEvent"]
