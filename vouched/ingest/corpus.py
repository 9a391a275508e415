"""Load a whole corpus: walk the paths, load and chunk every document, read the records.

One bad file is reported and the run continues (unless `strict`), because a site with one
broken page should still be searchable — but nothing is skipped silently: every error,
empty document, empty PDF page, duplicate and unsupported file is counted in the report.

Walking is deterministic: paths in the order given, each directory walked recursively in
sorted order, hidden files and directories (a leading ".") skipped and listed, symlinked
directories not followed. `vouched.toml` is configuration, not content, and is passed over.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Literal, Mapping, Sequence

from vouched.errors import IngestError
from vouched.ingest.chunker import chunk_document
from vouched.ingest.loaders import is_supported, load_document, public_url
from vouched.ingest.records import is_records_file, load_records
from vouched.types import Chunk, Record

CONFIG_FILE_NAME = "vouched.toml"
InjectionMode = Literal["quarantine", "flag"]


@dataclass(frozen=True)
class IngestReport:
    """What one ingest run did, for the CLI and for the store's corpus-version log."""

    documents: int = 0
    chunks: int = 0
    records: int = 0
    empty_documents: tuple[str, ...] = ()
    empty_pages: tuple[tuple[str, int], ...] = ()  # (file, 1-based page)
    duplicates_skipped: int = 0
    skipped_files: tuple[str, ...] = ()
    errors: tuple[tuple[str, str], ...] = ()  # (file, message)
    too_large: tuple[tuple[str, int], ...] = ()  # (file, bytes): over corpus.max_file_bytes, skipped
    max_file_bytes: int = 0
    hidden_text: tuple[tuple[str, int], ...] = ()  # (file, characters of hidden HTML text dropped)
    # (chunk id, flags): chunks that read as instructions to a model (vouched.guard.injection)
    quarantined: tuple[tuple[str, tuple[str, ...]], ...] = ()  # dropped, never indexed
    flagged: tuple[tuple[str, tuple[str, ...]], ...] = ()  # indexed with injection:* flags
    controls_removed: tuple[tuple[str, tuple[str, ...]], ...] = ()  # invisible/bidi controls stripped
    hidden_instructions: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (file, categories) in hidden text/comments

    @property
    def ok(self) -> bool:
        return not self.errors

    def render(self) -> str:
        """A short multi-line summary for people; empty sections are left out."""
        lines = [f"Loaded {_n(self.documents, 'document')} → {_n(self.chunks, 'chunk')}; {_n(self.records, 'record')}."]
        if self.duplicates_skipped:
            lines.append(f"Duplicate chunks skipped: {self.duplicates_skipped}")
        if self.empty_documents:
            lines.append(f"Empty documents ({len(self.empty_documents)}): {', '.join(self.empty_documents)}")
        if self.empty_pages:
            lines.append(f"PDF pages without text ({len(self.empty_pages)}): {_pages(self.empty_pages)}")
        if self.hidden_text:
            shown = ", ".join(f"{path} ({chars} chars)" for path, chars in self.hidden_text)
            lines.append(f"Hidden HTML text dropped: {shown}")
        if self.hidden_instructions:
            lines.append(f"Instructions to a model in hidden text or comments ({len(self.hidden_instructions)}): {_flagged(self.hidden_instructions)}")
        if self.quarantined:
            lines.append(f"Quarantined, read as instructions to a model ({_n(len(self.quarantined), 'chunk')}): {_flagged(self.quarantined)}")
        if self.flagged:
            lines.append(f"Flagged as instructions to a model, kept ({_n(len(self.flagged), 'chunk')}): {_flagged(self.flagged)}")
        if self.controls_removed:
            lines.append(f"Invisible or bidi controls removed ({_n(len(self.controls_removed), 'chunk')}): {_flagged(self.controls_removed)}")
        if self.skipped_files:
            lines.append(f"Skipped, unsupported ({len(self.skipped_files)}): {', '.join(self.skipped_files)}")
        if self.too_large:
            lines.append(f"Skipped, larger than corpus.max_file_bytes = {self.max_file_bytes:,} bytes ({len(self.too_large)}): "
                         + ", ".join(f"{path} ({size:,} bytes)" for path, size in self.too_large))
        if self.errors:
            lines.append(f"Errors ({len(self.errors)}):")
            lines.extend(f"  {_without_path(path, message)}" for path, message in self.errors)
        return "\n".join(lines)


def _without_path(path: str, message: str) -> str:
    """`path: message`, once: loader messages already start with the path they are about."""
    return message if message.startswith(f"{path}:") else f"{path}: {message}"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _flagged(items: Sequence[tuple[str, tuple[str, ...]]]) -> str:
    return "; ".join(f"{name} [{', '.join(f.partition(':')[2] or f for f in flags)}]" for name, flags in items)


def _pages(pages: Sequence[tuple[str, int]]) -> str:
    by_file: dict[str, list[str]] = {}
    for path, page in pages:
        by_file.setdefault(path, []).append(str(page))
    return "; ".join(f"{path} p. {', '.join(numbers)}" for path, numbers in by_file.items())


@dataclass(frozen=True)
class CorpusLoad:
    chunks: tuple[Chunk, ...]
    records: tuple[Record, ...]
    report: IngestReport


@dataclass
class _Run:
    """Mutable tallies of one run; frozen into an `IngestReport` at the end."""

    strict: bool
    injection_mode: InjectionMode = "quarantine"
    max_file_bytes: int = 0
    base_url: str = ""
    url_rules: Mapping[str, str] = field(default_factory=dict)
    too_large: list[tuple[str, int]] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    documents: int = 0
    empty_documents: list[str] = field(default_factory=list)
    empty_pages: list[tuple[str, int]] = field(default_factory=list)
    duplicates: int = 0
    skipped: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    hidden: list[tuple[str, int]] = field(default_factory=list)
    quarantined: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    flagged: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    controls: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    hidden_instructions: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    seen_text: set[tuple[str, str]] = field(default_factory=set)
    doc_sources: dict[str, str] = field(default_factory=dict)
    record_ids: set[tuple[str, str]] = field(default_factory=set)

    def error(self, path: Path, message: str) -> None:
        if self.strict:
            raise IngestError(message)
        self.errors.append((str(path), message))

    def report(self) -> IngestReport:
        return IngestReport(
            documents=self.documents,
            chunks=len(self.chunks),
            records=len(self.records),
            empty_documents=tuple(self.empty_documents),
            empty_pages=tuple(self.empty_pages),
            duplicates_skipped=self.duplicates,
            skipped_files=tuple(self.skipped),
            errors=tuple(self.errors),
            hidden_text=tuple(self.hidden),
            quarantined=tuple(self.quarantined),
            flagged=tuple(self.flagged),
            controls_removed=tuple(self.controls),
            hidden_instructions=tuple(self.hidden_instructions),
            too_large=tuple(self.too_large),
            max_file_bytes=self.max_file_bytes,
        )


def iter_files(paths: Sequence[Path]) -> list[Path]:
    """Every file `load_corpus` will visit (and call `progress` for), in order."""
    return [file for file, _ in _plan(paths)[0]]


def load_corpus(
    paths: Sequence[Path],
    *,
    allowed_langs: Sequence[str],
    default_tenant: str = "default",
    max_chars: int = 1200,
    overlap_sentences: int = 2,
    progress: Callable[[str], None] | None = None,
    strict: bool = False,
    root: Path | None = None,
    injection_mode: InjectionMode = "quarantine",
    max_file_bytes: int = 0,
    base_url: str = "",
    url_rules: Mapping[str, str] | None = None,
) -> CorpusLoad:
    """Load, chunk and de-duplicate every document under `paths`, and read every records file.

    Doc ids default to the path relative to the directory given (or to `root` when set; a
    file given directly is relative to its own folder). With `strict`, the first error raises
    `IngestError` instead of being reported.

    Every chunk is inspected (`vouched.guard.injection.inspect_text` over its title, section
    and text): invisible and bidi controls are removed and flagged `control:*`; a chunk that
    reads as instructions to a model gets `injection:<category>` flags and, with
    `injection_mode="quarantine"` (guard.injection.mode), is dropped. A document whose hidden
    HTML text or comments hold such instructions gets `injection:hidden` on every chunk: the
    page is hostile, and its visible text may carry the payload (the link, the address).
    All of it is listed in the report.

    A file over `max_file_bytes` (0: no limit) is skipped and listed. A document without a url
    of its own gets one from `url_rules` or `base_url` (`vouched.ingest.loaders.public_url`).
    """
    if injection_mode not in ("quarantine", "flag"):
        raise ValueError(f"injection_mode must be 'quarantine' or 'flag', got {injection_mode!r}")
    planned, hidden = _plan(paths, root)
    run = _Run(strict=strict, injection_mode=injection_mode, max_file_bytes=max_file_bytes, base_url=base_url,
               url_rules=dict(url_rules or {}))
    run.skipped.extend(str(p) for p in hidden)
    for file, file_root in planned:
        if progress is not None:
            progress(str(file))
        if not file.exists():
            run.error(file, f"{file}: no such file or directory")
        elif file.name == CONFIG_FILE_NAME:
            continue
        elif max_file_bytes and (size := _size(file)) > max_file_bytes:
            run.too_large.append((str(file), size))
        elif is_records_file(file):
            _add_records(run, file, default_tenant, allowed_langs)
        elif is_supported(file):
            _add_document(run, file, file_root, allowed_langs, default_tenant, max_chars, overlap_sentences)
        else:
            run.skipped.append(str(file))
    return CorpusLoad(chunks=tuple(run.chunks), records=tuple(run.records), report=run.report())


def _plan(paths: Sequence[Path], root: Path | None = None) -> tuple[list[tuple[Path, Path]], list[Path]]:
    """(file, root for its doc id) in visiting order, plus hidden entries passed over."""
    planned: list[tuple[Path, Path]] = []
    hidden: list[Path] = []
    seen: set[Path] = set()
    for given in map(Path, paths):
        if given.is_dir():
            files, skipped = _walk(given)
            hidden.extend(skipped)
            base = root or given
        else:
            files, base = [given], root or given.parent
        for file in files:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                planned.append((file, base))
    return planned, hidden


def _walk(directory: Path) -> tuple[list[Path], list[Path]]:
    files: list[Path] = []
    hidden: list[Path] = []
    for current, dirnames, filenames in os.walk(directory):
        here = Path(current)
        hidden.extend(here / d for d in sorted(dirnames) if d.startswith("."))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            (hidden if name.startswith(".") else files).append(here / name)
    files.sort(key=lambda p: p.relative_to(directory).parts)
    return files, hidden


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


def _add_records(run: _Run, file: Path, default_tenant: str, allowed_langs: Sequence[str]) -> None:
    try:
        records = load_records(file, default_tenant=default_tenant, allowed_langs=allowed_langs)
    except IngestError as exc:
        run.error(file, str(exc))
        return
    for record in records:
        key = (record.tenant, record.id)
        if key in run.record_ids:
            run.error(file, f"{file}: record id {record.id!r} is already used by another records file")
            continue
        run.record_ids.add(key)
        run.records.append(record)


def _add_document(
    run: _Run,
    file: Path,
    file_root: Path,
    allowed_langs: Sequence[str],
    default_tenant: str,
    max_chars: int,
    overlap_sentences: int,
) -> None:
    try:
        doc = load_document(file, root=file_root, allowed_langs=allowed_langs)
    except IngestError as exc:
        run.error(file, str(exc))
        return
    if doc.doc_id in run.doc_sources:
        first = run.doc_sources[doc.doc_id]
        run.error(file, f"{file}: doc id {doc.doc_id!r} is already used by {first}; give one of them its own id")
        return
    if doc.url is None and (run.base_url or run.url_rules):
        doc = replace(doc, url=public_url(doc.source, run.base_url, run.url_rules))
    run.doc_sources[doc.doc_id] = doc.source
    run.documents += 1
    run.empty_pages.extend((str(file), page) for page in doc.empty_pages)
    if doc.metadata.get("hidden_text_dropped"):
        run.hidden.append((str(file), int(doc.metadata["hidden_text_dropped"])))
    chunks = chunk_document(doc, max_chars=max_chars, overlap_sentences=overlap_sentences, tenant_default=default_tenant)
    if not chunks:
        run.empty_documents.append(str(file))
    _keep_unique(run, _inspect(run, file, doc.metadata.get("dropped_text") or "", chunks))


def _inspect(run: _Run, file: Path, dropped_text: str, chunks: Sequence[Chunk]) -> list[Chunk]:
    """Strip controls, flag instruction-like chunks, and drop them in quarantine mode."""
    from vouched.guard.injection import inspect_text, is_flagged, scan_injection, strip_controls

    doc_flags: tuple[str, ...] = ()
    if dropped_text:
        categories = tuple(dict.fromkeys(h.category for h in scan_injection(dropped_text)))
        if categories:
            run.hidden_instructions.append((str(file), categories))
            doc_flags = ("injection:hidden",)
    kept: list[Chunk] = []
    for chunk in chunks:
        title, title_flags = inspect_text(chunk.title)
        section, section_flags = inspect_text(chunk.section)
        text, text_flags = inspect_text(chunk.text)
        overlap, _ = strip_controls(chunk.overlap)  # the previous chunk's words: flagged there
        flags = tuple(dict.fromkeys(chunk.flags + doc_flags + title_flags + section_flags + text_flags))
        if (flags, text, title, section, overlap) == (chunk.flags, chunk.text, chunk.title, chunk.section, chunk.overlap):
            kept.append(chunk)
            continue
        if not text.strip():  # nothing but invisible characters
            run.controls.append((chunk.id, tuple(f for f in flags if f.startswith("control:"))))
            continue
        chunk = replace(chunk, title=title, section=section, text=text, overlap=overlap, flags=flags)
        controls = tuple(f for f in flags if f.startswith("control:"))
        if controls:
            run.controls.append((chunk.id, controls))
        injection = tuple(f for f in flags if f.startswith("injection:"))
        if is_flagged(flags):
            (run.quarantined if run.injection_mode == "quarantine" else run.flagged).append((chunk.id, injection))
            if run.injection_mode == "quarantine":
                continue
        kept.append(chunk)
    return kept


def _keep_unique(run: _Run, chunks: Sequence[Chunk]) -> None:
    """Keep the first chunk of each (tenant, normalised text); count the rest as duplicates.

    The same boilerplate paragraph on many pages would otherwise crowd every result list;
    other tenants' copies are kept because tenants never see each other's chunks.
    """
    from vouched.text import normalize

    for chunk in chunks:
        key = (chunk.tenant, normalize(chunk.text))
        if key in run.seen_text:
            run.duplicates += 1
            continue
        run.seen_text.add(key)
        run.chunks.append(chunk)
