"""Markdown and plain-text loaders, document-level fields, ids, errors."""

from __future__ import annotations

import shutil
from datetime import date

import pytest

from vouched.errors import IngestError
from vouched.ingest import Block, load_document

LANGS = ("en", "fa", "es")

RESUME = """---
id: resume
title: Curriculum
lang: en
tenant: acme
version: 3
updated_at: 2024-05-06
effective_from: 2024-01
effective_to: 2025
supersedes: resume-v2
authority: 5
draft: true
url: https://example.org/cv
layout: page
---
# Jane Doe

Intro paragraph with **bold** and a [link](https://example.org).

## Work

### Acme

- Led the *platform* team.
- Shipped `vouched`.

| Year | Role |
| --- | --- |
| 2021 | Lead |

```python
print("hi")
```
"""


def test_markdown_front_matter_sets_typed_fields(write):
    doc = load_document(write("cv.md", RESUME), allowed_langs=LANGS)
    assert (doc.doc_id, doc.title, doc.lang, doc.url) == ("resume", "Curriculum", "en", "https://example.org/cv")
    meta = doc.metadata
    assert meta["tenant"] == "acme"
    assert meta["version"] == "3"
    assert meta["updated_at"] == date(2024, 5, 6)
    assert meta["effective_from"] == date(2024, 1, 1)
    assert meta["effective_to"] == date(2025, 1, 1)
    assert meta["supersedes"] == "resume-v2"
    assert meta["authority"] == 5 and meta["draft"] is True
    assert meta["extra"] == {"layout": "page"}


def test_markdown_blocks_come_from_tokens(write):
    doc = load_document(write("cv.md", RESUME), allowed_langs=LANGS)
    assert doc.blocks == (
        Block("heading", "Jane Doe", 1),
        Block("paragraph", "Intro paragraph with bold and a link."),
        Block("heading", "Work", 2),
        Block("heading", "Acme", 3),
        Block("list", "Led the platform team."),
        Block("list", "Shipped vouched."),
        Block("table", "Year | Role"),
        Block("table", "2021 | Lead"),
        Block("code", 'print("hi")'),
    )


def test_title_defaults_to_first_h1_then_stem(write):
    with_h1 = load_document(write("a.md", "Intro text here.\n\n# The Title\n\n# Second\n"), allowed_langs=LANGS)
    assert with_h1.title == "The Title"
    without = load_document(write("notes-2024.md", "## Only an h2\n\nBody text.\n"), allowed_langs=LANGS)
    assert without.title == "notes-2024"


def test_doc_id_is_relative_posix_path_without_extension_and_stable(tmp_path, write):
    path = write("site/docs/guides/setup.md", "# Setup\n\nInstall it.\n")
    doc = load_document(path, root=tmp_path / "site", allowed_langs=LANGS)
    assert doc.doc_id == "docs/guides/setup"
    assert doc.source == "docs/guides/setup.md"
    moved = tmp_path / "elsewhere" / "copy"
    shutil.copytree(tmp_path / "site", moved)
    again = load_document(moved / "docs/guides/setup.md", root=moved, allowed_langs=LANGS)
    assert (again.doc_id, again.source) == (doc.doc_id, doc.source)
    assert load_document(path, allowed_langs=LANGS).doc_id == "setup"


def test_language_is_detected_within_allowed(write):
    fa = write(
        "fa.md",
        "# درباره من\n\nمن یک مهندس نرم‌افزار هستم و در تهران زندگی می‌کنم. "
        "سال‌ها روی سامانه‌های جستجو و پردازش زبان فارسی کار کرده‌ام.\n",
    )
    es = write(
        "es.md",
        "# Sobre mí\n\nSoy ingeniera de software y vivo en Madrid. "
        "He trabajado muchos años en sistemas de búsqueda y en el procesamiento del lenguaje.\n",
    )
    assert load_document(fa, allowed_langs=LANGS).lang == "fa"
    assert load_document(es, allowed_langs=LANGS).lang == "es"
    assert load_document(es, allowed_langs=("en",)).lang == "en"


def test_lang_tag_is_reduced_to_primary_subtag(write):
    doc = load_document(write("a.md", "---\nlang: es-MX\n---\nHola.\n"), allowed_langs=LANGS)
    assert doc.lang == "es"


@pytest.mark.parametrize(
    ("front", "key"),
    [
        ("updated_at: 2024-02-30", "updated_at"),
        ("updated_at: 2024-05", "updated_at"),
        ("effective_from: 2024-13", "effective_from"),
        ("effective_to: soon", "effective_to"),
        ("authority: high", "authority"),
        ("draft: maybe", "draft"),
    ],
)
def test_bad_field_names_file_and_key(write, front, key):
    path = write("bad.md", f"---\n{front}\n---\nBody.\n")
    with pytest.raises(IngestError) as info:
        load_document(path, allowed_langs=LANGS)
    assert str(path) in str(info.value) and key in str(info.value)


def test_bad_front_matter_yaml_and_unclosed_block(write):
    for name, text in [("y.md", "---\ntitle: [unclosed\n---\nBody.\n"), ("u.md", "---\ntitle: x\nBody.\n")]:
        path = write(name, text)
        with pytest.raises(IngestError, match="front matter") as info:
            load_document(path, allowed_langs=LANGS)
        assert str(path) in str(info.value)


def test_unknown_extension_lists_supported(write):
    with pytest.raises(IngestError) as info:
        load_document(write("photo.png", b"\x89PNG"), allowed_langs=LANGS)
    message = str(info.value)
    assert "photo.png" in message and all(s in message for s in (".md", ".html", ".txt", ".pdf"))


def test_undecodable_file_names_it(write):
    path = write("latin.md", "Caf\xe9 cr\xe8me".encode("latin-1"))
    with pytest.raises(IngestError, match="UTF-8") as info:
        load_document(path, allowed_langs=LANGS)
    assert str(path) in str(info.value)


def test_utf8_bom_is_dropped(write):
    doc = load_document(write("bom.md", "\ufeff---\ntitle: B\n---\nBody text.\n".encode()), allowed_langs=LANGS)
    assert doc.title == "B" and doc.blocks == (Block("paragraph", "Body text."),)


def test_text_loader_paragraphs_lists_and_front_matter(write):
    text = "---\ntitle: Notes\nlang: en\n---\nFirst line\nwraps here.\n\n\n- one\n- two\n\n  \nLast.\n"
    doc = load_document(write("n.txt", text), allowed_langs=LANGS)
    assert doc.title == "Notes"
    assert doc.blocks == (
        Block("paragraph", "First line wraps here."),
        Block("list", "one"),
        Block("list", "two"),
        Block("paragraph", "Last."),
    )
    assert load_document(write("plain.txt", "Just text."), allowed_langs=LANGS).title == "plain"
