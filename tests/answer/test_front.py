"""The front of the path (answer/front.py), the post-gate verdict (guard/final.py) and the
wiring point (answer/build.py), each on its own."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vouched.answer import Assistant
from vouched.answer.build import Lazy, build
from vouched.answer.front import Previous, Rules, build_question, route, skip_reason
from vouched.config import GuardVerifySettings, PiiSettings
from vouched.errors import InputError
from vouched.guard.final import final_verdict
from vouched.guard.gate import GateVerdict
from vouched.guard.prompt import PromptSource

# My own wording, one or more per served language and per route; what each is routed to is
# not asserted here but compared with what the pipeline did (the front must be the path).
QUESTIONS = [
    "Which database did the Tessera Health search run on?",
    "hello!",
    "thanks a lot",
    "What does an hour of her time cost?",
    "What is her home address and phone number?",
    "¿Qué bases de datos usó en el proyecto de Tessera?",
    "پروژه‌های او در چه زمینه‌ای بوده‌اند؟",
    "Welche Programmiersprachen benutzt sie am liebsten bei der Arbeit?",
    "她在哪里读的博士？",
    "Quels projets a-t-elle réalisés récemment ?",
    "and the other one?",
    "pricing",
    "Which search engine did she build, and how much does she charge for a week?",
    "What is the weather like in Lisbon this weekend?",
    "List her projects",
]


@pytest.fixture(scope="module")
def parts(site_config):
    return build(site_config)


@pytest.fixture(scope="module")
def rules(site_config, parts):
    return Rules.from_config(site_config, parts.packs)


@pytest.mark.parametrize("text", QUESTIONS)
def test_route_is_what_the_pipeline_does(site_config, parts, rules, text):
    r = route(build_question(text, rules), rules)
    ans = Assistant(site_config, parts=parts).ask(text)
    taken = ans.trace.route
    if r.kind == "retrieval":
        assert taken in ("retrieval", "records_summary", "cache"), (text, taken)
    else:
        assert taken == r.kind, (text, r, taken)
    if r.kind == "refusal":
        assert ans.layer == "L1" and ans.category == r.category


def test_the_question_is_built_once_and_frozen(rules):
    q = build_question("  Which database did the Tessera Health search run on?  ", rules)
    assert q.text == "Which database did the Tessera Health search run on?" and q.raw.startswith("  ")
    assert q.lang == "en" and not q.lang_given and q.normalized == q.normalized.lower()
    assert q.runs == (("question", q.text),) and q.followup is None and q.parts == (q.text,)
    assert "database" in q.content_words
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.text = "other"  # type: ignore[misc]
    fu = build_question("and which index did it use?", rules, Previous("Which database did Tessera use?", "PostgreSQL."))
    assert fu.followup is not None and dict(fu.runs).keys() >= {"question", "joined"}
    assert build_question("hola", rules, lang="es").lang_given


@pytest.mark.parametrize("bad", ["", "   \n", "x" * 100_000])
def test_input_that_cannot_be_used_is_an_input_error(rules, bad):
    with pytest.raises(InputError):
        build_question(bad, rules)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=120))
def test_route_is_pure_and_total(rules, text):
    try:
        q = build_question(text, rules)
    except InputError:
        return
    a, b = route(q, rules), route(q, rules)
    assert a == b
    assert (skip_reason(a) is None) == (a.kind in ("partial", "retrieval"))
    if a.kind == "partial":
        assert a.parts or a.refused_parts
        assert set(a.parts) | {p for p, _ in a.refused_parts} <= set(q.parts)


def _src(n: int, text: str, flags=(), kind="passage", doc="page") -> PromptSource:
    return PromptSource(number=n, id=f"{doc}#{n}", doc_id=doc, title="T", section="", date=None, url=None, text=text,
                        kind=kind, flags=tuple(flags))


def _ok(sentence: str, cited=(1,)) -> GateVerdict:
    return GateVerdict(sentence=sentence, released=sentence, cited=tuple(cited), ok=True, rule=None, value=None)


def test_final_verdict_holds_flagged_only_evidence_and_private_values():
    pii, verify = PiiSettings(private_values=["+41 79 555 01 23"]), GuardVerifySettings()
    v = _ok("The keeper lit the lamp.")
    assert final_verdict(v, [_src(1, "The keeper lit the lamp.")], lang="en", pii=pii, verify=verify) == v
    flagged = [_src(1, "The keeper lit the lamp.", flags=("injection:override",))]
    held = final_verdict(v, flagged, lang="en", pii=pii, verify=verify)
    assert not held.ok and held.rule == "injection" and held.released == ""
    mixed = flagged + [_src(2, "The keeper lit the lamp at dusk.")]
    assert final_verdict(_ok("The keeper lit the lamp.", (1, 2)), mixed, lang="en", pii=pii, verify=verify).ok
    phone = _ok("Call her on +41 79 555 01 23.")
    out = final_verdict(phone, [_src(1, "Call her on +41 79 555 01 23.")], lang="en", pii=pii, verify=verify)
    assert not out.ok and out.rule == "pii"
    # a verdict the gate did not pass, or one citing nothing, is the gate's own
    no = GateVerdict("x [9]", "", (9,), False, "bad_marker", "[9]")
    assert final_verdict(no, [], lang="en", pii=pii, verify=verify) is no
    uncited = _ok("Plain words.", ())
    assert final_verdict(uncited, [], lang="en", pii=pii, verify=verify) is uncited


def test_build_is_lazy_and_an_l1_refusal_builds_nothing(site_config):
    parts = build(site_config)
    assert not any(p.built for p in (parts.store, parts.embedder, parts.retriever, parts.limiter))
    assert parts.provider is None  # extractive
    a = Assistant(site_config, parts=parts)
    ans = a.ask("What would a day of her consulting cost me?")
    assert ans.outcome == "refused" and ans.layer == "L1" and ans.category == "fees"
    assert not any(p.built for p in (parts.store, parts.embedder, parts.retriever))
    assert a.ask("Which database did the Tessera Health search run on?").outcome == "answered"
    assert parts.retriever.built and parts.embedder.built  # built on first use, once
    given = object()
    assert build(site_config, store=given).store.get() is given
    lazy = Lazy(lambda: given)
    assert not lazy.built and lazy.get() is given and lazy.built
