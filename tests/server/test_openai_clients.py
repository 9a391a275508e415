"""The OpenAI face through the official `openai` client and `langchain-openai` (issue 19, item 6).

What a generic client must see without knowing vouched: a refusal as `message.refusal`
(`delta.refusal` streaming), a held answer as finish_reason "content_filter", citations as
`url_citation` annotations, `max_tokens` honoured, real usage; and what a LangChain user
sees of the sources. The clients talk to a real uvicorn server over loopback, with a real
API key (`server.auth`): the SDK always sends one, and an unknown key is a 401."""

from __future__ import annotations

import pytest

openai = pytest.importorskip("openai")
langchain_openai = pytest.importorskip("langchain_openai")

from tests.server.conftest import RecordingSpend, running, scripted_assistant, with_settings  # noqa: E402
from vouched.guard.texts import fixed_text  # noqa: E402
from vouched.llm.scripted import ScriptedProvider  # noqa: E402
from vouched.server import create_app  # noqa: E402
from vouched.server.auth import hash_key, new_key  # noqa: E402
from vouched.server.openai import count_tokens  # noqa: E402

KID, KEY = new_key()


def keyed(cfg, **server):
    """`cfg` with one API key granted its corpus tenant (and other [server] fields replaced)."""
    from vouched.config import ApiKeySettings, AuthSettings

    auth = AuthSettings(keys=[ApiKeySettings(id=KID, hash=hash_key(KEY), tenants=[cfg.corpus.tenant])])
    return with_settings(cfg, server={"auth": auth, **server})

OPEN_SOURCE = "Which open-source libraries does she maintain?"
FEES = "What are her day rates?"
DB = "Which database did the Tessera Health search run on?"


@pytest.fixture(scope="module")
def served(site):
    with running(create_app(keyed(site))) as url:
        yield url


@pytest.fixture(scope="module")
def served_inline(site):
    cfg = keyed(site, openai=site.server.openai.model_copy(update={"inline_citations": True}))
    with running(create_app(cfg)) as url:
        yield url


def client(url: str, **kw):
    return openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0, **kw)


def ask(url: str, question: str, **kw):
    return client(url).chat.completions.create(model="vouched", messages=[{"role": "user", "content": question}], **kw)


def streamed(url: str, question: str, **kw):
    chunks = list(ask(url, question, stream=True, stream_options={"include_usage": True}, **kw))
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    refusal = "".join(c.choices[0].delta.refusal or "" for c in chunks if c.choices) or None
    annotations = [a for c in chunks if c.choices for a in (getattr(c.choices[0].delta, "annotations", None) or [])]
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    return chunks, content, refusal, annotations, finish


def _check_annotations(content: str, annotations) -> None:
    assert annotations
    for a in annotations:
        a = a if isinstance(a, dict) else a.model_dump()
        assert a["type"] == "url_citation"
        cite = a["url_citation"]
        span = content[cite["start_index"]:cite["end_index"]]
        assert span and span.strip() == span and span[-1] in ".!?؟。" and cite["title"]  # one whole sentence
        assert isinstance(cite["url"], str)


# -- the official client, non-streaming ---------------------------------------------------

def test_answer_has_annotations_on_its_sentences_and_real_usage(served):
    r = ask(served, OPEN_SOURCE)
    msg = r.choices[0].message
    assert msg.refusal is None and "open-source" in msg.content and r.choices[0].finish_reason == "stop"
    _check_annotations(msg.content, [a.model_dump() for a in msg.annotations])
    assert r.usage.prompt_tokens == count_tokens(OPEN_SOURCE) > 0  # extractive: counted, never zeros
    assert r.usage.completion_tokens == count_tokens(msg.content) > 0
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    assert r.model_extra["vouched"]["outcome"] == "answered"


def test_refusal_is_message_refusal_with_the_fixed_text(served):
    r = ask(served, FEES)
    msg = r.choices[0].message
    assert msg.refusal and msg.refusal == fixed_text("refusal.fees", "en")
    assert msg.content == msg.refusal  # plain chat UIs read content: never an empty bubble
    assert msg.annotations == [] and r.choices[0].finish_reason == "stop"
    assert r.model_extra["vouched"]["layer"] == "L1"


def test_max_tokens_caps_the_released_text_at_a_sentence(served):
    question = "Where did she study?"  # a records answer of several sentences
    whole = ask(served, question)
    content = whole.choices[0].message.content
    spans = sorted((a.url_citation.start_index, a.url_citation.end_index) for a in whole.choices[0].message.annotations)
    assert len({s for s in spans}) >= 2 and spans[0][0] == 0
    first = content[:spans[0][1]]
    for cap in (count_tokens(first), count_tokens(first) + 1):  # room for one sentence, not two
        capped = ask(served, question, max_tokens=cap)
        assert capped.choices[0].finish_reason == "length"
        assert capped.choices[0].message.content == first
        assert capped.model_extra["vouched"]["capped"] is True
        _check_annotations(first, [a.model_dump() for a in capped.choices[0].message.annotations])
        numbers = {s["number"] for s in capped.model_extra["vouched"]["sources"]}
        assert numbers and numbers < {s["number"] for s in whole.model_extra["vouched"]["sources"]}
    newer = ask(served, question, max_completion_tokens=count_tokens(first))
    assert newer.choices[0].message.content == first
    assert ask(served, question, max_tokens=count_tokens(content)).choices[0].finish_reason == "stop"


def test_held_answer_finishes_with_content_filter(site):
    provider = ScriptedProvider(["The search ran on postgres with pgvector [1]. ", "I built it in 1999 [1]. Then more text."])
    cfg = keyed(site)
    app = create_app(cfg, assistant=scripted_assistant(cfg, provider, RecordingSpend()))
    with running(app) as url:
        r = ask(url, DB)
        assert r.choices[0].finish_reason == "content_filter"
        held = r.model_extra["vouched"]["notices"]
        assert r.choices[0].message.content.startswith("The search ran on postgres")
        assert [n["kind"] for n in held] == ["held"] and r.choices[0].message.content.endswith("\n\n" + held[0]["text"])
        _, content, refusal, _, finish = streamed(url, DB)
    assert finish == ["content_filter"] and refusal is None and content == r.choices[0].message.content


# -- the official client, streaming --------------------------------------------------------

def test_streaming_refusal_is_delta_refusal(served):
    chunks, content, refusal, annotations, finish = streamed(served, FEES)
    assert refusal == fixed_text("refusal.fees", "en") == content
    assert finish == ["stop"] and annotations == []
    assert chunks[-1].usage.prompt_tokens == count_tokens(FEES) and chunks[-1].usage.completion_tokens > 0


def test_streaming_answer_matches_and_carries_the_annotations(served):
    whole = ask(served, OPEN_SOURCE)
    chunks, content, refusal, annotations, finish = streamed(served, OPEN_SOURCE)
    assert content == whole.choices[0].message.content and refusal is None and finish == ["stop"]
    _check_annotations(content, annotations)
    assert [a["url_citation"] for a in annotations] == [a.url_citation.model_dump() for a in whole.choices[0].message.annotations]
    assert chunks[-1].usage.total_tokens == whole.usage.total_tokens


# -- inline citations: what a LangChain user sees -------------------------------------------

def test_inline_citations_put_markers_and_a_sources_list_in_content(served_inline):
    r = ask(served_inline, OPEN_SOURCE)
    content = r.choices[0].message.content
    body, _, listing = content.partition("\n\nSources:\n")
    assert "[1]" in body and listing.startswith("[1] ")
    sources = r.model_extra["vouched"]["sources"]
    assert len(listing.splitlines()) == len(sources)
    _check_annotations(content, [a.model_dump() for a in r.choices[0].message.annotations])
    _, streamed_content, *_ = streamed(served_inline, OPEN_SOURCE)
    assert streamed_content == content


def test_langchain_sees_refusal_outcome_and_sources(served, served_inline):
    from langchain_openai import ChatOpenAI

    plain = ChatOpenAI(base_url=f"{served}/v1", api_key=KEY, model="vouched", max_retries=0)
    refused = plain.invoke(FEES)
    assert refused.additional_kwargs["refusal"] == fixed_text("refusal.fees", "en") == refused.content
    assert refused.response_metadata["finish_reason"] == "stop"
    answer = plain.invoke(OPEN_SOURCE)
    assert "open-source" in answer.content and answer.usage_metadata["input_tokens"] > 0
    inline = ChatOpenAI(base_url=f"{served_inline}/v1", api_key=KEY, model="vouched", max_retries=0)
    cited = inline.invoke(OPEN_SOURCE)
    assert "\n\nSources:\n[1] " in cited.content  # the only place LangChain keeps them
    pieces = list(inline.stream(OPEN_SOURCE))
    assert "".join(p.content for p in pieces) == cited.content
    refused_stream = "".join(p.content for p in plain.stream(FEES))
    assert refused_stream == fixed_text("refusal.fees", "en")


# -- rate limits: sized for a person, and Retry-After readable by the SDK ------------------

def test_default_limits_let_a_person_chat_without_waiting(site, tmp_path):
    from vouched.config import Config

    defaults = Config().rate_limit
    cfg = with_settings(keyed(site), rate_limit={**defaults.model_dump(), "enabled": True}, spend={"path": tmp_path / "c.sqlite"})
    with running(create_app(cfg)) as url:
        c = client(url)
        outcomes = [c.chat.completions.create(model="vouched", messages=[{"role": "user", "content": FEES}]).choices[0].finish_reason
                    for _ in range(20)]  # twenty questions in well under a minute
    assert outcomes == ["stop"] * 20


def test_over_the_limit_the_sdk_gets_429_with_retry_after(site, tmp_path):
    cfg = with_settings(keyed(site), rate_limit={"enabled": True, "per_minute": 1, "per_hour": 0, "per_day": 0},
                        spend={"path": tmp_path / "c.sqlite"})
    with running(create_app(cfg)) as url:
        ask(url, FEES)
        with pytest.raises(openai.RateLimitError) as info:
            ask(url, FEES)
    wait = int(info.value.response.headers["retry-after"])
    assert 1 <= wait <= 60  # the SDK sleeps this long (it honours Retry-After up to 60 s) before a retry
    assert info.value.status_code == 429 and "rate_limited" in info.value.response.text


def test_the_sdk_waits_the_retry_after_it_is_sent_then_gets_the_answer(site, tmp_path):
    """A limiter that refuses the first request with Retry-After: 1; the SDK (max_retries=1) waits, retries, succeeds."""
    import time

    from vouched.spend.ratelimit import ALLOW, RateDecision

    class OnceLimited:
        calls: list[float] = []

        def check(self, key):
            self.calls.append(time.monotonic())
            return RateDecision(False, 1.0, "minute") if len(self.calls) == 1 else ALLOW

    limiter = OnceLimited()
    cfg = with_settings(keyed(site), rate_limit={"enabled": True}, spend={"path": tmp_path / "c.sqlite"})
    with running(create_app(cfg, limiter=limiter)) as url:
        r = client(url).with_options(max_retries=1).chat.completions.create(
            model="vouched", messages=[{"role": "user", "content": FEES}])
    assert r.choices[0].message.refusal
    assert len(limiter.calls) == 2 and limiter.calls[1] - limiter.calls[0] >= 0.95  # Retry-After honoured


def test_an_unknown_key_is_refused_as_the_sdk_expects(served):
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{served}/v1", api_key="vk_nope_nope", max_retries=0).chat.completions.create(
            model="vouched", messages=[{"role": "user", "content": FEES}])
