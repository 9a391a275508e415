"""HTML → blocks with BeautifulSoup/lxml: page content only, hidden text dropped and counted.

What is dropped, and why:
- site chrome and non-content: script, style, noscript, template, nav, aside, svg, iframe,
  canvas, object, embed, button, select, textarea, elements with role navigation / banner /
  contentinfo / complementary, and page-level header/footer (a header or footer inside an
  article, section or main belongs to that content and is kept); HTML comments.
- hidden text: an element with the `hidden` attribute, `aria-hidden="true"`, or an inline
  style with `display:none` or `visibility:hidden`. A reader never sees it, so an answer must
  not quote it, and text hidden on purpose is a classic prompt-injection carrier. Its length
  in characters (whitespace collapsed) is counted in `metadata["hidden_text_dropped"]`, and
  its text, with the comments', is kept in `metadata["dropped_text"]` so ingestion can
  report instructions hidden there (`vouched.guard.injection`).
  Stylesheet rules (a `.hidden` class) cannot be evaluated here and are not detected.

Pages made by documentation generators (Sphinx, MkDocs, Docusaurus, Jupyter Book, …):
- the main landmark (`<main>`, or the one element with `role="main"`) is the page's content
  when there is one: sidebars, "skip to content" links and theme footers outside it go;
- permalink anchors are dropped: an `<a>` with a permalink class (headerlink, hash-link,
  anchor-link, anchorjs-link, header-anchor) or an in-page link (`href="#…"`) whose text is
  only a pilcrow, a section sign, "#", a link symbol or invisible characters — so headings
  read "Tide tables", not "Tide tables ¶";
- "Edit this page" links (an `<a>` to a /edit/ URL whose text starts with "Edit") are dropped;
- the page title loses the site name: `<title>` "Page — Site" / "Page | Site" / "Site - Page"
  becomes the page's `<h1>` when the rest is a separator and more text, or loses a suffix or
  prefix equal to `<meta property="og:site_name">` (`page_title`).

Document-level fields come from `<meta name="vouched:FIELD" content="...">` for FIELD in
`DOCUMENT_FIELDS` (id, title, lang, tenant, version, updated_at, effective_from,
effective_to, supersedes, authority, draft, url); otherwise the title is `<title>` or the
first `<h1>`, the language `<html lang>` and the url `<link rel="canonical">`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vouched.errors import IngestError
from vouched.ingest._fields import DOCUMENT_FIELDS, coerce_fields, read_bytes
from vouched.ingest.loaders import Block, _Parsed

META_PREFIX = "vouched:"

_DROP_TAGS = (
    "script", "style", "noscript", "template", "nav", "aside", "svg", "iframe", "canvas",
    "object", "embed", "button", "select", "textarea", "head",
)  # fmt: skip
_CHROME_ROLES = {"navigation", "banner", "contentinfo", "complementary"}
_SECTIONING = ["article", "section", "main"]
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_INLINE = {
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font",
    "i", "ins", "kbd", "label", "mark", "nobr", "q", "s", "samp", "small", "span", "strike",
    "strong", "sub", "sup", "time", "tt", "u", "var", "wbr", "img", "input",
}  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_LINE_BREAK = "\ue000"  # a <br>, kept through whitespace collapsing


def parse_html(path: Path) -> Any:
    """Parse an HTML file into blocks and document-level fields."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(_decode(path), "lxml")
    raw_fields = _meta_fields(soup)
    head_title = soup.title.get_text(" ", strip=True) if soup.title else ""
    site_name = _site_name(soup)
    dropped = _drop_chrome(soup)
    hidden = _drop_hidden(soup, dropped)
    _drop_permalinks(soup)
    for br in soup.find_all("br"):
        br.replace_with(_LINE_BREAK)
    body = _main(soup) or soup.body or soup
    blocks: list[Block] = []
    _walk(body, "paragraph", blocks)
    fields = coerce_fields(raw_fields, path)
    fields["hidden_text_dropped"] = hidden
    if dropped:  # comments and hidden text, scanned for instructions by ingestion
        fields["dropped_text"] = "\n".join(dropped)
    first_h1 = next((b.text for b in blocks if b.kind == "heading" and b.level == 1), None)
    return _Parsed(blocks=tuple(blocks), fields=fields, title=page_title(head_title, first_h1, site_name) or first_h1)


_PERMALINK_CLASSES = {"headerlink", "hash-link", "anchor-link", "anchorjs-link", "header-anchor", "permalink"}
_PERMALINK_TEXTS = {"", "¶", "§", "#", "🔗", "⚓", "∞"}
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00a0"), None)
_TITLE_SEPARATORS = (" — ", " – ", " - ", " | ", " · ", " :: ", " » ", " « ", " : ")


def _site_name(soup: Any) -> str:
    for attrs in ({"property": "og:site_name"}, {"name": "application-name"}):
        meta = soup.find("meta", attrs=attrs)
        if meta is not None and str(meta.get("content") or "").strip():
            return " ".join(str(meta["content"]).split())
    return ""


def page_title(head: str, h1: str | None, site_name: str = "") -> str:
    """The page's own title: `<title>` without the site name around it (see the module docstring)."""
    head = " ".join(head.split())
    h1 = " ".join((h1 or "").split())
    if not head:
        return h1
    if h1 and head != h1:
        for sep in _TITLE_SEPARATORS:
            if (head.startswith(h1 + sep) and head[len(h1 + sep):].strip()) or \
                    (head.endswith(sep + h1) and head[: -len(sep + h1)].strip()):
                return h1
    if site_name and head != site_name:
        for sep in _TITLE_SEPARATORS:
            if head.endswith(sep + site_name):
                return head[: -len(sep + site_name)].strip()
            if head.startswith(site_name + sep):
                return head[len(site_name + sep):].strip()
    return head


def _drop_permalinks(soup: Any) -> None:
    """Remove permalink anchors and "edit this page" links (see the module docstring)."""
    for a in soup.find_all("a"):
        if a.decomposed:
            continue
        href = str(a.get("href") or "")
        classes = set(a.get("class") or ())
        text = "".join(a.get_text().split()).translate(_INVISIBLE)
        if classes & _PERMALINK_CLASSES or (href.startswith("#") and text in _PERMALINK_TEXTS):
            a.decompose()
        elif "/edit/" in href and text.lower().startswith("edit"):
            a.decompose()


def _main(soup: Any) -> Any | None:
    """The page's main landmark when it has exactly one (outermost), else None."""
    found = [t for t in soup.find_all(True) if t.name == "main" or str(t.get("role") or "").strip().lower() == "main"]
    outer = [t for t in found if not any(o is not t and t in o.descendants for o in found)]
    return outer[0] if len(outer) == 1 else None


def _decode(path: Path) -> str:
    """UTF-8 first; an encoding the page itself declares is honoured; otherwise an error."""
    from bs4.dammit import EncodingDetector

    data = read_bytes(path)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        pass
    declared = EncodingDetector.find_declared_encoding(data, is_html=True)
    if declared:
        try:
            return data.decode(declared)
        except (UnicodeDecodeError, LookupError):
            pass
    raise IngestError(f"{path}: cannot decode as UTF-8 (or a declared charset); save the file as UTF-8")


def _meta_fields(soup: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    html = soup.find("html")
    if html is not None and html.get("lang"):
        fields["lang"] = html["lang"]
    canonical = soup.find("link", rel="canonical")
    if canonical is not None and canonical.get("href"):
        fields["url"] = canonical["href"]
    for meta in soup.find_all("meta"):
        name = str(meta.get("name") or "").strip().lower()
        if name.startswith(META_PREFIX) and meta.get("content") is not None:
            key = name[len(META_PREFIX) :]
            if key in DOCUMENT_FIELDS:
                fields[key] = meta["content"]
    return fields


def _drop_chrome(soup: Any) -> list[str]:
    """Remove comments and site chrome; return the comments' text."""
    from bs4 import Comment

    comments: list[str] = []
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comments.append(" ".join(str(comment).split()))
        comment.extract()
    for tag in soup.find_all(_DROP_TAGS):
        if not tag.decomposed:
            tag.decompose()
    for tag in soup.find_all(True):
        if tag.decomposed:
            continue
        role = str(tag.get("role") or "").strip().lower()
        page_level = tag.name in ("header", "footer") and not tag.find_parent(_SECTIONING)
        if role in _CHROME_ROLES or page_level:
            tag.decompose()
    return [c for c in comments if c]


def _drop_hidden(soup: Any, texts: list[str] | None = None) -> int:
    """Remove hidden elements; return how many characters of text they held (the text
    itself is appended to ``texts``)."""
    dropped = 0
    for tag in soup.find_all(True):
        if tag.decomposed or not _is_hidden(tag):
            continue
        text = " ".join(tag.get_text(" ").split())
        dropped += len(text)
        if texts is not None and text:
            texts.append(text)
        tag.decompose()
    return dropped


def _is_hidden(tag: Any) -> bool:
    if tag.has_attr("hidden"):
        return True
    if str(tag.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(str(tag.get("style") or "")))


def _walk(element: Any, kind: str, out: list[Block]) -> None:
    """Emit blocks in reading order: block elements recurse, inline runs become paragraphs."""
    from bs4 import NavigableString

    run: list[str] = []
    for child in element.children:
        if isinstance(child, NavigableString):
            run.append(str(child))
            continue
        name = child.name
        if name in _INLINE:
            run.append(child.get_text())
            continue
        _flush(run, kind, out)
        if name in _HEADINGS:
            text = " ".join(child.get_text(" ").replace(_LINE_BREAK, " ").split())
            if text:
                out.append(Block("heading", text, _HEADINGS[name]))
        elif name == "pre":
            code = child.get_text().replace(_LINE_BREAK, "\n").strip("\n")
            if code.strip():
                out.append(Block("code", code))
        elif name == "table":
            _table(child, out)
        else:
            _walk(child, "list" if name == "li" else kind, out)
    _flush(run, kind, out)


def _flush(run: list[str], kind: str, out: list[Block]) -> None:
    if not run:
        return
    text = _clean("".join(run))
    run.clear()
    if text:
        out.append(Block(kind, text))  # type: ignore[arg-type]


def _clean(text: str) -> str:
    """Collapse HTML whitespace; a <br> survives as a newline."""
    lines = (" ".join(part.split()) for part in text.split(_LINE_BREAK))
    return "\n".join(line for line in lines if line)


def _table(table: Any, out: list[Block]) -> None:
    """One block per row, cells joined with " | " (a row reads as one fact)."""
    for row in table.find_all("tr"):
        if row.find_parent("table") is not table:
            continue  # a nested table is read as part of its enclosing cell
        cells = [_clean(cell.get_text(" ")).replace("\n", " ") for cell in row.find_all(["td", "th"], recursive=False)]
        if any(cells):
            out.append(Block("table", " | ".join(cells)))
