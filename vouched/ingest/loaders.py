"""Load one source file (Markdown, HTML, plain text, PDF) into a `LoadedDocument`.

Every loader reduces its format to the same flat list of `Block`s in reading order, plus
document-level fields, so the chunker never needs to know where a document came from.
Parsers are real parsers (markdown-it tokens, BeautifulSoup/lxml, pypdf), imported only
when a file of their kind is loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Callable, Literal, Mapping, Sequence

from vouched.errors import IngestError
from vouched.ingest._fields import coerce_fields, read_text, split_front_matter

BlockKind = Literal["heading", "paragraph", "list", "table", "code"]

MARKDOWN_SUFFIXES = (".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
TEXT_SUFFIXES = (".txt",)
PDF_SUFFIXES = (".pdf",)
SUPPORTED_SUFFIXES: tuple[str, ...] = MARKDOWN_SUFFIXES + HTML_SUFFIXES + TEXT_SUFFIXES + PDF_SUFFIXES

# How much text language detection reads: enough to be sure, little enough to stay fast.
_DETECT_CHARS = 4000


@dataclass(frozen=True)
class Block:
    """One unit of a document in reading order; headings carry their level (1–6), others 0."""

    kind: BlockKind
    text: str
    level: int = 0
    page: int | None = None


@dataclass(frozen=True)
class LoadedDocument:
    """A parsed source: identity, document-level fields and its blocks.

    `metadata` holds the typed document-level fields that were set (tenant, version,
    updated_at, effective_from, effective_to, supersedes, authority, draft), front-matter
    keys vouched does not know under "extra", and loader findings such as
    `hidden_text_dropped` (HTML). `empty_pages` lists 1-based PDF pages without text.
    """

    doc_id: str
    title: str
    lang: str
    source: str
    url: str | None
    metadata: Mapping[str, Any]
    blocks: tuple[Block, ...]
    empty_pages: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)

    @property
    def has_body(self) -> bool:
        return any(b.kind != "heading" and b.text.strip() for b in self.blocks)


@dataclass(frozen=True)
class _Parsed:
    """What a format parser hands back before identity and language are settled."""

    blocks: tuple[Block, ...]
    fields: dict[str, Any]
    title: str | None = None
    empty_pages: tuple[int, ...] = ()


def load_document(
    path: Path,
    *,
    root: Path | None = None,
    allowed_langs: Sequence[str] | None = None,
) -> LoadedDocument:
    """Load one file; `root` anchors the default doc id and source (defaults to its folder).

    Raises `IngestError` naming the file for an unsupported extension, an undecodable or
    unparsable file, an encrypted PDF, or a bad document-level field.
    """
    path = Path(path)
    parser = _parser_for(path)
    try:
        parsed = parser(path)
    except IngestError:
        raise
    except Exception as exc:  # noqa: BLE001 - a parser failing on odd input must still name the file
        raise IngestError(f"{path}: could not be parsed ({type(exc).__name__}: {exc})") from exc
    return _finish(path, parsed, root=root, allowed_langs=allowed_langs)


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def _parser_for(path: Path) -> Callable[[Path], _Parsed]:
    suffix = path.suffix.lower()
    if suffix in MARKDOWN_SUFFIXES:
        return _parse_markdown
    if suffix in TEXT_SUFFIXES:
        return _parse_text
    if suffix in HTML_SUFFIXES:
        from vouched.ingest._html import parse_html

        return parse_html
    if suffix in PDF_SUFFIXES:
        from vouched.ingest._pdf import parse_pdf

        return parse_pdf
    supported = ", ".join(SUPPORTED_SUFFIXES)
    raise IngestError(f"{path}: unsupported file type {suffix or '(no extension)'!r}; supported: {supported}")


def _finish(path: Path, parsed: _Parsed, *, root: Path | None, allowed_langs: Sequence[str] | None) -> LoadedDocument:
    """Settle identity, title and language, which follow the same rules for every format."""
    fields = dict(parsed.fields)
    relative = _relative(path, root)
    doc_id = fields.pop("id", None) or relative.with_suffix("").as_posix()
    title = fields.pop("title", None) or parsed.title or path.stem
    lang = fields.pop("lang", None) or _detect(parsed.blocks, allowed_langs)
    url = fields.pop("url", None)
    return LoadedDocument(
        doc_id=doc_id,
        title=title,
        lang=lang,
        source=relative.as_posix(),
        url=url,
        metadata=fields,
        blocks=parsed.blocks,
        empty_pages=parsed.empty_pages,
    )


def public_url(source: str, base_url: str = "", rules: Mapping[str, str] | None = None) -> str | None:
    """The public link of a document from its path relative to the ingest root.

    `rules` map a glob over that path (fnmatch: `*` also crosses `/`) to a URL template with
    {path}, {stem} (path without its extension) and {name}; the first glob that matches wins,
    and an empty template means the page has no public link. Otherwise `base_url` + path
    (percent-encoded), or None without a base URL.
    """
    from fnmatch import fnmatchcase
    from urllib.parse import quote

    rel = PurePath(source).as_posix().lstrip("/")
    stem = rel[: -len(PurePath(rel).suffix)] if PurePath(rel).suffix else rel
    for glob, template in (rules or {}).items():
        if fnmatchcase(rel, glob):
            if not template:
                return None
            return (template.replace("{path}", quote(rel)).replace("{stem}", quote(stem))
                    .replace("{name}", quote(PurePath(rel).name)))
    if not base_url:
        return None
    return base_url.rstrip("/") + "/" + quote(rel)


def _relative(path: Path, root: Path | None) -> PurePath:
    """The path relative to the ingest root, so ids and sources are the same on every machine."""
    base = Path(root) if root is not None else path.parent
    try:
        return path.resolve().relative_to(base.resolve())
    except ValueError:
        return PurePath(path.name)


def _detect(blocks: Sequence[Block], allowed_langs: Sequence[str] | None) -> str:
    from vouched.text import LANGS, detect_language

    allowed = tuple(allowed_langs) if allowed_langs else tuple(LANGS)
    default = allowed[0] if allowed else "en"
    sample = "\n".join(b.text for b in blocks if b.kind != "code")[:_DETECT_CHARS]
    if not sample.strip():
        return default
    return detect_language(sample, allowed=allowed, default=default)


# --- Markdown -------------------------------------------------------------------------


def _parse_markdown(path: Path) -> _Parsed:
    """Markdown via markdown-it tokens, so emphasis, links and code never leak as syntax."""
    from markdown_it import MarkdownIt

    raw, body = split_front_matter(read_text(path), path)
    fields = coerce_fields(raw, path)
    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    dropped: list[str] = []
    blocks = tuple(_markdown_blocks(tokens, dropped))
    hidden = sum(len(" ".join(t.split())) for t in dropped if not t.lstrip().startswith("<"))
    if hidden:
        fields["hidden_text_dropped"] = hidden
    if dropped:  # raw HTML blocks, comments and hidden inline text: scanned for instructions
        fields["dropped_text"] = "\n".join(dropped)
    first_h1 = next((b.text for b in blocks if b.kind == "heading" and b.level == 1), None)
    return _Parsed(blocks=blocks, fields=fields, title=first_h1)


def _markdown_blocks(tokens: Sequence[Any], dropped: list[str] | None = None) -> list[Block]:
    """Walk the flat token stream, tracking list and table context to pick each block's kind.

    Raw HTML blocks (comments included) are not content; their source goes to ``dropped``.
    """
    blocks: list[Block] = []
    dropped = [] if dropped is None else dropped
    list_depth = 0
    row: list[str] | None = None
    heading_level = 0
    for token in tokens:
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif kind == "heading_open":
            heading_level = int(token.tag[1])
        elif kind == "heading_close":
            heading_level = 0
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and row is not None:
            if any(cell for cell in row):
                blocks.append(Block("table", " | ".join(row)))
            row = None
        elif kind in ("fence", "code_block"):
            code = token.content.strip("\n")
            if code.strip():
                blocks.append(Block("code", code))
        elif kind == "html_block":
            dropped.append(token.content.strip())
        elif kind == "inline":
            text = _inline_text(token, dropped).strip()
            if row is not None:
                row.append(text)
            elif text and heading_level:
                blocks.append(Block("heading", text, heading_level))
            elif text:
                blocks.append(Block("list" if list_depth else "paragraph", text))
    return blocks


_HIDDEN_OPEN = re.compile(
    r"<([a-z][a-z0-9-]*)\b[^>]*?(?:\shidden(?:[\s=/>])|aria-hidden\s*=\s*[\"']?true|display\s*:\s*none|visibility\s*:\s*hidden)[^>]*>",
    re.IGNORECASE,
)


def _inline_text(token: Any, dropped: list[str] | None = None) -> str:
    """Plain text of an inline token: link text kept, image alt kept, raw HTML dropped.

    Text inside an inline element the reader never sees (``<span hidden>``, ``aria-hidden``,
    ``display:none``, ``visibility:hidden``) is dropped as the HTML loader drops it, and
    goes to ``dropped``: hidden text is a classic prompt-injection carrier.
    """
    parts: list[str] = []
    hidden_tag: str | None = None
    depth = 0
    hidden: list[str] = []
    for child in token.children or ():
        if hidden_tag is not None:
            if child.type == "html_inline":
                tag = child.content.strip().lower()
                if tag.startswith(f"<{hidden_tag}") and not tag.endswith("/>"):
                    depth += 1
                elif tag.startswith(f"</{hidden_tag}"):
                    depth -= 1
                    if depth == 0:
                        hidden_tag = None
                        if dropped is not None:
                            dropped.append("".join(hidden))
                        hidden = []
            elif child.type in ("text", "code_inline", "softbreak", "hardbreak"):
                hidden.append(child.content or " ")
            continue
        if child.type == "html_inline":
            m = _HIDDEN_OPEN.match(child.content.strip())
            if m is not None and not child.content.rstrip().endswith("/>"):
                hidden_tag, depth = m.group(1).lower(), 1
            continue
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type == "softbreak":
            parts.append(" ")
        elif child.type == "hardbreak":
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content or "".join(c.content for c in child.children or ()))
    if hidden and dropped is not None:  # never closed: everything after the opening tag was hidden
        dropped.append("".join(hidden))
    return "".join(parts)


# --- Plain text -----------------------------------------------------------------------

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def _parse_text(path: Path) -> _Parsed:
    """Paragraphs split on blank lines; hard-wrapped lines are joined unless they are a list."""
    raw, body = split_front_matter(read_text(path), path)
    fields = coerce_fields(raw, path)
    blocks: list[Block] = []
    for para in _BLANK_LINE.split(body.replace("\r\n", "\n").replace("\r", "\n")):
        lines = [line.strip() for line in para.splitlines() if line.strip()]
        if not lines:
            continue
        if all(_LIST_LINE.match(line) for line in lines):
            blocks.extend(Block("list", _LIST_LINE.sub("", line)) for line in lines)
        else:
            blocks.append(Block("paragraph", " ".join(lines)))
    return _Parsed(blocks=tuple(blocks), fields=fields)
