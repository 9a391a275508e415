"""vouched.guard.verify_llm: the closed schema, what the verifier sees, and the call (scripted, loopback only)."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.llm.wire import Reply, WireServer, openai_events
from vouched.config import GuardVerifySettings
from vouched.guard.verify_llm import VERDICTS, LLMVerifier, make_verifier, parse_verdict, verifier_messages
from vouched.llm.errors import ProviderUnavailable
from vouched.llm.openai_compat import OpenAICompatProvider
from vouched.llm.scripted import ScriptedProvider, ScriptedResponse

# --- the closed schema -------------------------------------------------------------------------


@pytest.mark.parametrize("reply,want", [
    ('{"verdict": "supported"}', "supported"),
    ('{"verdict":"CONTRADICTED"}', "contradicted"),
    ('  {"verdict": " insufficient "}\n', "insufficient"),
    ('```json\n{"verdict": "supported"}\n```', "supported"),
    ("supported", "supported"),
    ("Contradicted.", "contradicted"),
    ('"insufficient"', "insufficient"),
    ("**supported**", "supported"),
])
def test_parse_accepts_the_schema(reply, want):
    assert parse_verdict(reply) == want


@pytest.mark.parametrize("reply", [
    "", "   ", "yes", "true", "supportive", "not supported", "supported, mostly", "supported or contradicted",
    "The claim is supported.", '{"verdict": "maybe"}', '{"verdict": "supported", "why": "x"}',
    '{"label": "supported"}', '{"verdict": ["supported"]}', '{"verdict": "supported"', "[\"supported\"]",
    '{"verdict": null}', "unsupported", "NO_ANSWER",
])
def test_parse_refuses_everything_else(reply):
    assert parse_verdict(reply) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_parse_is_closed(reply):
    # whatever the model says, the result is one of the three verdicts or None — never another string
    assert parse_verdict(reply) in (*VERDICTS, None)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(VERDICTS), st.text(alphabet=st.characters(categories=("L",)), min_size=1, max_size=20))
def test_a_label_inside_prose_is_not_a_verdict(label, word):
    # "the claim is supported" must not be read as a verdict: only the bare label or the JSON object is
    assert parse_verdict(f"{word} {label}") is None
    assert parse_verdict(f"{label} {word}") is None


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(VERDICTS), st.sampled_from(["", " ", "\n", "  \n"]), st.booleans())
def test_json_roundtrip(label, pad, upper):
    text = json.dumps({"verdict": label.upper() if upper else label})
    assert parse_verdict(pad + text + pad) == label


# --- what the verifier sees ---------------------------------------------------------------------


def test_messages_hold_only_claim_and_passages():
    msgs = verifier_messages("Ada shipped it in 2021.", ["Ada shipped the parser in 2021.", "  ", "It runs on SQLite."])
    assert [m.role for m in msgs] == ["system", "user"]
    user = msgs[1].content
    assert "[1] Ada shipped the parser in 2021." in user and "[2] It runs on SQLite." in user
    assert "[3]" not in user  # the blank passage is left out, numbering stays dense
    assert user.rstrip().endswith("Verdict (JSON):") and "Claim: Ada shipped it in 2021." in user
    assert all(v in msgs[0].content for v in VERDICTS)


def test_messages_without_passages_still_ask():
    assert "(no passage)" in verifier_messages("x", [])[1].content


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(str.strip), st.lists(st.text(max_size=40), max_size=4))
def test_messages_are_deterministic_and_contain_the_claim(claim, passages):
    a, b = verifier_messages(claim, passages), verifier_messages(claim, passages)
    assert a == b and claim.strip() in a[1].content
    for p in passages:
        if p.strip():
            assert p.strip() in a[1].content


# --- the call, over the scripted provider --------------------------------------------------------


def test_verdicts_through_the_scripted_provider():
    provider = ScriptedProvider().queue(['{"verdict": "supported"}', ['{"verd', 'ict": "contradicted"}'], "insufficient"])
    v = LLMVerifier(provider)
    got = [v.verify("c", ["p"]).verdict for _ in range(3)]
    assert got == ["supported", "contradicted", "insufficient"]
    asked = provider.requests[-1]
    assert asked.temperature == 0.0 and asked.max_tokens == 16
    assert asked.messages == tuple(verifier_messages("c", ["p"]))
    assert v.stats.calls == 3 and v.stats.unparsable == 0


def test_unparsable_and_cut_replies_fail_closed():
    provider = ScriptedProvider().queue(["I think it is supported.", ScriptedResponse(['{"verdict": "supp'], finish_reason="length")])
    v = LLMVerifier(provider)
    a, b = v.verify("c", ["p"]), v.verify("c", ["p"])
    assert a.verdict == b.verdict == "insufficient"
    assert "closed schema" in a.reason and "length limit" in b.reason
    assert v.stats.unparsable == 2


def test_provider_failure_is_insufficient_or_raises():
    failing = ScriptedResponse(["x"], fail_after=0)
    v = LLMVerifier(ScriptedProvider().queue([failing]))
    out = v.verify("c", ["p"])
    assert out.verdict == "insufficient" and out.cues == ("llm:error",) and v.stats.errors == 1
    strict = LLMVerifier(ScriptedProvider().queue([failing]), on_error="raise")
    with pytest.raises(ProviderUnavailable):
        strict.verify("c", ["p"])


def test_empty_claim_makes_no_call():
    provider = ScriptedProvider('{"verdict": "supported"}')
    assert LLMVerifier(provider).verify("   ", ["p"]).verdict == "insufficient"
    assert provider.calls == 0


def test_verify_works_inside_a_running_loop():
    v = LLMVerifier(ScriptedProvider('{"verdict": "contradicted"}'))

    async def inside():
        return v.verify("c", ["p"]).verdict  # the pipeline's gate code is synchronous inside the server's loop

    assert asyncio.run(inside()) == "contradicted"


def test_over_real_http_on_loopback():
    replies = [Reply(parts=openai_events(['{"verdict": ', '"supported"}'])), Reply(status=500, parts=[b"boom"])]
    with WireServer(replies) as server:
        provider = OpenAICompatProvider(server.url + "/v1", "judge", timeout=5)
        v = LLMVerifier(provider)
        assert v.verify("Ada shipped it.", ["Ada shipped it in 2021."]).verdict == "supported"
        assert v.verify("Ada shipped it.", ["Ada shipped it in 2021."]).verdict == "insufficient"
        body = server.seen[0].body
        assert body["model"] == "judge" and body["temperature"] == 0.0 and body["max_tokens"] == 16
        assert [m["role"] for m in body["messages"]] == ["system", "user"]


# --- configuration -------------------------------------------------------------------------------


def test_settings_default_is_words_and_llm_needs_an_endpoint():
    assert GuardVerifySettings().backend == "words"
    with pytest.raises(ValidationError):
        GuardVerifySettings(backend="llm")
    with pytest.raises(ValidationError):
        GuardVerifySettings(backend="llm", base_url="http://127.0.0.1:1/v1")
    s = GuardVerifySettings(backend="llm", base_url="http://127.0.0.1:1/v1", model="judge")
    assert s.timeout == 60.0 and s.api_key_env == "VOUCHED_VERIFY_API_KEY"


def test_make_verifier_picks_the_backend():
    words = make_verifier(GuardVerifySettings())
    assert words("Ada shipped the parser in 2021.", ["Ada shipped the parser in 2021."], "en").verdict in VERDICTS
    llm = make_verifier(GuardVerifySettings(backend="llm", base_url="http://127.0.0.1:1/v1", model="judge"),
                        provider=ScriptedProvider('{"verdict": "contradicted"}'))
    assert llm("c", ["p"], "en").verdict == "contradicted"


def test_make_verifier_builds_an_openai_provider_without_connecting():
    check = make_verifier(GuardVerifySettings(backend="llm", base_url="http://127.0.0.1:9/v1", model="judge", timeout=2))
    provider = check.verifier.provider
    assert isinstance(provider, OpenAICompatProvider) and provider.model == "judge" and provider.timeout == 2
    # nothing listens on port 9: the call fails and the sentence counts as insufficient
    assert check("c", ["p"]).verdict == "insufficient"
