"""Reading the prompt's sources into what the extractive generator can quote: *units*.

A unit is a sentence, a list item with all its sentences, a sentence and its neighbour, a
code block or table whole (with the lead-in that introduces it), or a list (a lead-in and its
items; a section's opening sentence and the opening sentence of each subsection). A block
is never flattened, cut or quoted in part: one too long, or holding a marker-like ``[0]``,
is not a unit at all. How units are chosen: vouched/answer/extractive.py and docs/extractive.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from vouched.guard.prompt import PromptSource
from vouched.text import split_sentences, words
from vouched.text.sentences import block_spans

MIN_WORDS = 4
MAX_SENTENCE_CHARS = 600
MAX_BLOCK_CHARS = 1200
MAX_ITEMS = 8
MAX_LIST_CHARS = 1500
_TRAILING_PUNCT = re.compile(r"([.!?。！？؟।:]+[\"'”’»)\]]*)\s*$")
_CLAUSE_END = ";؛,،、；，"
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_MARKERISH = re.compile(r"\[\s*\d+(?:\s*[,،;\-–]\s*\d+)*\s*\]")
_BLANK = re.compile(r"\n[ \t\r]*\n")
_CONTINUATION = frozenset(
    """
    it its this these they that those he she his her their them
    esto este esta estos estas ello ella ellas ellos él su sus
    isso isto ele ela eles elas seu sua
    il elle ils elles cela ceci ce cette ces
    es er sie dies diese dieser dieses
    это он она они оно этот эта эти
    """.split()
)


@dataclass(frozen=True)
class Unit:
    """What can be quoted as one answer: the sentences to write, each to be cited."""

    source: int
    position: int
    kind: str  # sentence | item | pair | continued (a pair whose second opens with "It …") | block | list
    parts: tuple[tuple[int, str], ...]  # (source number, text) per sentence or block
    context: str  # section heading and title: what the unit is about

    @property
    def text(self) -> str:
        return " ".join(t for _, t in self.parts)


def add_marker(sentence: str, number: int) -> str:
    """'She built it.' → 'She built it [1].' (the marker before the final punctuation).

    A code block or table keeps its lines: the marker follows its last line.
    """
    if _is_block(sentence.strip()):
        return f"{sentence.strip()} [{number}]"
    s = " ".join(sentence.split())
    m = _TRAILING_PUNCT.search(s)
    if m:
        return f"{s[: m.start()].rstrip()} [{number}]{m.group(1)}"
    # a unit cut after a clause mark ("…; ", Persian/Arabic "؛", "،") ends as a sentence, not "…؛ [1]."
    return f"{s.rstrip(_CLAUSE_END).rstrip() or s} [{number}]."



def _is_block(text: str) -> bool:
    return "\n" in text and bool(block_spans(text))


def pieces(sentences: Sequence[str]) -> list[str]:
    """The stream's text pieces: each sentence and a space; a list item ("- …") on a line of
    its own; a code block or table on lines of its own, so that the sentence splitter sees
    it whole and nothing joins its lines."""
    return [f"\n{s}\n" if _is_block(s) else f"\n{s}" if s.startswith("- ") else s + " " for s in sentences]


def joined(sentences: Sequence[str]) -> str:
    return "".join(pieces(sentences))


# -- reading sources into units -------------------------------------------------------------
def _segments(text: str) -> list[tuple[str, str]]:
    """(kind, text) in order: 'block' (a fenced code block or a table, whole), 'list' (lines
    packed with single line breaks: list items) or 'para'."""
    out: list[tuple[str, str]] = []

    def loose(piece: str) -> None:
        for seg in _BLANK.split(piece):
            seg = seg.strip("\n")
            if not seg.strip():
                continue
            lines = [ln for ln in seg.split("\n") if ln.strip()]
            out.append(("list" if len(lines) > 1 else "para", seg.strip()))

    pos = 0
    for a, b in block_spans(text):
        loose(text[pos:a])
        out.append(("block", text[a:b].strip("\n")))
        pos = b
    loose(text[pos:])
    return out


def _sentences(text: str) -> list[str]:
    return [s for s in (_LIST_MARK.sub("", x).strip() for x in split_sentences(text)) if s]


def _speaks_first_person(text: str, lang: str | None) -> bool:
    from vouched.guard.voice import first_person_word

    return first_person_word(text, lang) is not None


_LABEL_VALUE = re.compile(r"^[^\W\d_][\w'’ \-]{0,30}:\s+\S")


def _quotable(sentence: str) -> bool:
    """Long enough to say something (or a "Label: value" line), short enough to quote."""
    n = len(words(sentence))
    return (n >= MIN_WORDS or (n >= 2 and _LABEL_VALUE.match(sentence) is not None)) and len(sentence) <= MAX_SENTENCE_CHARS


def _is_lead(sentence: str) -> bool:
    return sentence.rstrip().endswith((":", "："))


def units_of(source: PromptSource, lang: str | None, *, sentences: bool = True) -> list[Unit]:
    """The units of one source, in reading order (see the module docstring)."""
    context = " ".join(x for x in (source.section.split(" > ")[-1] if source.section else "", source.title) if x)
    n = source.number
    out: list[Unit] = []
    segs = _segments(source.text)
    pos = 0

    def unit(kind: str, texts: Sequence[str]) -> None:
        nonlocal pos
        pos += 1
        out.append(Unit(n, pos, kind, tuple((n, t) for t in texts), context))

    for i, (kind, seg) in enumerate(segs):
        nxt = segs[i + 1] if i + 1 < len(segs) else None
        if kind == "block":
            if len(seg) <= MAX_BLOCK_CHARS and not _MARKERISH.search(seg):
                lead = []
                if i > 0 and segs[i - 1][0] != "block":  # the item, or the paragraph's last sentence
                    lead = _sentences(segs[i - 1][1].split("\n")[-1])
                    lead = lead if segs[i - 1][0] == "list" or len(lead) <= 2 else lead[-1:]
                if lead and _is_lead(lead[-1]) and all(len(x) <= MAX_SENTENCE_CHARS for x in lead):
                    unit("block", [*lead, seg])
                else:
                    unit("block", [seg])
            continue
        lines = seg.split("\n") if kind == "list" else [seg]
        for j, line in enumerate(lines):
            sents = _sentences(line)
            if not sents:
                continue
            is_last_line = j == len(lines) - 1
            if kind == "list" and len(sents) > 1 and all(len(x) <= MAX_SENTENCE_CHARS for x in sents):
                if not (_is_lead(sents[-1]) and is_last_line and nxt is not None and nxt[0] == "block"):
                    unit("item", sents)
            if not sentences:
                continue
            for k, sent in enumerate(sents):
                if _is_lead(sent) or not _quotable(sent):
                    continue
                unit("sentence", [sent])
                if k + 1 < len(sents) and _quotable(sents[k + 1]) and not _is_lead(sents[k + 1]):
                    first = words(sents[k + 1])[:1]
                    unit("continued" if first and first[0] in _CONTINUATION else "pair", [sent, sents[k + 1]])
        # A lead-in and the list that follows it, for list questions.
        if kind != "list" and nxt is not None and nxt[0] == "list":
            lead = _sentences(seg)[-1:] if _sentences(seg) else []
            if lead and _is_lead(lead[0]):
                items = [f"- {' '.join(_sentences(ln))}" for ln in nxt[1].split("\n") if _sentences(ln)][:MAX_ITEMS]
                if items and len(" ".join([*lead, *items])) <= MAX_LIST_CHARS:
                    unit("list", [*lead, *items])
    return [u for u in out if not _speaks_first_person(u.text, lang)]


def _chunk_position(source: PromptSource) -> int:
    tail = source.id.rsplit("#", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def section_lists(sources: Sequence[PromptSource], lang: str | None) -> list[Unit]:
    """A section's opening sentence and the opening sentence of each of its subsections
    found among the sources ("maintains three libraries" + one sentence per library)."""
    out = []
    for parent in sources:
        prefix = parent.section + " > " if parent.section else ""
        children = sorted(
            (s for s in sources if s.doc_id == parent.doc_id and s.section and s.section != parent.section
             and s.section.startswith(prefix) and " > " not in s.section[len(prefix):]),
            key=_chunk_position,
        )
        if len(children) < 2:
            continue
        opening = next((x for x in _sentences(parent.text) if _quotable(x) and not _is_lead(x)), None)
        if opening is None:
            continue
        parts = [(parent.number, opening)]
        for child in children[:MAX_ITEMS]:
            first = next((x for x in _sentences(child.text) if _quotable(x) and not _is_lead(x)), None)
            if first is not None:
                parts.append((child.number, f"- {first}"))
        if len(parts) > 2 and sum(len(t) for _, t in parts) <= MAX_LIST_CHARS:
            u = Unit(parent.number, 0, "list", tuple(parts), (parent.section.split(" > ")[-1] + " " + parent.title).strip())
            if not _speaks_first_person(u.text, lang):
                out.append(u)
    return out

