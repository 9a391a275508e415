"""`vouched eval` and `vouched calibrate` on a deployment whose store is PostgreSQL.

The portfolio example with the hashing stand-in embedder, ingested once into SQLite and once
into a real PostgreSQL + pgvector: the golden run must give the same figures on both (the
PostgreSQL store's keyword scores equal FTS5's, and a corpus this small is searched exactly
on both), and calibration must run on PostgreSQL without a SQLite file anywhere.
"""

from __future__ import annotations

import io
import json
import re
import uuid

import pytest
from rich.console import Console

from tests.helpers import copy_example_hashing
from vouched.config import load_config
from vouched.engine import Engine
from vouched.errors import VouchedError, exit_code
from vouched.eval.calibrate import calibrate_command
from vouched.eval.golden import golden_command

KEYS = ("false_refusals", "records_routed", "recall@5", "citation_validity")


def _postgres_toml(toml, schema: str) -> None:
    text = toml.read_text(encoding="utf-8")
    if re.search(r"^\[store\]", text, re.M):
        text = re.sub(r"^\[store\]\n", f'[store]\nbackend = "postgres"\npg_schema = "{schema}"\n', text, count=1, flags=re.M)
    else:
        text += f'\n[store]\nbackend = "postgres"\npg_schema = "{schema}"\n'
    toml.write_text(text, encoding="utf-8")


def test_golden_and_calibrate_run_on_postgres(tmp_path, postgres_dsn, monkeypatch, capsys):
    monkeypatch.setenv("VOUCHED_PG_DSN", postgres_dsn)
    lite = copy_example_hashing("portfolio", tmp_path / "lite")
    pg = copy_example_hashing("portfolio", tmp_path / "pg")
    _postgres_toml(pg, f"t_{uuid.uuid4().hex[:10]}")
    for toml in (lite, pg):
        Engine(load_config(toml)).ingest()
    assert not list((tmp_path / "pg").glob("**/*.sqlite"))  # nothing of the corpus went to a file

    got = {}
    for name, toml in (("sqlite", lite), ("postgres", pg)):
        code = golden_command(toml.parent / "golden.jsonl", toml, as_json=True, progress=False)
        got[name] = (code, json.loads(capsys.readouterr().out))
    (c1, s1), (c2, s2) = got["sqlite"], got["postgres"]
    assert c1 == c2
    assert s2["meta"]["embedding_model"] == "hashing"
    for key in KEYS:
        assert s2[key] == s1[key], key
    assert s2["refusal"] == s1["refusal"]
    assert s2["cases"] == s1["cases"] >= 60

    out = io.StringIO()
    code = calibrate_command(pg.parent / "golden.jsonl", pg, 0.05, console=Console(file=out, width=200),
                             plot_path=tmp_path / "cal.svg")
    assert code in (0, 1), out.getvalue()  # a threshold, none safe, or suggested cases refused: not an input error
    assert "answerable" in out.getvalue()
    assert (tmp_path / "cal.svg").exists()


def test_eval_on_an_empty_postgres_store_says_so(tmp_path, postgres_dsn, monkeypatch):
    monkeypatch.setenv("VOUCHED_PG_DSN", postgres_dsn)
    pg = copy_example_hashing("portfolio", tmp_path / "pg")
    _postgres_toml(pg, f"t_{uuid.uuid4().hex[:10]}")
    with pytest.raises(VouchedError) as e:
        golden_command(pg.parent / "golden.jsonl", pg, as_json=True, progress=False)
    assert exit_code(e.value) == 2
    assert "PostgreSQL store" in str(e.value) and "vouched ingest" in str(e.value)
