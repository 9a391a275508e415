"""Chunker: sections, size limit, sentence overlap, metadata, ids."""

from __future__ import annotations

import re
from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vouched.ingest import Block, LoadedDocument, chunk_document, load_document
from vouched.text import split_sentences

LANGS = ("en", "fa", "es")


def _doc(blocks, **metadata) -> LoadedDocument:
    return LoadedDocument(
        doc_id="guide", title="Guide", lang="en", source="guide.md", url=None, metadata=metadata, blocks=tuple(blocks)
    )


def _sentences(n: int, start: int = 0) -> str:
    return " ".join(f"Sentence number {i} talks about topic {i}." for i in range(start, start + n))


NESTED = """---
tenant: acme
---
# Jane Doe

Opening words about Jane.

## Work

### Acme

Acme paragraph one.

Acme paragraph two.

### Globex

## Empty heading

## Education

School paragraph.
"""


def test_chunks_follow_headings_and_skip_empty_sections(write):
    doc = load_document(write("cv.md", NESTED), allowed_langs=LANGS)
    chunks = chunk_document(doc)
    assert [(c.section, c.text) for c in chunks] == [
        ("", "Opening words about Jane."),
        ("Work > Acme", "Acme paragraph one.\n\nAcme paragraph two."),
        ("Education", "School paragraph."),
    ]
    assert [c.id for c in chunks] == ["cv#0", "cv#1", "cv#2"]
    assert [c.position for c in chunks] == [0, 1, 2]
    assert all(c.title == "Jane Doe" and c.tenant == "acme" and c.overlap == "" for c in chunks)


def test_a_second_h1_is_part_of_the_path():
    doc = _doc([Block("heading", "Guide", 1), Block("heading", "Part B", 1), Block("heading", "Step", 2), Block("paragraph", "Do it.")])
    assert [c.section for c in chunk_document(doc)] == ["Part B > Step"]


def test_long_paragraphs_split_at_sentences_with_two_sentence_overlap():
    first, second = _sentences(12), _sentences(12, start=12)
    doc = _doc([Block("heading", "Setup", 2), Block("paragraph", first), Block("paragraph", second), Block("heading", "Next", 2), Block("paragraph", "Short.")])
    chunks = chunk_document(doc, max_chars=200, overlap_sentences=2)
    setup = [c for c in chunks if c.section == "Setup"]
    assert len(setup) > 3
    assert all(len(c.text) <= 200 for c in chunks)
    assert setup[0].overlap == ""
    for before, after in zip(setup, setup[1:]):
        expected = split_sentences(before.text)[-2:]
        assert split_sentences(after.overlap) == expected
        assert before.text.endswith(after.overlap)
        assert not after.text.startswith(expected[0])  # overlap is not part of the chunk's own text
    # the chunks' own texts together are the body, once, in order (overlap is never repeated)
    body = re.sub(r"\s+", " ", " ".join(c.text for c in setup))
    assert body == f"{first} {second}"
    assert chunks[-1].section == "Next" and chunks[-1].overlap == ""  # first of its section


def test_every_sentence_boundary_is_respected_when_splitting():
    text = _sentences(10)
    chunks = chunk_document(_doc([Block("paragraph", text)]), max_chars=100)
    sentences = set(split_sentences(text))
    for chunk in chunks:
        assert set(split_sentences(chunk.text)) <= sentences


def test_single_sentence_longer_than_max_is_hard_split_at_whitespace():
    words = [f"word{i:03d}" for i in range(60)]
    chunks = chunk_document(_doc([Block("paragraph", " ".join(words))]), max_chars=50)
    assert all(len(c.text) <= 50 for c in chunks)
    assert [w for c in chunks for w in c.text.split()] == words  # no word was cut


def test_text_without_whitespace_is_cut_hard():
    chunks = chunk_document(_doc([Block("paragraph", "x" * 130)]), max_chars=50)
    assert [len(c.text) for c in chunks] == [50, 50, 30]


def test_list_items_pack_with_newlines_and_long_code_splits_at_lines():
    items = [Block("list", f"item {i}") for i in range(3)]
    code = Block("code", "\n".join(f"line_{i} = {i}" for i in range(20)))
    chunks = chunk_document(_doc([*items, code]), max_chars=60)
    assert chunks[0].text.startswith("item 0\nitem 1\nitem 2")
    code_chunks = [c for c in chunks if "line_" in c.text]
    assert all(len(c.text) <= 60 for c in code_chunks)
    assert "\n".join(c.text for c in code_chunks).count("line_") == 20


def test_every_metadata_field_is_carried():
    meta = dict(
        tenant="t1", version="7", updated_at=date(2024, 5, 6), effective_from=date(2024, 1, 1),
        effective_to=date(2025, 1, 1), supersedes="old-guide", authority=3, draft=True,
    )  # fmt: skip
    doc = LoadedDocument(
        doc_id="docs/guide", title="Guide", lang="es", source="docs/guide.md", url="https://e.org/g",
        metadata=meta, blocks=(Block("heading", "A", 2), Block("paragraph", "Hola.", 0, 4)),
    )  # fmt: skip
    (chunk,) = chunk_document(doc, tenant_default="ignored")
    assert (chunk.id, chunk.doc_id, chunk.title, chunk.section, chunk.page, chunk.position) == ("docs/guide#0", "docs/guide", "Guide", "A", 4, 0)
    assert (chunk.source, chunk.url, chunk.lang, chunk.tenant, chunk.version) == ("docs/guide.md", "https://e.org/g", "es", "t1", "7")
    assert (chunk.updated_at, chunk.effective_from, chunk.effective_to) == (date(2024, 5, 6), date(2024, 1, 1), date(2025, 1, 1))
    assert (chunk.supersedes, chunk.authority, chunk.draft) == ("old-guide", 3, True)


def test_defaults_when_document_sets_nothing():
    (chunk,) = chunk_document(_doc([Block("paragraph", "Text.")]), tenant_default="site")
    assert (chunk.tenant, chunk.version, chunk.authority, chunk.draft, chunk.page) == ("site", "1", 0, False, None)
    assert chunk.updated_at is chunk.effective_from is chunk.effective_to is chunk.supersedes is None


def test_empty_and_heading_only_documents_make_no_chunks():
    assert chunk_document(_doc([])) == []
    assert chunk_document(_doc([Block("heading", "Title", 1), Block("heading", "Sub", 2)])) == []


def test_ids_are_stable_across_runs(write):
    path = write("cv.md", NESTED)
    first = chunk_document(load_document(path, allowed_langs=LANGS))
    second = chunk_document(load_document(path, allowed_langs=LANGS))
    assert first == second


_WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=15)
_SENTENCE = st.lists(_WORD, min_size=1, max_size=25).map(lambda ws: " ".join(ws).capitalize() + ".")
_PARAGRAPH = st.lists(_SENTENCE, min_size=1, max_size=8).map(" ".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paragraphs=st.lists(_PARAGRAPH, min_size=1, max_size=6), max_chars=st.integers(min_value=20, max_value=400))
def test_property_size_limit_and_nothing_lost(paragraphs, max_chars):
    chunks = chunk_document(_doc([Block("paragraph", p) for p in paragraphs]), max_chars=max_chars)
    assert all(0 < len(c.text) <= max_chars for c in chunks)
    assert "".join("".join(c.text.split()) for c in chunks) == "".join("".join(p.split()) for p in paragraphs)
    assert [c.position for c in chunks] == list(range(len(chunks)))


def test_split_code_keeps_indentation():
    code = "\n".join(f"    indented_{i} = {i}" for i in range(10))
    chunks = chunk_document(_doc([Block("code", code)]), max_chars=60)
    assert len(chunks) > 1 and all(c.text.startswith("```\n    indented_") and c.text.endswith("\n```") for c in chunks)


FA = """# درباره من

## کار

من یک مهندس نرم‌افزار هستم. در تهران زندگی می‌کنم. سال‌ها روی سامانه‌های جستجو کار کرده‌ام. آیا این کار سخت است؟ بله، گاهی سخت است. اما همیشه جذاب است.
"""

ES = """---
effective_from: 2024-03
---
# Servicios

## Consultoría

Ofrezco auditorías de búsqueda. Reviso los umbrales de evidencia. ¿Cuánto dura? Depende del corpus. Entrego un informe claro. Después hay una sesión de preguntas.
"""


def test_persian_and_spanish_documents_chunk_with_overlap(write):
    for name, text, lang, section in (("fa.md", FA, "fa", "کار"), ("es.md", ES, "es", "Consultoría")):
        chunks = chunk_document(load_document(write(name, text), allowed_langs=LANGS), max_chars=80)
        assert len(chunks) >= 2 and all(len(c.text) <= 80 for c in chunks)
        assert {(c.lang, c.section) for c in chunks} == {(lang, section)}
        for before, after in zip(chunks, chunks[1:]):
            assert split_sentences(after.overlap) == split_sentences(before.text)[-2:]
    assert chunks[0].effective_from == date(2024, 3, 1)
