"""`vouched init`: survey a folder, write a config that loads, ingest, calibrate automatically."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from vouched.config import load_config
from vouched.errors import ConfigError
from vouched.eval.init import config_text, init_command, survey_folder

SPHINX = """<!DOCTYPE html><html lang="en"><head><meta name="generator" content="Sphinx 8.1.3">
<title>Queues — Harbour Handbook</title></head><body><div role="main"><h1>Queues<a class="headerlink" href="#q">¶</a></h1>
<p>A queue holds messages until a worker takes them. The default visibility timeout is 30 seconds.</p>
<h2>Retries<a class="headerlink" href="#r">¶</a></h2><p>A message that fails is retried five times before it moves to the dead-letter queue.</p>
</div></body></html>"""


def _pages(folder, n=4):
    folder.mkdir(parents=True)
    topics = ["Queues", "Workers", "Schedules", "Storage buckets"]
    for i in range(n):
        (folder / f"p{i}.html").write_text(SPHINX.replace("Queues", topics[i % 4]), encoding="utf-8")
    return folder


def test_generator_pages_read_as_docs_records_as_person_plain_text_as_organisation(tmp_path):
    s = survey_folder(_pages(tmp_path / "docs"))
    assert (s.kind, s.files, s.by_format, s.languages[0]) == ("docs", 4, {"html": 4}, "en") and "sphinx" in s.why
    person = tmp_path / "cv"
    person.mkdir()
    (person / "about.md").write_text("# About\n\nShe restores old clocks in a small workshop by the river.\n", encoding="utf-8")
    (person / "records.yaml").write_text("cv: []\n", encoding="utf-8")
    assert survey_folder(person).kind == "person"
    org = tmp_path / "shop"
    org.mkdir()
    (org / "help.md").write_text("# Returns\n\nParcels can be returned within thirty days of delivery.\n", encoding="utf-8")
    assert survey_folder(org).kind == "organisation" and survey_folder(org, subject="Ada").kind == "person"


def test_an_empty_or_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no such folder"):
        survey_folder(tmp_path / "typo")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no Markdown, HTML"):
        survey_folder(tmp_path / "empty")


def test_the_written_config_loads_and_keeps_what_was_inferred(tmp_path):
    s = survey_folder(_pages(tmp_path / "docs"))
    text = config_text(s, "docs", base_url="https://docs.example.org/", site_name='Harbour "Handbook"')
    (tmp_path / "vouched.toml").write_text(text, encoding="utf-8")
    cfg = load_config(tmp_path / "vouched.toml")
    assert cfg.site.kind == "docs" and cfg.site.name == 'Harbour "Handbook"' and cfg.languages == ["en"]
    assert cfg.corpus.base_url == "https://docs.example.org/" and cfg.corpus_paths == [tmp_path / "docs"]
    assert text.startswith("# Written by `vouched init`") and "# Inferred: pages written by sphinx" in text


def test_init_end_to_end_writes_ingests_and_calibrates(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _pages(tmp_path / "docs")
    con = Console(file=io.StringIO(), width=300, color_system=None)
    code = init_command(tmp_path / "docs", console=con, embedding_model="hashing")
    out = con.file.getvalue()
    assert "written: vouched.toml" in out and "corpus version 1" in out and "automatic probes:" in out
    cfg = load_config(tmp_path / "vouched.toml")
    assert code == 0, out
    assert cfg.threshold.value > 0 and cfg.threshold.corpus_version and "written: vouched.toml [threshold]" in out
    assert "ready: `vouched ask" in out
    with pytest.raises(ConfigError, match="exists: pass --force"):
        init_command(tmp_path / "docs", console=con, embedding_model="hashing")
