"""load_corpus: walking, routing, de-duplication, error isolation and the report."""

from __future__ import annotations

import pytest

from vouched.errors import IngestError
from vouched.ingest import iter_files, load_corpus

LANGS = ("en", "fa", "es")
BOILERPLATE = "Contact us through the form on the about page."


@pytest.fixture
def site(tmp_path, write, make_pdf):
    write("site/index.md", f"# Home\n\nWelcome to the site.\n\n## Contact\n\n{BOILERPLATE}\n")
    write("site/blog/post.md", f"# Post\n\nA post about search.\n\n## Contact\n\n{BOILERPLATE.upper()}\n")
    write("site/blog/other-tenant.md", f"---\ntenant: other\n---\n# Other\n\n{BOILERPLATE}\n")
    write("site/about.html", "<html><body><h1>About</h1><p>About us.</p><p hidden>psst</p></body></html>")
    write("site/notes.txt", "Plain notes.")
    write("site/empty.md", "# Only a title\n")
    write("site/bad.md", "---\nupdated_at: 2024-99-99\n---\nBody.\n")
    write("site/records.yaml", "- {id: acme, kind: cv, title: Engineer, start: 2021}\n")
    write("site/logo.png", b"\x89PNG\r\n")
    write("site/.DS_Store", b"\x00")
    write("site/.git/config", "[core]\n")
    write("site/vouched.toml", "[site]\n")
    make_pdf("site/docs/report.pdf", [[["Report page one."]], []])
    return tmp_path / "site"


def test_corpus_report_counts(site):
    load = load_corpus([site], allowed_langs=LANGS)
    report = load.report
    assert report.documents == 7  # index, post, other-tenant, about, notes, empty, report.pdf
    assert report.records == 1 and [r.id for r in load.records] == ["acme"]
    assert report.chunks == len(load.chunks)
    assert report.duplicates_skipped == 1  # the boilerplate in blog/post.md; other tenant keeps its copy
    assert report.empty_documents == (str(site / "empty.md"),)
    assert report.empty_pages == ((str(site / "docs/report.pdf"), 2),)
    assert report.hidden_text == ((str(site / "about.html"), 4),)
    assert set(report.skipped_files) == {str(site / ".DS_Store"), str(site / ".git"), str(site / "logo.png")}
    assert len(report.errors) == 1
    path, message = report.errors[0]
    assert path == str(site / "bad.md") and "updated_at" in message and not report.ok


def test_corpus_chunks_ids_sources_and_dedup(site):
    chunks = load_corpus([site], allowed_langs=LANGS).chunks
    ids = [c.id for c in chunks]
    assert len(ids) == len(set(ids))
    assert "blog/post#0" in ids and "docs/report#0" in ids and "index#0" in ids
    boiler = [c for c in chunks if BOILERPLATE.lower() in c.text.lower()]
    # blog/post.md is visited before index.md (sorted), so its copy is kept; case is ignored
    assert sorted((c.doc_id, c.tenant) for c in boiler) == [("blog/other-tenant", "other"), ("blog/post", "default")]
    index = [c for c in chunks if c.doc_id == "index"]
    assert [c.text for c in index] == ["Welcome to the site."]
    assert {c.source for c in chunks} >= {"docs/report.pdf", "about.html", "notes.txt"}


def test_progress_is_called_once_per_file_in_iter_files_order(site):
    seen: list[str] = []
    load_corpus([site], allowed_langs=LANGS, progress=seen.append)
    files = iter_files([site])
    assert seen == [str(p) for p in files]
    assert files == sorted(files, key=lambda p: p.relative_to(site).parts)
    assert not any(part.startswith(".") for p in files for part in p.relative_to(site).parts)


def test_deterministic_across_runs(site):
    first, second = (load_corpus([site], allowed_langs=LANGS) for _ in range(2))
    assert first == second


def test_strict_raises_on_the_first_error(site):
    with pytest.raises(IngestError, match="updated_at"):
        load_corpus([site], allowed_langs=LANGS, strict=True)


def test_files_given_directly_and_missing_paths(tmp_path, write):
    a = write("x/a.md", "Alpha text.")
    load = load_corpus([a, a, tmp_path / "nope.md"], allowed_langs=LANGS)
    assert [c.id for c in load.chunks] == ["a#0"]
    assert load.report.errors == ((str(tmp_path / "nope.md"), f"{tmp_path / 'nope.md'}: no such file or directory"),)


def test_duplicate_doc_ids_and_record_ids_are_errors(tmp_path, write):
    write("c/one.md", "---\nid: same\n---\nOne.")
    write("c/two.md", "---\nid: same\n---\nTwo.")
    write("c/a.records.yaml", "- {id: r1, kind: cv, title: A}\n")
    write("c/b.records.yaml", "- {id: r1, kind: cv, title: B}\n- {id: r2, kind: cv, title: C}\n")
    load = load_corpus([tmp_path / "c"], allowed_langs=LANGS)
    assert [c.text for c in load.chunks] == ["One."]
    assert [r.title for r in load.records] == ["A", "C"]
    messages = [m for _, m in load.report.errors]
    assert any("doc id 'same' is already used by one.md" in m for m in messages)
    assert any("record id 'r1' is already used" in m for m in messages)


def test_render_summarises(site):
    text = load_corpus([site], allowed_langs=LANGS).report.render()
    assert text.splitlines()[0].startswith("Loaded 7 documents → ")
    for expected in ("Duplicate chunks skipped: 1", "Empty documents (1)", "report.pdf p. 2", "about.html (4 chars)", "Skipped, unsupported (3)", "Errors (1):", "bad.md"):
        assert expected in text
