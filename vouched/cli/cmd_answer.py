"""Answer commands: `vouched ask`, `serve`, `config`, and what is kept after an answer: `trace`, `traces`, `feedback`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from vouched.cli.common import ConfigOpt, _config_path, _exit_with, _fail, _parse_date, err, out
from vouched.errors import StoreError, VouchedError


def ask(
    question: str = typer.Argument(..., help="The question, in any configured language."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the final Answer as one JSON object."),
    previous_question: Optional[str] = typer.Option(None, "--previous-question", help="The previous turn's question (for follow-ups)."),
    previous_answer: Optional[str] = typer.Option(None, "--previous-answer", help="The previous turn's answer (for 'the second one')."),
    provider: Optional[str] = typer.Option(None, help="extractive | openai | anthropic (default: answer.provider)."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Reader's language (default: detected from the question)."),
    tenant: Optional[str] = typer.Option(None, help="Tenant (default: corpus.tenant)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Validity date YYYY-MM-DD (default: today)."),
) -> None:
    """Ask a question: a guarded, cited answer streamed sentence by sentence — or a fixed refusal.

    Refusal patterns (L1) and the evidence threshold (L2) run before any model call; every
    sentence is checked against the sources it cites before it is shown (L4/L5). With the
    default extractive generator no model or API key is needed.
    """
    from vouched.answer import Answer, Assistant, DoneEvent, NoticeEvent, RefusalEvent, SentenceEvent
    from vouched.config import load_config

    try:
        path, when = _config_path(config), _parse_date(as_of)  # bad input is told before anything loads
        cfg = load_config(path)
        if cfg.missing_store():  # nothing to answer from: say so, and create no .vouched/ in a random folder
            raise StoreError(f"no corpus here: {cfg.store_label} does not exist. Run `vouched ingest` next to your "
                             "vouched.toml first, or pass --config")
        if provider:
            cfg = cfg.model_copy(update={"answer": cfg.answer.model_copy(update={"provider": provider})})
        from vouched.answer.build import build

        assistant = Assistant(cfg, parts=build(cfg, traces=True))  # the one wiring point; traces where the config says
        prev = (previous_question, previous_answer or "") if previous_question else None
        events = []
        for e in assistant.stream(question, prev, lang=lang, tenant=tenant, as_of=when):
            events.append(e)
            if as_json:
                continue
            if isinstance(e, SentenceEvent):
                block = "\n" in e.text or e.text.startswith("- ")  # a code block, table or list item: its own lines
                out.print(("\n" if block else "") + e.text, end="\n" if block else " ", highlight=False, soft_wrap=True,
                          markup=False)
            elif isinstance(e, RefusalEvent):
                out.print(f"[bold yellow]{e.text}[/]  [dim]({e.layer or 'model'} · {e.category})[/]", highlight=False)
            elif isinstance(e, NoticeEvent):
                out.print(f"\n[bold magenta]{e.text}[/]  [dim]({e.kind}{' · ' + e.rule if e.rule else ''})[/]", highlight=False)
            elif isinstance(e, DoneEvent):
                if e.sources:
                    from vouched.text.dates import display_date

                    out.print("\n\n[bold]Sources[/]")
                    for s in e.sources:
                        meta = " · ".join(x for x in (s.section, display_date(s.date, e.lang), s.url) if x)
                        out.print(f"  [{s.number}] {s.title}" + (f"  [dim]{meta}[/]" if meta else ""), highlight=False)
                out.print(f"\n[dim]{e.outcome} · trace {e.trace_id[:12]}[/]")
        done = next((e for e in reversed(events) if isinstance(e, DoneEvent)), None)
        if done is not None and done.trace is not None and done.trace.route == "retrieval":
            from vouched.eval.calibrate import calibration_warnings

            for w in calibration_warnings(cfg, assistant.engine):  # only once retrieval ran: a refusal loads nothing
                err.print(f"[yellow]warning:[/] {w}")
        if as_json:
            print(json.dumps(Answer.from_events(events).to_dict(), ensure_ascii=False, indent=2))
    except VouchedError as exc:
        _fail(exc)


def serve(
    config: Optional[Path] = ConfigOpt,
    host: Optional[str] = typer.Option(None, help="Address to bind (default: server.host, 127.0.0.1)."),
    port: Optional[int] = typer.Option(None, help="Port (default: server.port, 8000)."),
) -> None:
    """Serve the streaming API and the chat page (http://127.0.0.1:8000/ by default).

    POST /v1/ask streams Server-Sent Events (sentence, notice, refusal, done);
    POST /v1/chat/completions is an OpenAI-compatible face; GET /metrics, /healthz, /docs.
    """
    from vouched.server.cli import serve as run_server

    try:
        run_server(_config_path(config), host, port)
    except VouchedError as exc:
        _fail(exc)


def show_config(config: Optional[Path] = ConfigOpt, schema: bool = typer.Option(False, "--schema", help="Print the JSON schema of vouched.toml.")) -> None:
    """Print the effective configuration (after defaults), or its schema."""
    from vouched.config import Config, load_config

    if schema:
        print(json.dumps(Config.model_json_schema(), indent=2))
        return
    try:
        cfg = load_config(_config_path(config))
    except VouchedError as exc:
        _fail(exc)
        return
    print(json.dumps(cfg.model_dump(mode="json"), indent=2, ensure_ascii=False))


def trace_(
    trace_id: str = typer.Argument(..., help="A trace id or a unique prefix of at least 4 characters."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Print what happened to one question: route, scores, sources, each sentence and the rule that held it."""
    from vouched.trace.cli import trace_command

    _exit_with(trace_command, _config_path(config), trace_id, as_json)


def traces(
    since: Optional[str] = typer.Option(None, "--since", help="30m, 2h, 1d, 2w or an ISO date (UTC)."),
    limit: int = typer.Option(50, "--limit", "-n"),
    outcome: Optional[str] = typer.Option(None, help="answered | records | refused | held | truncated | limited."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """List recent traces, newest first."""
    from vouched.trace.cli import traces_command

    _exit_with(traces_command, _config_path(config), since, limit, as_json, outcome)


def feedback(
    trace_id: str = typer.Argument(..., help="The trace the feedback is about."),
    useful: bool = typer.Option(..., "--useful/--not-useful"),
    comment: str = typer.Option("", "--comment", "-m"),
    config: Optional[Path] = ConfigOpt,
) -> None:
    """Attach a reader's feedback (useful / not useful, with a comment) to a trace."""
    from vouched.trace.cli import feedback_command

    _exit_with(feedback_command, _config_path(config), trace_id, useful, comment)
