"""The records route: overview questions answered from the site's structured records.

Records are read for each question, in the reader's language when a translation exists,
dated ones newest first, with dates at the precision the records give ("2021", "2023-04").
"present" appears only for records marked current. Each record becomes a numbered source
and one or two cited sentences, which then pass the same gate as any answer.
"""

from __future__ import annotations

from typing import Sequence

from vouched.answer.extractive import add_marker
from vouched.guard.prompt import PromptSource
from vouched.text import split_sentences
from vouched.types import Record

PRESENT = {
    "en": "present", "es": "actualidad", "pt": "presente", "fr": "aujourd'hui", "de": "heute",
    "fa": "اکنون", "ar": "الآن", "ru": "настоящее время", "zh": "至今", "hi": "वर्तमान",
}

# Which record kinds answer which overview topic; None means every kind.
TOPIC_KINDS: dict[str, tuple[str, ...] | None] = {
    "career": ("cv",),
    "projects": ("case_study",),
    "research": ("case_study", "article", "talk"),
    "writing": ("article",),
    "education": ("education",),
    "skills": ("skill", "service"),
    "services": ("service",),
    "talks": ("talk",),
    "recent": None,
    "current": None,
    "overview": None,
}


def localized(r: Record, lang: str) -> tuple[str, str, str]:
    """(title, summary, organisation) in `lang` when the record has that translation."""
    t = r.translations.get(lang, {}) if lang != r.lang else {}
    return t.get("title") or r.title, t.get("summary") or r.summary, t.get("organisation") or r.organisation


def date_range(r: Record, lang: str) -> str:
    if r.start and r.current:
        return f"{r.start} – {PRESENT.get(lang, PRESENT['en'])}"
    if r.start and r.end and r.end != r.start:
        return f"{r.start} – {r.end}"
    return r.start or r.end or ""


def _recency(r: Record) -> str:
    if r.current:
        return "9999"
    return r.end or r.start or ""


def select_records(records: Sequence[Record], topic: str, lang: str, limit: int) -> list[Record]:
    kinds = TOPIC_KINDS.get(topic)
    pool = [r for r in records if kinds is None or r.kind in kinds]
    if topic == "current":
        pool = [r for r in pool if r.current]
    elif topic in ("recent", "overview"):
        pool = [r for r in pool if r.kind not in ("service", "skill")]
    dated = sorted((r for r in pool if r.start or r.end), key=_recency, reverse=True)
    undated = [r for r in pool if not (r.start or r.end)]
    return (dated + undated)[:limit]


def record_sources(records: Sequence[Record], lang: str, start: int = 1) -> list[PromptSource]:
    out = []
    for n, r in enumerate(records, start):
        title, summary, org = localized(r, lang)
        rng = date_range(r, lang)
        head = " — ".join(p for p in (title, org) if p)
        text = f"{head} ({rng})." if rng else f"{head}."
        if summary:
            text += f" {summary}"
        out.append(PromptSource(
            number=n, id=f"record:{r.id}", doc_id=r.url or f"record:{r.id}", title=title, section=r.kind,
            date=rng or None, url=r.url, text=text, kind="record", flags=("current",) if r.current else (),
        ))
    return out


def record_sentences(sources: Sequence[PromptSource], with_summary: bool = True) -> list[str]:
    """One cited sentence per record (its heading line), plus the first sentence of its summary."""
    out = []
    for s in sources:
        parts = split_sentences(s.text)
        if not parts:
            continue
        out.append(add_marker(parts[0], s.number))
        if with_summary and len(parts) > 1:
            out.append(add_marker(parts[1], s.number))
    return out
