"""Quality commands: `vouched eval`, `init`, `calibrate`, `check` (a golden set, a threshold, a deployed service)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from vouched.cli.cmd_corpus import _ingest_with_progress
from vouched.cli.common import ConfigOpt, _exit_with, _fail, out
from vouched.errors import ConfigError


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
