"""What every command shares: the two consoles, the --config option, and the error-to-exit-code wrappers."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from vouched.errors import VouchedError, exit_code

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


def _parse_date(s: Optional[str]) -> Optional[date]:
    if not s:
        return None
    try:
        return date.fromisoformat(s)
    except ValueError:
        err.print(f"[bold red]error:[/] --as-of {s!r} is not a date (use YYYY-MM-DD)")
        raise typer.Exit(2)
