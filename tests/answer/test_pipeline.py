import re

import pytest

from tests.answer.conftest import make_assistant
from vouched.answer import Answer, DoneEvent, SentenceEvent
from vouched.llm.base import Usage
from vouched.llm.scripted import ScriptedProvider


@pytest.mark.parametrize("question", [
    "What are Leila Navid's day rates?",
    "How much does she charge for an audit?",
    "هزينه‌ي همكاري با لیلا چقدر است؟",  # Arabic yeh and kaf
    "هزینشو میخواهم بدانم",  # joined spelling
    "¿Cuáles son sus tarifas?",
])
def test_l1_fee_refusal_constructs_nothing(site_config, question):
    a, counting = make_assistant(site_config, provider=ScriptedProvider(["never"]))
    ans = a.ask(question)
    assert ans.outcome == "refused" and ans.layer == "L1" and ans.category == "fees"
    assert counting.counts == {"retriever": 0, "store": 0, "embedder": 0, "provider": 0}
    assert ans.text and not ans.sentences and not ans.sources


def test_l1_refusal_text_is_fixed_and_localised(site_config):
    a, _ = make_assistant(site_config)
    en = a.ask("What are her rates?")
    es = a.ask("¿Cuáles son sus tarifas?")
    assert en.text != es.text
    assert a.ask("What are her fees?").text == en.text  # fixed string, not generated


def test_off_topic_is_refused_by_l2_without_a_provider_call(site_config):
    provider = ScriptedProvider(["Paris is sunny [1]."])
    a, counting = make_assistant(site_config, provider=provider)
    ans = a.ask("What's the weather in Paris today?")
    assert ans.outcome == "refused" and ans.layer == "L2" and ans.category == "no_evidence"
    assert counting.counts["provider"] == 0 and provider.calls == 0
    assert ans.trace.evidence < ans.trace.threshold


def test_recent_work_answers_from_records_newest_first(site_config):
    a, counting = make_assistant(site_config)
    ans = a.ask("What has she done recently?")
    assert ans.outcome == "records"
    assert counting.counts["retriever"] == 0
    ids = [s.id for s in ans.sources]
    assert ids[0] in ("record:cv-independent", "record:cv-mar-azul-advisor")
    assert all(s.kind == "record" for s in ans.sources)
    # current records carry "present"; nothing else does
    assert "present" in ans.sentences[0]


def test_extractive_answer_cites_existing_sources(site_config):
    a, _ = make_assistant(site_config)
    ans = a.ask("Which database did the Tessera Health search run on?")
    assert ans.outcome == "answered", ans
    assert ans.sentences and ans.sources
    # extractive: every released sentence is a sentence of a cited source, verbatim
    texts = a.parts.store.get().get_chunks([s.id for s in ans.sources])
    corpus = " ".join(" ".join(c.text.split()) for c in texts.values())
    for sentence in ans.sentences:
        assert sentence.rstrip(".") in corpus
    numbers = {s.number for s in ans.sources}
    trace = ans.trace
    assert all(x["ok"] for x in trace.sentences)
    assert len(numbers) == len(ans.sources)
    assert "[" not in " ".join(ans.sentences)  # markers stripped


def _scripted(site_config, chunks, **kw):
    provider = ScriptedProvider(chunks, usage=kw.pop("usage", Usage(input_tokens=100, output_tokens=20)), **kw)
    cfg = site_config.model_copy(update={"answer": site_config.answer.model_copy(update={"provider": "openai"})})
    a, counting = make_assistant(cfg, provider=provider)
    return a, provider


Q = "Which database did the Tessera Health search run on?"


def test_model_answer_released_sentence_by_sentence(site_config):
    # (no proper names here: source [1] is the page's header, and the gate's name rule would hold
    # a name that only another source gives)
    a, provider = _scripted(site_config, ["The search ran on two retr", "ievers at once [", "1", "]. It merged their", " lists [1]."])
    events = list(a.stream(Q))
    sentences = [e for e in events if isinstance(e, SentenceEvent)]
    assert [s.text for s in sentences] == ["The search ran on two retrievers at once.", "It merged their lists."]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.outcome == "answered"
    assert [s.number for s in done.sources] == [1]
    assert done.usage.input_tokens == 100 and done.usage.output_tokens == 20


def test_unsupported_number_holds_the_rest_and_cancels_upstream(site_config):
    a, provider = _scripted(site_config, ["The search used two retrievers [1]. ", "It cut costs by 73% [1]. ", "More text [1]. "] * 3)
    ans = a.ask(Q)
    assert ans.outcome == "held" and ans.layer == "L4" and ans.category == "unsupported_value"
    assert ans.sentences == ("The search used two retrievers.",)
    assert ans.notices[0].kind == "held"
    assert provider.cancelled
    assert any(s["rule"] == "unsupported_value" and s["value"] for s in ans.trace.sentences)


def test_out_of_range_marker_is_held(site_config):
    a, provider = _scripted(site_config, ["It used two retrievers [1]. It also used a third one [42]."])
    ans = a.ask(Q)
    assert ans.outcome == "held" and ans.category == "marker_range"


def test_a_leading_marker_and_a_citation_lead_are_released_as_plain_sentences(site_config):
    # "[1]. Sentence." (the marker before its sentence) cites that sentence; "According to [1], X"
    # is released as "X", not "According to, X"; both keep their source.
    a, _ = _scripted(site_config, ["[1]. It used two retrievers. According to [1], it also used pgvector."])
    ans = a.ask(Q)
    assert ans.outcome == "answered", ans.trace.sentences
    assert ans.sentences == ("It used two retrievers.", "It also used pgvector.")
    assert ans.sources and ans.sources[0].number == 1


def test_first_person_is_held_by_l5(site_config):
    a, _ = _scripted(site_config, ["I built the search with two retrievers [1]."])
    ans = a.ask(Q)
    assert ans.outcome == "held" and ans.layer == "L5" and ans.category == "first_person"
    assert ans.sentences == ()


def test_no_answer_token_becomes_the_fixed_refusal(site_config):
    a, _ = _scripted(site_config, ["NO_", "ANSWER"])
    ans = a.ask(Q)
    assert ans.outcome == "refused" and ans.category == "no_answer"
    assert "NO_ANSWER" not in ans.text


def test_length_cut_gets_its_own_notice(site_config):
    a, _ = _scripted(site_config, ["It used two retrievers [1]. It also used pg", "vector and"], finish_reason="length")
    ans = a.ask(Q)
    assert ans.outcome == "truncated"
    assert ans.sentences == ("It used two retrievers.",)
    assert ans.notices[0].kind == "truncated"


def test_followup_fee_question_is_refused_with_previous(site_config):
    a, _ = make_assistant(site_config)
    ans = a.ask("and what did it cost?", previous=("Tell me about the Tessera project.", "It was a search engine."))
    assert ans.outcome == "refused" and ans.layer == "L1" and ans.category == "fees"


def test_async_api(site_config):
    import asyncio

    a, _ = make_assistant(site_config)
    ans = asyncio.run(a.aask("What are her rates?"))
    assert isinstance(ans, Answer) and ans.layer == "L1"


def test_a_configured_paid_provider_gets_the_spend_gate(site_config):
    """Built from config (CLI, Python API), an LLM provider is never called without a reservation."""
    from vouched.answer import Assistant
    from vouched.config import ModelPrice
    from vouched.errors import ConfigError

    answer = site_config.answer.model_copy(update={"provider": "openai", "model": "gpt-x", "base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(ConfigError, match="spend.prices"):
        Assistant(site_config.model_copy(update={"answer": answer}))
    spend = site_config.spend.model_copy(update={"prices": {"gpt-x": ModelPrice(input_per_mtok=1, output_per_mtok=1)}})
    a = Assistant(site_config.model_copy(update={"answer": answer, "spend": spend}))
    assert a.pipeline.spend is not None
    # the cap is 0 USD: the reservation fails and the model is never called
    ans = a.ask("Which database did the Tessera Health search run on?")
    assert ans.outcome == "limited" and ans.layer == "spend" and ans.notices[0].kind == "limit"


def test_an_unmarked_sentence_quoting_a_source_is_released_with_that_source(site_config):
    """guard.attribute_quotes: the model copies a source sentence and writes no marker; the answer
    releases it citing that source. A reworded unmarked sentence is still held (missing_marker)."""
    a, provider = _scripted(site_config, ["It used two retrievers [1]."])
    assert a.ask(Q).outcome == "answered"
    prompt = provider.requests[-1].messages[-1].content
    number, quote = next((int(n), sent) for n, body in re.findall(r"<<<SOURCE (\d+)\n(.*?)\nSOURCE \1>>>", prompt, re.S)
                         for sent in re.split(r"(?<=\.)\s+", body)
                         if sent.endswith(".") and len(sent.split()) >= 8 and not any(ch.isdigit() for ch in sent))
    a, _ = _scripted(site_config, [quote])
    ans = a.ask(Q)
    assert ans.outcome == "answered", ans.trace.sentences
    assert ans.sentences == (quote,)
    assert [x["cited"] for x in ans.trace.sentences] == [[number]] and len(ans.sources) == 1  # the prompt's number
    words = quote.rstrip(".").split()
    reworded = " ".join(words[1:] + words[:1]) + "."  # the same words, not in the source's order
    a, _ = _scripted(site_config, [reworded])
    held = a.ask(Q)
    assert held.outcome == "held" and held.category == "missing_marker", held.trace.sentences
    cfg = site_config.model_copy(update={"guard": site_config.guard.model_copy(update={"attribute_quotes": False})})
    a, _ = _scripted(cfg, [quote])
    off = a.ask(Q)
    assert off.outcome == "held" and off.category == "missing_marker"


@pytest.mark.parametrize("counters, category, kind, key", [
    ("full", "monthly_limit", "limit", "notice.limit"),
    ("down", "spend_unavailable", "unavailable", "notice.unavailable"),
])
def test_the_spend_notice_says_why_no_model_was_called(site_config, counters, category, kind, key):
    """A spend store that is down fails closed, and the reader is told to try again shortly, not
    that the monthly limit is reached; a full month says so."""
    from tests.spend.suite import spend_settings
    from vouched.answer.build import Lazy
    from vouched.guard.texts import fixed_text
    from vouched.spend import Budget

    class Counters:
        def try_reserve(self, *a):
            if counters == "down":
                raise ConnectionError("connection refused")
            return None

        def settle(self, *a):
            raise AssertionError("no call was made: nothing to settle")

    provider = ScriptedProvider(["It used two retrievers [1]."], usage=Usage(input_tokens=100, output_tokens=20), model="m")
    cfg = site_config.model_copy(update={"answer": site_config.answer.model_copy(update={"provider": "openai", "model": "m"})})
    a, _ = make_assistant(cfg, provider=provider, spend=Lazy.of(Budget(spend_settings(5.0), Counters())))
    ans = a.ask(Q)
    assert (ans.outcome, ans.layer, ans.category) == ("limited", "spend", category)
    assert [(n.kind, n.text) for n in ans.notices] == [(kind, fixed_text(key, "en"))]
    assert provider.requests == []  # no model call either way
