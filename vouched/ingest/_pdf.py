"""PDF → one block per paragraph per page, with 1-based page numbers, via pypdf.

pypdf's plain text keeps reading order but not paragraph breaks, so each text run's
baseline is recorded while extracting and a vertical gap clearly wider than the page's usual
line spacing starts a new paragraph. A page without extractable text (a scan, a blank page)
is listed in `empty_pages`, not raised: the caller reports it. An encrypted PDF that does
not open with an empty password, or a file pypdf cannot parse, is an `IngestError`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vouched.errors import IngestError
from vouched.ingest.loaders import Block, _Parsed

# A gap this many times the usual line spacing separates paragraphs.
_PARAGRAPH_GAP = 1.4
_HYPHENATED = re.compile(r"(?<=[^\W\d_])-$")


@dataclass
class _Line:
    text: str
    y: float | None


def parse_pdf(path: Path) -> _Parsed:
    reader = _open(path)
    blocks: list[Block] = []
    empty: list[int] = []
    for number, page in enumerate(reader.pages, start=1):
        try:
            paragraphs = _page_paragraphs(page)
        except Exception:  # noqa: BLE001 - one unreadable page must not lose the document
            paragraphs = []
        if not paragraphs:
            empty.append(number)
        blocks.extend(Block("paragraph", text, 0, number) for text in paragraphs)
    return _Parsed(blocks=tuple(blocks), fields={}, title=_title(reader), empty_pages=tuple(empty))


def _open(path: Path) -> Any:
    from pypdf import PdfReader

    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise IngestError(f"{path}: PDF is encrypted with a password; save an unencrypted copy")
        _ = len(reader.pages)  # forces the page tree to parse, so corruption shows here
    except IngestError:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf raises many types for damaged files
        raise IngestError(f"{path}: cannot read PDF ({type(exc).__name__}: {exc})") from exc
    return reader


def _title(reader: Any) -> str | None:
    try:
        title = reader.metadata.title if reader.metadata else None
    except Exception:  # noqa: BLE001 - a damaged info dictionary only costs the title
        return None
    text = str(title or "").strip()
    return None if text.lower() in ("", "untitled") else text  # "untitled": writers' placeholder


def _page_paragraphs(page: Any) -> list[str]:
    lines: list[_Line] = [_Line("", None)]

    def visit(text: str, cm: Any, tm: Any, font: Any, size: Any) -> None:
        if not text:
            return
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        for i, part in enumerate(text.split("\n")):
            if i > 0:
                lines.append(_Line("", None))
            if part:
                if lines[-1].y is None:
                    lines[-1].y = y
                lines[-1].text += part

    plain = page.extract_text(visitor_text=visit) or ""
    kept = [line for line in lines if line.text.strip()]
    if not kept:
        return [p for p in (" ".join(x.split()) for x in re.split(r"\n\s*\n", plain)) if p]
    return [_join(group) for group in _group(kept)]


def _group(lines: list[_Line]) -> list[list[str]]:
    """Split lines into paragraphs where the baseline gap is wider than usual (or jumps up)."""
    gaps = [
        round(a.y - b.y, 1)
        for a, b in zip(lines, lines[1:])
        if a.y is not None and b.y is not None and a.y - b.y > 0.5
    ]
    usual = min(Counter(gaps).most_common(), key=lambda kv: (-kv[1], kv[0]))[0] if gaps else None
    groups: list[list[str]] = [[lines[0].text]]
    for prev, line in zip(lines, lines[1:]):
        gap = None if prev.y is None or line.y is None else prev.y - line.y
        new_paragraph = gap is not None and usual is not None and (gap > usual * _PARAGRAPH_GAP or gap < -usual)
        if new_paragraph:
            groups.append([])
        groups[-1].append(line.text)
    return [g for g in groups if g]


def _join(lines: list[str]) -> str:
    """Join wrapped lines; a word hyphenated across a line break is rejoined."""
    text = ""
    for raw in lines:
        line = " ".join(raw.split())
        if not line:
            continue
        if text and _HYPHENATED.search(text) and line[:1].islower():
            text = text[:-1] + line
        else:
            text = f"{text} {line}" if text else line
    return text
