"""`vouched keys create | list | revoke`: API keys in the keys file (server.auth.keys_file, or
$VOUCHED_KEYS_FILE). The key is printed once, at creation; only its SHA-256 is written.
A running `vouched serve` reads the file at start: restart it (replicas one at a time)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import List, Optional

import typer

from vouched.errors import ConfigError

keys_app = typer.Typer(help="API keys: which callers may read which tenants (hashes in the keys file).", no_args_is_help=True)

ConfigOpt = typer.Option(None, "--config", "-c", help="vouched.toml to use (default: $VOUCHED_CONFIG or ./vouched.toml).")


def _load(config: Optional[Path]):
    import os

    from vouched.config import load_config

    # the CLI's own rule (vouched.cli._config_path), kept here so the server room never imports the CLI above it
    if config is None:
        env = os.environ.get("VOUCHED_CONFIG")
        config = Path(env) if env else (Path("vouched.toml") if Path("vouched.toml").exists() else None)
    return load_config(config)


def _fail(exc: Exception) -> None:
    from rich.console import Console
    from rich.markup import escape

    from vouched.errors import exit_code

    Console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
    raise typer.Exit(exit_code(exc))


@keys_app.command("create")
def create(
    tenant: List[str] = typer.Option([], "--tenant", "-t", help="A tenant the key may read (repeat; the first is its default)."),
    name: str = typer.Option("", help="Who holds the key (shown by `keys list`)."),
    admin: bool = typer.Option(False, "--admin", help="May read /metrics and /docs."),
    per_minute: Optional[int] = typer.Option(None, help="The key's own per-minute limit (besides the per-address ones)."),
    per_hour: Optional[int] = typer.Option(None),
    per_day: Optional[int] = typer.Option(None),
    monthly_cap_usd: Optional[float] = typer.Option(None, help="The key's own monthly budget in USD."),
    config: Optional[Path] = ConfigOpt,
) -> None:
    """Create a key; print it once (store it in the caller's secret store, e.g. OPENAI_API_KEY)."""
    from vouched.server.auth import ApiKey, hash_key, keys_file_path, new_key, now_text, read_keys_file, write_keys_file
    from vouched.server.schemas import TENANT_PATTERN
    import re

    try:
        cfg = _load(config)
        bad = [t for t in tenant if not re.match(TENANT_PATTERN, t)]
        if bad or (not tenant and not admin):
            raise ConfigError("give at least one --tenant (letters, digits, '_', '.', '-'), or --admin for an operator key")
        path = keys_file_path(cfg)
        keys = read_keys_file(path)
        kid, key = new_key()
        keys.append(ApiKey(id=kid, hash=hash_key(key), tenants=tuple(tenant), name=name, admin=admin, per_minute=per_minute,
                           per_hour=per_hour, per_day=per_day, monthly_cap_usd=monthly_cap_usd, created_at=now_text()))
        write_keys_file(path, keys)
    except ConfigError as exc:
        _fail(exc)
        return
    typer.echo(key)
    typer.echo(f"key {kid} written to {path} (hash only); this is the only time the key is shown", err=True)


@keys_app.command("list")
def list_(config: Optional[Path] = ConfigOpt, as_json: bool = typer.Option(False, "--json")) -> None:
    """The keys: id, name, tenants, limits, revoked or not (never the key)."""
    from vouched.server.auth import keys_file_path, read_keys_file

    try:
        keys = read_keys_file(keys_file_path(_load(config)))
    except ConfigError as exc:
        _fail(exc)
        return
    rows = [{k: v for k, v in dataclasses.asdict(key).items() if k != "hash"} for key in keys]
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    for r in rows:
        state = f"revoked {r['revoked_at']}" if r["revoked_at"] else "active"
        limits = ", ".join(f"{n}={r[n]}" for n in ("per_minute", "per_hour", "per_day", "monthly_cap_usd") if r[n] is not None)
        typer.echo(f"{r['id']}  {state}  tenants={','.join(r['tenants']) or '-'}{'  admin' if r['admin'] else ''}"
                   f"{'  ' + limits if limits else ''}{'  ' + r['name'] if r['name'] else ''}")


@keys_app.command("revoke")
def revoke(key_id: str = typer.Argument(..., help="The key's id (from `keys list`)."), config: Optional[Path] = ConfigOpt) -> None:
    """Revoke a key (it stays listed, marked revoked; a revoked key gets 401)."""
    from vouched.server.auth import keys_file_path, now_text, read_keys_file, write_keys_file

    try:
        path = keys_file_path(_load(config))
        keys = read_keys_file(path)
        if not any(k.id == key_id for k in keys):
            raise ConfigError(f"no key {key_id!r} in {path}: see `vouched keys list`")
        keys = [dataclasses.replace(k, revoked_at=k.revoked_at or now_text()) if k.id == key_id else k for k in keys]
        write_keys_file(path, keys)
    except ConfigError as exc:
        _fail(exc)
        return
    typer.echo(f"key {key_id} revoked; restart `vouched serve` to apply", err=True)
