"""The `vouched` command line. Every command is a thin wrapper over the library.

This file is the entry point: the Typer apps, the one table registering every command (in the
order `--help` lists them) and main(). The commands live beside it by family: cmd_corpus
(ingest, search, versions, rollback), cmd_answer (ask, serve, config, trace, traces, feedback),
cmd_quality (eval, init, calibrate, check), cmd_bench (bench …, packs check); common holds
the consoles, --config and the error wrappers.

Errors from the vouched error tree are printed as one clear line and mapped to exit codes
by the one table (vouched.errors.EXIT_CODES, drawn with the tree); anything else is a bug and
keeps its traceback. The `*_command` functions return 0 or 1 (the answer is "no") and raise
for everything else.
"""

from __future__ import annotations

import sys

import typer

from vouched.cli.cmd_answer import ask, feedback, serve, show_config, trace_, traces
from vouched.cli.cmd_bench import (
    bench_abstention, bench_fabricated, bench_load, bench_retrieval, bench_run, bench_scale, bench_verify, packs_check,
)
from vouched.cli.cmd_corpus import _ingest_with_progress, ingest, rollback, search, versions  # noqa: F401  (re-exported)
from vouched.cli.cmd_quality import calibrate, check, eval_golden, init
from vouched.cli.common import ConfigOpt, _config_path, _engine, _exit_with, _fail, _parse_date, err, out  # noqa: F401  (re-exported)
from vouched.errors import EXIT_CODES, ConfigError, StoreError, VouchedError, exit_code  # noqa: F401  (EXIT_CODES: the one table, re-exported)
from vouched.server.keys_cli import keys_app  # `vouched keys create/list/revoke`

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
app.add_typer(keys_app, name="keys")

# every command, in the order `vouched --help` lists it
for _name, _fn in (
    ("ingest", ingest), ("search", search), ("ask", ask), ("serve", serve), ("eval", eval_golden), ("init", init),
    ("calibrate", calibrate), ("check", check), ("trace", trace_), ("traces", traces), ("feedback", feedback),
    ("versions", versions), ("rollback", rollback), ("config", show_config),
):
    app.command(_name)(_fn)
for _name, _fn in (
    ("run", bench_run), ("retrieval", bench_retrieval), ("verify", bench_verify), ("abstention", bench_abstention),
    ("fabricated", bench_fabricated), ("load", bench_load), ("scale", bench_scale),
):
    bench_app.command(_name)(_fn)
del _name, _fn

packs_app = typer.Typer(help="L1 pattern packs: check patterns against the example texts kept beside them.", no_args_is_help=True)
app.add_typer(packs_app, name="packs")
packs_app.command("check")(packs_check)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
