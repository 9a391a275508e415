"""Traces written by the real pipeline (portfolio example, hashing embedder) and the CLI functions."""

import io
import json
import socket
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from rich.console import Console

from tests.answer.conftest import make_assistant, site_config  # noqa: F401  (module-scoped fixture)
from vouched.errors import ConfigError, InputError, TraceNotFound, TraceStoreError, exit_code
from vouched.llm.base import Usage
from vouched.llm.scripted import ScriptedProvider
from vouched.config import load_config
from vouched.trace import PostgresTraceStore, TraceStore, open_trace_store, trace_sink_for, trace_text
from vouched.trace.cli import feedback_command, parse_since, trace_command, traces_command

Q = "Which database did the Tessera Health search run on?"


def _console():
    return Console(file=io.StringIO(), width=160, color_system=None)


def _pg_config(base, dsn: str):
    """The example's config with traces in PostgreSQL (a fresh schema), the corpus still in SQLite."""
    text = (base.base_dir / "vouched.toml").read_text(encoding="utf-8")
    schema = "tp_" + uuid.uuid4().hex[:12]
    text = text.replace("[store]\n", f'[store]\ndsn = "{dsn}"\npg_schema = "{schema}"\n', 1)
    assert "[trace]" not in text
    path = base.base_dir / f"vouched-{schema}.toml"
    path.write_text(text + '\n[trace]\nbackend = "postgres"\n', encoding="utf-8")
    return load_config(path), path


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def traced(request, site_config):  # noqa: F811
    """Three questions through the pipeline, traced: held (unsupported number), L2 refusal, L1 refusal.
    Once with the SQLite trace file, once with traces in PostgreSQL (trace.backend = "postgres")."""
    site, config_path = site_config, site_config.base_dir / "vouched.toml"
    if request.param == "postgres":
        site, config_path = _pg_config(site_config, request.getfixturevalue("postgres_dsn"))
        assert isinstance(trace_sink_for(site).__self__, PostgresTraceStore)
    store = open_trace_store(site)
    assert isinstance(store, PostgresTraceStore if request.param == "postgres" else TraceStore)
    cfg = site.model_copy(update={"answer": site.answer.model_copy(update={"provider": "openai"})})
    provider = ScriptedProvider(["The search ran on postgres [1]. ", "It cut costs by 73% [1]. ", "More text [1]. "],
                                usage=Usage(input_tokens=100, output_tokens=20))
    held, _ = make_assistant(cfg, provider=provider, trace_sink=store.sink)
    ans = held.ask(Q)
    assert ans.outcome == "held"
    plain, _ = make_assistant(site, trace_sink=store.sink)
    off = plain.ask("What's the weather in Paris today?")
    fee = plain.ask("What are her rates?")
    assert (off.layer, fee.layer) == ("L2", "L1")
    yield {"store": store, "held": ans.trace_id, "l2": off.trace_id, "l1": fee.trace_id,
           "config": config_path, "backend": request.param}
    store.close()


def test_every_question_leaves_a_record(traced):
    s = traced["store"]
    assert s.errors == 0
    l1 = s.get(traced["l1"])
    assert (l1["route"], l1["layer"], l1["category"], l1["outcome"]) == ("refusal", "L1", "fees", "refused")
    assert l1["retrieved"] == [] and "l1" in l1["stages_ms"] and l1["normalized"]
    l2 = s.get(traced["l2"])
    assert l2["layer"] == "L2" and l2["evidence"] < l2["threshold"] == 0.30 and l2["evidence_run"] == "question"
    assert l2["retrieved"] and {"dense", "keyword", "evidence"} <= set(l2["retrieved"][0])
    held = s.get(traced["held"])
    # (the gate stops the stream at "73", a number in no source, before the provider's usage
    # event: the call is counted from the bytes sent and received)
    assert held["source_ids"] and held["usage"]["input_tokens"] >= 100
    assert set(held["stages_ms"]) >= {"l1", "retrieve", "generate", "total"}


def test_a_held_answer_names_the_rule_and_the_offending_value(traced):
    t = traced["store"].get(traced["held"])
    text = trace_text(t, width=160)
    assert "HELD (L4 · unsupported_value)" in text
    assert "RULE" in text and "unsupported_value — a number, URL or e-mail is in no source the sentence cites" in text
    assert "OFFENDING VALUE" in text and "'73'" in text
    assert "It cut costs by 73%" in text  # held as soon as "73" was complete
    assert "retrieved (fusion order)" in text and "latency" in text and "retrieve" in text
    # the printed command says the same
    con = _console()
    assert trace_command(traced["config"], traced["held"][:10], False, out=con) == 0
    printed = con.file.getvalue()
    assert "RULE" in printed and "unsupported_value" in printed and "'73'" in printed


def test_an_l2_refusal_shows_evidence_against_threshold(traced):
    text = trace_text(traced["store"].get(traced["l2"]), width=160)
    assert "REFUSED (L2 · no_evidence)" in text
    assert "< threshold 0.3000 → refused by L2" in text


def test_trace_command_json_and_errors(traced, tmp_path):
    con = _console()
    assert trace_command(traced["config"], traced["l1"], True, out=con) == 0
    assert json.loads(con.file.getvalue())["category"] == "fees"
    with pytest.raises(TraceNotFound, match="no trace") as e:
        trace_command(traced["config"], "ffffffff", False, out=_console())
    assert exit_code(e.value) == 1
    # no trace file yet: says so, creates nothing
    cfg = tmp_path / "vouched.toml"
    cfg.write_text('[store]\npath = "st/x.sqlite"\n', encoding="utf-8")
    with pytest.raises(TraceNotFound, match="no traces recorded yet") as e:
        trace_command(cfg, "abcd", False, out=_console())
    assert exit_code(e.value) == 1 and not (tmp_path / "st").exists()
    with pytest.raises(ConfigError) as e:
        trace_command(tmp_path / "missing.toml", "abcd", False, out=_console())
    assert exit_code(e.value) == 2


def test_trace_commands_on_an_empty_or_unreachable_postgres(tmp_path, postgres_dsn, monkeypatch):
    """No traces table yet: says so and creates nothing; a server nobody answers: exit 1, not a traceback."""
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    schema = "tp_" + uuid.uuid4().hex[:12]
    cfg = tmp_path / "vouched.toml"
    cfg.write_text(f'[store]\ndsn = "{postgres_dsn}"\npg_schema = "{schema}"\n[trace]\nbackend = "postgres"\n',
                   encoding="utf-8")
    with pytest.raises(TraceNotFound, match="no traces recorded yet.*has no traces table") as e:
        traces_command(cfg, "1h", 10, True, out=_console())
    assert exit_code(e.value) == 1
    assert not PostgresTraceStore(postgres_dsn, schema=schema).exists()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg.write_text(f'[store]\ndsn = "postgresql://postgres@127.0.0.1:{port}/postgres"\n[trace]\nbackend = "postgres"\n',
                   encoding="utf-8")
    with pytest.raises(TraceStoreError, match="127.0.0.1") as e:
        feedback_command(cfg, "abcd", True, "", out=_console())
    assert exit_code(e.value) == 1
    cfg.write_text('[trace]\nbackend = "postgres"\n', encoding="utf-8")  # no dsn anywhere: a config error
    with pytest.raises(ConfigError, match="store.dsn") as e:
        trace_command(cfg, "abcd", False, out=_console())
    assert exit_code(e.value) == 2


def test_traces_command_lists_and_filters(traced):
    con = _console()
    assert traces_command(traced["config"], "1h", 10, True, out=con) == 0
    rows = json.loads(con.file.getvalue())
    assert {traced["held"], traced["l1"], traced["l2"]} <= {r["id"] for r in rows}
    con = _console()
    assert traces_command(traced["config"], None, 10, True, outcome="held", out=con) == 0
    assert [r["id"] for r in json.loads(con.file.getvalue())] == [traced["held"]]
    con = _console()
    assert traces_command(traced["config"], "1d", 10, False, out=con) == 0
    assert "held" in con.file.getvalue() and traced["held"][:12] in con.file.getvalue()
    future = (datetime.now(timezone.utc) + timedelta(days=1)).date().isoformat()
    con = _console()
    assert traces_command(traced["config"], future, 10, True, out=con) == 0
    assert json.loads(con.file.getvalue()) == []
    with pytest.raises(InputError, match="yesterday") as e:
        traces_command(traced["config"], "yesterday", 10, False, out=_console())
    assert exit_code(e.value) == 2


def test_feedback_command(traced):
    con = _console()
    assert feedback_command(traced["config"], traced["held"][:12], False, "the 73% is made up", out=con) == 0
    assert "not useful" in con.file.getvalue()
    fb = traced["store"].get(traced["held"])["feedback"]
    assert fb[-1]["useful"] is False and fb[-1]["comment"] == "the 73% is made up"
    with pytest.raises(TraceNotFound):
        feedback_command(traced["config"], "ffffffff", True, "", out=_console())
    assert "feedback" in trace_text(traced["store"].get(traced["held"]))


def test_parse_since():
    now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
    assert parse_since("2h", now) == now - timedelta(hours=2)
    assert parse_since("30m", now) == now - timedelta(minutes=30)
    assert parse_since("1d", now) == now - timedelta(days=1)
    assert parse_since("2W", now) == now - timedelta(weeks=2)
    assert parse_since("2026-11-29", now) == datetime(2026, 11, 29, tzinfo=timezone.utc)
    assert parse_since("2026-11-29T08:30", now) == datetime(2026, 11, 29, 8, 30, tzinfo=timezone.utc)
    assert parse_since("2026-11-29T08:30:00Z", now) == datetime(2026, 11, 29, 8, 30, tzinfo=timezone.utc)
    for bad in ("", "2 hours", "h2", "soon"):
        with pytest.raises(ValueError, match="duration"):
            parse_since(bad, now)


def test_trace_text_shows_anchors_found_and_missing():
    t = {"id": "x", "question": "Which OCR does the Mayo Clinic use?", "route": "retrieval", "layer": "L2",
         "category": "uncovered", "outcome": "refused", "evidence": 0.85, "threshold": 0.8, "evidence_run": "question",
         "anchors": ["code:OCR", "name:Mayo Clinic"], "anchors_found": ["code:OCR"], "anchors_missing": ["name:Mayo Clinic"]}
    text = trace_text(t, width=160)
    assert "anchors (2): found code:OCR; missing name:Mayo Clinic" in text
