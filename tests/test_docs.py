"""docs/cli.md and docs/config.md are generated (python -m vouched.docs); CI fails when they drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from vouched import docs

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("rel, fn", sorted(docs.TARGETS.items()))
def test_generated_reference_is_up_to_date(rel, fn):
    want = getattr(docs, fn)()
    have = (ROOT / rel).read_text(encoding="utf-8") if (ROOT / rel).exists() else ""
    assert have == want, f"{rel} is out of date: run `python -m vouched.docs` and commit the result"


def test_cli_reference_names_every_command_and_option():
    import typer.main

    from vouched.cli import app

    text = docs.cli_markdown()
    root = typer.main.get_command(app)
    for name, cmd in root.commands.items():
        assert f"## `vouched {name}`" in text
        for sub in getattr(cmd, "commands", {}) or {}:
            assert f"## `vouched {name} {sub}`" in text
    for opt in ("--as-of", "--max-answerable-loss", "--check", "--json"):
        assert f"`{opt}`" in text


def test_config_reference_names_every_key_with_its_default():
    from vouched.config import Config

    text = docs.config_markdown()
    for section, field in Config.model_fields.items():
        ann = field.annotation
        if hasattr(ann, "model_fields"):
            assert f"## `[{section}]`" in text
            for key, sub in ann.model_fields.items():
                nested = hasattr(sub.annotation, "model_fields")
                assert (f"## `[{section}.{key}]`" if nested else f"| `{key}` |") in text
    assert '| `top_k` | int | `8` |' in text  # a default read from the schema, not copied by hand


def test_check_mode_reports_drift(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(docs, "ROOT", tmp_path)
    assert docs.main(["--check"]) == 1 and "out of date" in capsys.readouterr().err
    assert docs.main([]) == 0 and docs.main(["--check"]) == 0
