import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.helpers import copy_example_hashing
from vouched.cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture
def site(tmp_path):
    """A copy of the portfolio example using the hashing stand-in embedder (fast)."""
    return copy_example_hashing("portfolio", tmp_path / "portfolio")


def test_help_teaches():
    r = runner.invoke(app, ["--help"])
    assert r.exit_code == 0
    for cmd in ("ingest", "search", "bench", "versions", "config"):
        assert cmd in r.output
    r = runner.invoke(app, ["search", "--help"])
    assert "evidence" in r.output and "--as-of" in r.output


def test_ingest_then_search_json(site):
    r = runner.invoke(app, ["ingest", "--config", str(site)])
    assert r.exit_code == 0, r.output
    assert "corpus version" in r.output and "chunks" in r.output
    # the embedding rate, after every ingest (or, when an earlier test filled the embedding cache, that nothing was embedded)
    assert ("passages/s" in r.output and "tokens/s" in r.output) or "nothing to embed (86 passages from cache)" in r.output
    r = runner.invoke(app, ["search", "Tessera Health multilingual search engine", "--config", str(site), "--json", "-k", "5"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert len(data["passages"]) == 5
    p = data["passages"][0]
    for key in ("chunk_id", "doc_id", "title", "section", "rank", "dense", "keyword", "evidence"):
        assert key in p
    assert data["passages"][0]["doc_id"].endswith("multilingual-search")
    assert all(q["evidence"] == max(q["dense"], q["keyword"]) for q in data["passages"])


def test_reingest_unchanged_costs_no_embedding(site):
    assert runner.invoke(app, ["ingest", "--config", str(site)]).exit_code == 0
    r = runner.invoke(app, ["ingest", "--config", str(site)])
    assert r.exit_code == 0 and "0 passages embedded" in r.output
    assert "nothing to embed" in r.output and "from cache" in r.output
    r = runner.invoke(app, ["versions", "--config", str(site)])
    assert "current" in r.output


def test_search_before_ingest_is_a_clear_error(site):
    r = runner.invoke(app, ["search", "anything", "--config", str(site)])
    assert r.exit_code == 4
    assert "vouched ingest" in r.output


def test_bad_config_exit_code(tmp_path):
    (tmp_path / "vouched.toml").write_text("[retrieval]\nbogus = 1\n")
    r = runner.invoke(app, ["search", "x", "--config", str(tmp_path / "vouched.toml")])
    assert r.exit_code == 2 and "bogus" in r.output


def test_bad_as_of(site):
    r = runner.invoke(app, ["search", "x", "--config", str(site), "--as-of", "yesterday"])
    assert r.exit_code == 2


def _commands(cmd, path=()):
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, path + (name,))


def test_help_keeps_every_config_section_name_in_brackets():
    """Rich markup must not eat "[threshold]" or "[server.suggested_questions]" (issue 19)."""
    import re

    import typer.main

    from vouched.config import Config

    sections = set(Config.model_fields)
    pattern = re.compile(r"\\?\[(([a-z_]+)(?:\.[a-z_]+)*)\]")
    checked = 0
    for path, cmd in _commands(typer.main.get_command(app)):
        source = " ".join([cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params])
        wanted = {m.group(1) for m in pattern.finditer(source) if m.group(2) in sections}
        if not wanted:
            continue
        r = runner.invoke(app, [*path, "--help"], terminal_width=200)
        text = " ".join(r.output.replace("│", " ").split())
        for name in wanted:
            checked += 1
            assert f"[{name}]" in text, (path, name)
    assert checked >= 3  # calibrate's two, bench load's one at least


def test_ask_outside_a_deployment_creates_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VOUCHED_CONFIG", raising=False)
    for question in ("What are her day rates?", "How do I import a module?"):
        r = runner.invoke(app, ["ask", question])
        assert r.exit_code == 4 and "no corpus here" in r.output and "vouched ingest" in r.output
    assert list(tmp_path.iterdir()) == []  # no .vouched/ left behind


def test_ask_in_a_deployment_still_answers(site):
    assert runner.invoke(app, ["ingest", "--config", str(site)]).exit_code == 0
    r = runner.invoke(app, ["ask", "What are her day rates?", "--config", str(site)])
    assert r.exit_code == 0 and "fees" in r.output
