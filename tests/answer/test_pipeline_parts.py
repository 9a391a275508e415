"""Partial answers, clarifying questions, greetings, unserved languages, bad input — end to end
on the portfolio example (hashing stand-in embedder)."""

import pytest

from tests.answer.conftest import make_assistant
from vouched.answer.analysis import InputError
from vouched.answer.events import DoneEvent, NoticeEvent, SentenceEvent
from vouched.llm.scripted import ScriptedProvider

NOT_COVERED = {
    "en": "The sources don't cover this part of the question",
    "es": "Las fuentes no cubren esta parte de la pregunta",
    "fa": "منابع این بخش از پرسش را پوشش نمی‌دهند",
}


@pytest.mark.parametrize("lang,question,answered_part", [
    ("en", "Which database did the Tessera Health search run on and who won the 2018 World Cup?",
     "Which database did the Tessera Health search run on"),
    ("es", "¿Qué base de datos usó el buscador de Tessera Health y quién ganó el Mundial de 2018?",
     "¿Qué base de datos usó el buscador de Tessera Health"),
    ("fa", "پاک‌نویس نرخ خطای نویسه را چقدر کاهش داد و چه کسی جام جهانی ۲۰۱۸ را برد؟",
     "پاک‌نویس نرخ خطای نویسه را چقدر کاهش داد"),
])
def test_partial_answer_names_the_uncovered_part(site_config, lang, question, answered_part):
    a, _ = make_assistant(site_config)
    events = list(a.stream(question, lang=lang))
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.outcome == "answered"
    assert done.status == "insufficient_context"
    assert len(done.uncovered) == 1 and answered_part not in done.uncovered[0]
    sentences = [e for e in events if isinstance(e, SentenceEvent)]
    assert sentences and all(e.sources for e in sentences)
    notice = [e for e in events if isinstance(e, NoticeEvent) and e.kind == "uncovered"]
    assert len(notice) == 1 and notice[0].text.startswith(NOT_COVERED[lang])
    assert done.uncovered[0].rstrip("?؟") in notice[0].text
    # the notice comes after every released sentence
    assert events.index(notice[0]) > events.index(sentences[-1])


@pytest.mark.parametrize("question", [
    "Which database did the Tessera Health search run on and what are her day rates?",
    "¿Qué base de datos usó el buscador de Tessera Health y cuáles son sus tarifas?",
])
def test_a_fee_part_is_refused_as_l1_while_the_rest_is_answered(site_config, question):
    a, counting = make_assistant(site_config)
    ans = a.ask(question)
    assert ans.outcome == "answered" and ans.status == "insufficient_context"
    assert ans.sentences and ans.sources
    assert [(r.layer, r.category) for r in ans.refusals] == [("L1", "fees")]
    assert ans.refusals[0].text == a.pipeline.text("refusal.fees", ans.lang)  # the fixed L1 text
    assert ans.trace.route == "partial"
    assert any(w.startswith("part refused by L1 (fees)") for w in ans.trace.warnings)


def test_a_question_refused_in_every_part_is_a_plain_l1_refusal(site_config):
    a, counting = make_assistant(site_config)
    ans = a.ask("What are her day rates and is she available next month?")
    assert ans.outcome == "refused" and ans.layer == "L1"
    assert counting.counts["retriever"] == 0


@pytest.mark.parametrize("question", ["and the other one?", "¿y el segundo?", "و دومی؟", "pricing"])
def test_vague_questions_get_the_clarify_request_without_retrieval(site_config, question):
    a, counting = make_assistant(site_config, provider=ScriptedProvider(["never"]))
    events = list(a.stream(question))
    assert [type(e) for e in events] == [NoticeEvent, DoneEvent]
    assert events[0].kind == "clarify" and events[1].category == "clarify"
    assert counting.counts == {"retriever": 0, "store": 0, "embedder": 0, "provider": 0}
    assert events[-1].trace.route == "clarify" and events[-1].trace.warnings[0].startswith("clarify: ")


def test_followup_with_a_previous_turn_is_not_a_clarify_case(site_config):
    a, counting = make_assistant(site_config)
    ans = a.ask("and the other one?", previous=("Which libraries does she maintain?", "1. pakneviss\n2. rrfuse"))
    assert ans.category != "clarify"


@pytest.mark.parametrize("question,kind", [("Hello!", "greeting"), ("ممنون!", "thanks"), ("¡Muchas gracias!", "thanks")])
def test_greetings_and_thanks_get_a_fixed_reply_without_retrieval(site_config, question, kind):
    a, counting = make_assistant(site_config)
    ans = a.ask(question)
    assert ans.outcome == "answered" and ans.category == kind and not ans.sources
    assert ans.text == a.pipeline.text(f"reply.{kind}", ans.lang)
    assert counting.counts == {"retriever": 0, "store": 0, "embedder": 0, "provider": 0}


def test_an_unserved_language_gets_the_fixed_refusal_in_the_default_language(site_config):
    a, counting = make_assistant(site_config)
    ans = a.ask("Что она делает сейчас в своей работе?")  # Russian; the portfolio serves en, es, fa
    assert ans.outcome == "refused" and ans.category == "unsupported_language"
    assert ans.lang == site_config.default_language
    assert ans.text == a.pipeline.text("refusal.unsupported_language", site_config.default_language)
    assert counting.counts["retriever"] == 0


def test_l1_still_runs_first_for_an_unserved_language(site_config):
    a, _ = make_assistant(site_config)
    assert a.ask("Сколько она берёт за аудит? Какие у неё расценки?").layer == "L1"


@pytest.mark.parametrize("question", ["", "   ", "x" * 5000])
def test_empty_or_overlong_input_is_an_error_not_a_refusal(site_config, question):
    a, counting = make_assistant(site_config)
    with pytest.raises(InputError):
        a.ask(question)
    assert counting.counts["retriever"] == 0


def test_semantic_cache_reuses_a_gate_passed_answer_within_tenant_and_version(site_config, tmp_path):
    cfg = site_config.model_copy(update={"cache": site_config.cache.model_copy(
        update={"enabled": True, "path": tmp_path / "cache.sqlite"})})
    a, counting = make_assistant(cfg)
    q = "Which database did the Tessera Health search run on?"
    first = a.ask(q)
    assert first.outcome == "answered" and first.trace.route == "retrieval"
    again = a.ask(q)
    assert again.trace.route == "cache" and again.sentences == first.sentences and again.sources == first.sources
    assert a.pipeline.cache.metrics.hits.values()
    # never across tenants, never for follow-ups or as_of questions
    assert a.ask(q, tenant="someone-else").trace.route != "cache"
    assert a.ask(q, previous=("What did she build?", "A search engine.")).trace.route != "cache"
    import datetime
    assert a.ask(q, as_of=datetime.date(2025, 1, 1)).trace.route != "cache"
    # L1 always runs first: a refused question never reaches the cache
    assert a.ask("What are her day rates?").layer == "L1"


@pytest.mark.parametrize("policy", ["hold", "drop", "mark"])
def test_claim_verification_policy(site_config, policy):
    """A model sentence whose cited source says the opposite (negation on one side only)."""
    from tests.answer.test_pipeline import _scripted

    cfg = site_config.model_copy(update={"guard": site_config.guard.model_copy(update={
        "verify": site_config.guard.verify.model_copy(update={"enabled": True, "policy": policy})})})
    a, provider = _scripted(cfg, ["The Tessera Health search did not run on postgres [1]. "])
    ans = a.ask("Which database did the Tessera Health search run on?")
    rules = [s["rule"] for s in ans.trace.sentences]
    if policy == "hold":
        assert ans.outcome == "held" and ans.category == "verify" and not ans.sentences
    elif policy == "drop":
        assert not ans.sentences and rules == ["verify_dropped"] and not ans.sources
    else:
        assert ans.sentences and rules == ["verify_marked"]
        events = list(a.stream("Which database did the Tessera Health search run on?"))
        assert any(getattr(e, "unverified", False) for e in events)


@pytest.mark.parametrize("reply, released", [("contradicted", False), ('{"verdict": "supported"}', True),
                                             ("I think so", False)])
def test_llm_verifier_backend_decides_in_answers(site_config, monkeypatch, reply, released):
    """[guard.verify] backend = "llm": the second model's verdict (awaited, never blocking the
    loop) is what holds or releases the sentence; a reply outside the closed schema holds."""
    from tests.answer.test_pipeline import _scripted
    from vouched.answer.generate import Generation
    from vouched.guard.verify_llm import LLMVerifier

    cfg = site_config.model_copy(update={"guard": site_config.guard.model_copy(update={
        "verify": site_config.guard.verify.model_copy(update={
            "enabled": True, "policy": "hold", "backend": "llm", "base_url": "http://127.0.0.1:9/v1",
            "model": "checker"})})})
    verifier_model = ScriptedProvider([reply], model="checker")
    verifier = LLMVerifier(verifier_model)
    monkeypatch.setattr(Generation, "llm_verifier", lambda self: verifier)
    # a sentence the word model would pass: the cited source says it
    a, _ = _scripted(cfg, ["The Tessera Health search ran on postgres [1]. "])
    ans = a.ask("Which database did the Tessera Health search run on?")
    assert verifier.stats.calls == 1
    if released:
        assert ans.outcome == "answered" and ans.sentences
    else:
        assert ans.outcome == "held" and ans.category == "verify" and not ans.sentences


@pytest.mark.parametrize("chunks", [["[1]"], ["[1] ", "[2]."], [""], ["  \n"]])
def test_an_answer_with_no_words_is_no_answer(site_config, chunks):
    """A model that writes only source markers (or nothing) gives the no-evidence refusal,
    never an empty "answered"; the trace keeps what it wrote."""
    from tests.answer.test_pipeline import _scripted

    a, _ = _scripted(site_config, chunks)
    ans = a.ask("Which database did the Tessera Health search run on?")
    assert ans.outcome == "refused" and ans.category == "no_answer" and not ans.sentences
    assert ans.text.strip()  # the fixed no-evidence text


def test_the_gate_checks_what_the_model_was_shown(site_config, monkeypatch):
    """Each source's title and section count as its words for the gate (guard.prompt.gate_text):
    a name the prompt showed only in a source's header is not a foreign name."""
    from tests.answer.test_pipeline import _scripted
    from vouched.guard import gate as gate_mod

    seen = {}
    real = gate_mod.SentenceGate.__init__

    def spy(self, sources, lang, **kw):
        seen.update(sources)
        real(self, sources, lang, **kw)

    monkeypatch.setattr(gate_mod.SentenceGate, "__init__", spy)
    a, provider = _scripted(site_config, ["The search ran on postgres [1]. "])
    ans = a.ask("Which database did the Tessera Health search run on?")
    assert ans.outcome == "answered" and len(seen) == len(ans.trace.source_ids)
    prompt = "\n".join(m.content for m in provider.requests[-1].messages)
    from vouched.engine import Engine

    chunks = Engine(site_config).store.get_chunks(list(ans.trace.source_ids))
    texts = [chunks[i].text for i in ans.trace.source_ids]
    # the gate's words for each source: what the prompt showed before the text (a header it saw), then the text
    for text, gate_words in zip(texts, seen.values()):
        assert gate_words.endswith(text)
        head = gate_words[: -len(text)].strip()
        assert head and all(line in prompt for line in head.split("\n"))
