"""PDF loader: paragraphs per page, 1-based pages, empty pages reported, bad PDFs named."""

from __future__ import annotations

import pytest

from vouched.errors import IngestError
from vouched.ingest import Block, chunk_document, load_document

LANGS = ("en", "fa", "es")

PAGES = [
    [["The first paragraph starts on this line and", "continues on the next line."], ["A second paragraph."]],
    [],
    [["Third page: a hyphen-", "ated word is rejoined."]],
]


def test_pdf_paragraphs_pages_and_empty_pages(make_pdf):
    doc = load_document(make_pdf("report.pdf", PAGES, title="Annual report"), allowed_langs=LANGS)
    assert doc.title == "Annual report" and doc.lang == "en"
    assert doc.blocks == (
        Block("paragraph", "The first paragraph starts on this line and continues on the next line.", 0, 1),
        Block("paragraph", "A second paragraph.", 0, 1),
        Block("paragraph", "Third page: a hyphenated word is rejoined.", 0, 3),
    )
    assert doc.empty_pages == (2,)


def test_pdf_chunks_keep_the_page_of_their_first_block(make_pdf):
    doc = load_document(make_pdf("report.pdf", PAGES), allowed_langs=LANGS)
    assert doc.title == "report"
    chunks = chunk_document(doc, max_chars=80)
    assert [c.page for c in chunks] == [1, 1, 3]
    assert all(c.source == "report.pdf" for c in chunks)


def test_pdf_with_no_text_at_all_is_empty_not_an_error(make_pdf):
    doc = load_document(make_pdf("scan.pdf", [[], []]), allowed_langs=LANGS)
    assert doc.blocks == () and doc.empty_pages == (1, 2)
    assert chunk_document(doc) == []


def test_encrypted_pdf_raises_naming_the_file(make_pdf):
    path = make_pdf("secret.pdf", [[["Top secret."]]], password="hunter2")
    with pytest.raises(IngestError, match="encrypted") as info:
        load_document(path, allowed_langs=LANGS)
    assert str(path) in str(info.value)


def test_corrupt_pdf_raises_naming_the_file(write):
    path = write("broken.pdf", b"%PDF-1.4\nthis is not a pdf at all\n")
    with pytest.raises(IngestError) as info:
        load_document(path, allowed_langs=LANGS)
    assert str(path) in str(info.value)
