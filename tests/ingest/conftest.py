"""Fixtures for ingestion tests: every source file is written into tmp_path by the test."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import pytest

LANGS = ("en", "fa", "es")


@pytest.fixture
def write(tmp_path: Path) -> Callable[..., Path]:
    """write("a/b.md", text) → the file, parents created, UTF-8."""

    def _write(relative: str, text: str | bytes) -> Path:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return _write


@pytest.fixture
def make_pdf(tmp_path: Path) -> Callable[..., Path]:
    """make_pdf("r.pdf", [[para, para], [], [para]]) → a PDF; [] is a page with no text.

    Each paragraph is a list of lines drawn 14pt apart, with a blank line between paragraphs.
    """
    from reportlab.pdfgen import canvas

    def _make(relative: str, pages: Sequence[Sequence[Sequence[str]]], *, title: str | None = None, password: str | None = None) -> Path:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        pdf = canvas.Canvas(str(path), encrypt=password) if password else canvas.Canvas(str(path))
        if title:
            pdf.setTitle(title)
        for paragraphs in pages:
            y = 800.0
            for lines in paragraphs:
                for line in lines:
                    pdf.drawString(72, y, line)
                    y -= 14
                y -= 14
            pdf.showPage()
        pdf.save()
        return path

    return _make
