"""Cut a `LoadedDocument` into `Chunk`s that follow its headings and paragraphs.

Rules, and why:
- a chunk never spans two sections (a section is the heading path, "Work > Acme"), so a
  citation's section is always true of every word in the chunk;
- paragraphs are packed whole up to `max_chars`; a longer one is split at sentence
  boundaries, and a single longer sentence at whitespace, so `len(chunk.text) <= max_chars`
  always holds;
- each chunk after the first of a section carries, as `overlap`, the last
  `overlap_sentences` sentences of the chunk before it: retrieval sees the context across
  the cut, while the chunk's own `text` (what is quoted and cited) stays its own words;
- a chunk never spans two PDF pages, so its cited page is the page of every word in it;
- a level-1 heading that is the document's title is not repeated in section paths: the
  title is already carried in `Chunk.title`;
- a code block is written fenced (three backticks, or tildes when the code holds backticks)
  so that its extent survives in the chunk text: the sentence splitter never cuts inside a
  fence, and the extractive generator quotes it whole or not at all. A code block longer
  than a chunk is split at lines, each part fenced on its own. A table row is written as
  one line "| cell | cell |", which the splitter keeps together with its neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

from vouched.ingest.loaders import Block, LoadedDocument
from vouched.types import Chunk

SECTION_SEPARATOR = " > "
_LINE_KINDS = ("list", "table", "code")  # split at lines, and packed with single newlines
_FENCE_CHARS = 4  # "```" and its line break, before and after a code block


@dataclass(frozen=True)
class _Piece:
    """A unit that fits in a chunk: a whole block, or part of one."""

    kind: str
    text: str
    page: int | None


def chunk_document(
    doc: LoadedDocument,
    *,
    max_chars: int = 1200,
    overlap_sentences: int = 2,
    tenant_default: str = "default",
) -> list[Chunk]:
    """Chunks of one document in reading order; an empty document gives none."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    chunks: list[Chunk] = []
    for section, blocks in _sections(doc):
        pieces = [piece for block in blocks for piece in _pieces(block, max_chars)]
        previous = ""
        for pieces_of_chunk in _pack(pieces, max_chars):
            text = _join(pieces_of_chunk)
            overlap = _tail_sentences(previous, overlap_sentences) if previous else ""
            chunks.append(_make_chunk(doc, section, text, overlap, pieces_of_chunk[0].page, len(chunks), tenant_default))
            previous = text
    return chunks


def _sections(doc: LoadedDocument) -> Iterator[tuple[str, list[Block]]]:
    """Consecutive body blocks under one heading path; a heading with no body yields nothing."""
    path: list[tuple[int, str]] = []
    body: list[Block] = []
    title_skipped = False
    for block in doc.blocks:
        if block.kind != "heading":
            if block.text.strip():
                body.append(block)
            continue
        if body:
            yield _section_name(path), body
            body = []
        path = [(level, text) for level, text in path if level < block.level]
        if block.level == 1 and block.text == doc.title and not title_skipped and not path:
            title_skipped = True
            continue
        path.append((block.level, block.text))
    if body:
        yield _section_name(path), body


def _section_name(path: Sequence[tuple[int, str]]) -> str:
    return SECTION_SEPARATOR.join(text for _, text in path)


def _pieces(block: Block, max_chars: int) -> list[_Piece]:
    """The block whole if it fits; otherwise parts at line/sentence/whitespace boundaries."""
    text = block.text.strip("\r\n").rstrip() if block.kind == "code" else block.text.strip()
    if block.kind == "code" and max_chars > 2 * _FENCE_CHARS:
        fence = "~~~" if "```" in text else "```"
        inner = max_chars - 2 * _FENCE_CHARS
        parts = [text] if len(text) <= inner else [
            text[a:b] for a, b in _pack_spans(
                text, [p for u in _line_spans(text) for p in _hard_split(text, u, inner)], inner)]
        return [_Piece("code", f"{fence}\n{part}\n{fence}", block.page) for part in parts]
    if block.kind == "table" and not text.startswith("|"):
        text = f"| {text} |"
    if len(text) <= max_chars:
        return [_Piece(block.kind, text, block.page)]
    if block.kind in _LINE_KINDS:
        units = _line_spans(text)
    else:
        from vouched.text import split_sentences

        units = _spans(text, split_sentences(text))
    parts = [part for unit in units for part in _hard_split(text, unit, max_chars)]
    return [_Piece(block.kind, text[a:b], block.page) for a, b in _pack_spans(text, parts, max_chars)]


def _spans(text: str, parts: Sequence[str]) -> list[tuple[int, int]]:
    """Locate each part (a substring of `text`, in order) as a (start, end) span."""
    spans: list[tuple[int, int]] = []
    cursor = 0
    for part in parts:
        stripped = part.strip()
        if not stripped:
            continue
        start = text.find(stripped, cursor)
        if start < 0:  # the splitter altered the text; fall back to one span for the rest
            return spans + [(cursor, len(text))]
        spans.append((start, start + len(stripped)))
        cursor = start + len(stripped)
    if not spans:
        return [(0, len(text))]
    return spans


def _line_spans(text: str) -> list[tuple[int, int]]:
    """Each non-blank line as a span, indentation kept (it matters in code)."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n").rstrip()
        if body.strip():
            spans.append((offset, offset + len(body)))
        offset += len(line)
    return spans


def _hard_split(text: str, span: tuple[int, int], max_chars: int) -> list[tuple[int, int]]:
    """Cut a span longer than max_chars at the last whitespace that fits (or hard, if none)."""
    start, end = span
    out: list[tuple[int, int]] = []
    while end - start > max_chars:
        window = text[start : start + max_chars + 1]
        cut = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
        if cut <= 0:
            cut = max_chars
        out.append((start, start + len(text[start : start + cut].rstrip())))
        start += cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        out.append((start, end))
    return out


def _pack_spans(text: str, spans: list[tuple[int, int]], max_chars: int) -> list[tuple[int, int]]:
    """Merge neighbouring spans while the merged slice of `text` still fits."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and end - merged[-1][0] <= max_chars:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _separator(before: _Piece, after: _Piece) -> str:
    return "\n" if before.kind == after.kind and before.kind in ("list", "table") else "\n\n"


def _pack(pieces: list[_Piece], max_chars: int) -> Iterator[list[_Piece]]:
    """Greedy packing of whole pieces into chunks of at most max_chars, one PDF page each."""
    current: list[_Piece] = []
    size = 0
    for piece in pieces:
        added = len(piece.text) + (len(_separator(current[-1], piece)) if current else 0)
        if current and (size + added > max_chars or piece.page != current[-1].page):
            yield current
            current, size = [], 0
            added = len(piece.text)
        current.append(piece)
        size += added
    if current:
        yield current


def _join(pieces: Sequence[_Piece]) -> str:
    text = pieces[0].text
    for before, after in zip(pieces, pieces[1:]):
        text += _separator(before, after) + after.text
    return text


def _tail_sentences(text: str, count: int) -> str:
    """The last `count` sentences of `text`, as the exact substring they occupy."""
    if count <= 0:
        return ""
    from vouched.text import split_sentences

    spans = _spans(text, split_sentences(text))
    return text[spans[-count:][0][0] :].strip() if spans else ""


def _make_chunk(
    doc: LoadedDocument, section: str, text: str, overlap: str, page: int | None, position: int, tenant_default: str
) -> Chunk:
    meta = doc.metadata
    return Chunk(
        id=f"{doc.doc_id}#{position}",
        doc_id=doc.doc_id,
        text=text,
        title=doc.title,
        section=section,
        overlap=overlap,
        version=str(meta.get("version") or "1"),
        page=page,
        position=position,
        source=doc.source,
        url=doc.url,
        lang=doc.lang,
        tenant=str(meta.get("tenant") or tenant_default),
        updated_at=meta.get("updated_at"),
        effective_from=meta.get("effective_from"),
        effective_to=meta.get("effective_to"),
        supersedes=meta.get("supersedes"),
        authority=int(meta.get("authority") or 0),
        draft=bool(meta.get("draft", False)),
    )
