"""Results are returned, not left behind: no `last_*` attribute on an object shared across requests."""

from __future__ import annotations

from vouched.answer import Assistant
from vouched.answer.events import DoneEvent
from vouched.engine import Engine
from vouched.types import SearchFilters


def _last(obj) -> list[str]:
    return sorted(k for k in vars(obj) if k.startswith("last_"))


def test_no_last_attributes_on_the_shared_objects(site_config):
    eng = Engine(site_config)
    a = Assistant(site_config, engine=eng)
    answered = a.ask("Which database did the Tessera Health search run on?")
    refused = a.ask("What's the weather in Paris today?")
    result = eng.retriever.search("Tessera Health database", filters=SearchFilters(), query_lang="en")
    eng.store.dense_search(eng.embedder.embed_queries(["Tessera Health"])[0], SearchFilters(), 3)
    eng.store.keyword_search(["tessera"], SearchFilters(), 3)
    for obj in (a, a.pipeline, a.pipeline.scoring, eng, eng.store, eng.retriever, eng.embedder,
                getattr(eng.embedder, "inner", eng.embedder)):
        assert _last(obj) == [], type(obj).__name__
    # what used to be left behind comes back with the result
    assert answered.trace is not None and answered.trace.route == "retrieval" and answered.trace.source_ids
    assert refused.trace is not None and refused.trace.layer == "L2" and refused.trace.id == refused.trace_id
    assert result.times.embed_ms >= 0 and result.dense_plan in ("exact", "ann", "ann+exact", "none")
    assert result.keyword_plan in ("fts5", "index")


def test_each_answer_carries_its_own_trace(site_config):
    a = Assistant(site_config)
    first = list(a.stream("Which database did the Tessera Health search run on?"))
    second = list(a.stream("What's the weather in Paris today?"))
    t1, t2 = first[-1].trace, second[-1].trace
    assert isinstance(first[-1], DoneEvent) and t1 is not t2
    assert t1.question.startswith("Which database") and t2.question.startswith("What's the weather")
    # the trace is never sent with the event
    from vouched.answer.events import event_to_dict

    assert "trace" not in event_to_dict(first[-1]) and "trace" not in a.ask("hello").to_dict()
