"""Corpus commands: `vouched ingest`, `search`, `versions`, `rollback`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from vouched.cli.common import ConfigOpt, _engine, _fail, _parse_date, err, out
from vouched.errors import ConfigError, VouchedError


def ingest(
    paths: List[Path] = typer.Argument(None, help="Files or folders to ingest (default: corpus.paths from the config)."),
    config: Optional[Path] = ConfigOpt,
    strict: bool = typer.Option(False, help="Stop at the first unreadable file instead of reporting it and going on."),
    allow_shrink: bool = typer.Option(False, "--allow-shrink", help="Switch even to a version that holds nothing or loses more than corpus.max_shrink of the current one."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Embed on a Ray cluster: ADDRESS, 'auto' (this machine's cluster, else a local one) or 'local'; needs `pip install 'vouched[ray]'`. Reading, chunking and writing stay here."),
) -> None:
    """Read Markdown, HTML, text, PDF and records; chunk, embed, and switch to a new corpus version.

    The new version is written in one transaction: an interrupted or failed ingest leaves the
    previous version serving. Unchanged text is not re-embedded (embeddings are cached by
    content hash). A version that would hold nothing, or lose more than corpus.max_shrink
    (default 50%) of the current chunks and records, is refused (exit 3; the current version
    keeps serving) unless --allow-shrink; `vouched rollback` switches back to an older version.
    """
    from vouched.errors import ShrinkRefused

    try:
        eng = _engine(config)
        from vouched.ingest.corpus import iter_files

        targets = list(paths or eng.config.corpus_paths)
        if not targets:
            raise ConfigError("nothing to ingest: give PATHs or set corpus.paths in the config")
        files = iter_files(targets)
        try:
            outcome = _ingest_with_progress(eng, targets, len(files), strict=strict, allow_shrink=allow_shrink, ray=ray)
        except ShrinkRefused as exc:
            report = getattr(exc, "report", None)
            if report is not None:
                out.print(report.render(), highlight=False, markup=False)
            raise
        out.print(outcome.report.render(), highlight=False, markup=False)
        v = outcome.version
        out.print(
            f"corpus version {v.id} ({v.hash[:12]}): {v.chunk_count} chunks, {v.record_count} records; "
            f"{outcome.embedded} passages embedded, {v.chunk_count - outcome.embedded if outcome.embedded <= v.chunk_count else 0} from cache; "
            f"{outcome.seconds:.1f}s"
        )
        if eng.config.check_calibration(v.embedding_model or eng.config.embedding.model, v.hash):
            err.print("[yellow]the threshold is not calibrated on this corpus version:[/] run "
                      "`vouched calibrate --auto --write` (or calibrate on a golden set)", highlight=False)
        if outcome.embed_stats is not None and hasattr(outcome.embed_stats, "render"):
            out.print(outcome.embed_stats.render(), highlight=False)
    except VouchedError as exc:
        _fail(exc)


def _ingest_with_progress(eng, targets, n_files: int, *, strict: bool, allow_shrink: bool, ray: str | None = None):
    """A live bar on a terminal; elsewhere (a log, a pipe) a plain line every 10 s per stage."""
    from vouched.ingest.progress import LineProgress, rich_eta_column

    if not err.is_terminal:
        lines = LineProgress(write=lambda line: print(line, file=sys.stderr, flush=True))
        lines.start("reading", n_files)
        return eng.ingest(targets, on_file=lambda _p: lines.advance("reading"),
                          on_embed_start=lambda n: lines.start("embedding", n),
                          on_embedded=lambda n: lines.advance("embedding", n), strict=strict, allow_shrink=allow_shrink,
                          ray_address=ray)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"), rich_eta_column())
    with Progress(*cols, console=err, transient=False) as bar:
        t_files = bar.add_task("reading ", total=n_files)
        t_embed = bar.add_task("embedding", total=None, start=False)
        return eng.ingest(
            targets,
            on_file=lambda _p: bar.advance(t_files),
            on_embed_start=lambda n: (bar.reset(t_embed, total=n), bar.start_task(t_embed)),
            on_embedded=lambda n: bar.advance(t_embed, n),
            strict=strict, allow_shrink=allow_shrink, ray_address=ray,
        )


def search(
    question: str = typer.Argument(..., help="The question, in any configured language."),
    config: Optional[Path] = ConfigOpt,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
    tenant: Optional[str] = typer.Option(None, help="Tenant to search (default: corpus.tenant)."),
    lang: Optional[str] = typer.Option(None, "--query-lang", help="Language of the question (default: detected)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Validity date YYYY-MM-DD (default: today)."),
    k: Optional[int] = typer.Option(None, "-k", help="How many passages (default: retrieval.top_k)."),
    mode: str = typer.Option("hybrid", help="hybrid | dense | keyword."),
    drafts: bool = typer.Option(False, "--include-drafts", help="Also search documents marked draft."),
) -> None:
    """Search the current corpus version: dense + keyword, fused by weighted RRF.

    Each passage shows three numbers: dense (cosine clipped to [0,1]), keyword (coverage of
    the question's content words, 0 unless two or more match) and evidence = the larger of
    the two. Fusion decides the order only; the evidence score is what a threshold compares.
    """
    try:
        eng = _engine(config)
        res = eng.search(question, tenant=tenant, lang=lang, as_of=_parse_date(as_of), k=k, mode=mode, include_drafts=drafts)
    except VouchedError as exc:
        _fail(exc)
        return
    from vouched.eval.calibrate import calibration_warnings

    for w in calibration_warnings(eng.config, eng):
        err.print(f"[yellow]warning:[/] {w}")
    if as_json:
        print(json.dumps({
            "question": question, "query_lang": res.query_lang, "modes": list(res.modes_used), "warnings": list(res.warnings),
            "corpus_version": res.corpus_version, "evidence": res.evidence,
            "passages": [{
                "chunk_id": p.chunk.id, "doc_id": p.chunk.doc_id, "title": p.chunk.title, "section": p.chunk.section,
                "lang": p.chunk.lang, "url": p.chunk.url, "rank": p.rank, "dense": round(p.dense, 4),
                "keyword": round(p.keyword, 4), "evidence": round(p.evidence, 4), "fused": round(p.fused, 6), "text": p.chunk.text,
            } for p in res.passages],
        }, ensure_ascii=False, indent=2))
        return
    for w in res.warnings:
        err.print(f"[yellow]warning:[/] {w}")
    t = Table(title=f"{question}  [dim](question language: {res.query_lang}; best evidence {res.evidence:.3f})[/]", show_lines=True)
    for col in ("#", "document / section", "dense", "keyword", "evidence", "passage"):
        t.add_column(col, overflow="fold")
    for p in res.passages:
        where = p.chunk.title + (f" › {p.chunk.section}" if p.chunk.section else "")
        text = p.chunk.text if len(p.chunk.text) < 220 else p.chunk.text[:217] + "…"
        t.add_row(str(p.rank), f"{where}\n[dim]{p.chunk.doc_id} ({p.chunk.lang})[/]", f"{p.dense:.3f}", f"{p.keyword:.3f}", f"{p.evidence:.3f}", text)
    out.print(t)


def versions(config: Optional[Path] = ConfigOpt, as_json: bool = typer.Option(False, "--json", help="Print a JSON list.")) -> None:
    """List the corpus versions kept in the store (store.keep_versions): size, date, model; the current one is marked."""
    try:
        eng = _engine(config)
        cur = eng.store.current_version()
        rows = eng.store.versions()
        if as_json:
            print(json.dumps([{**v.__dict__, "current": bool(cur and v.id == cur.id)} for v in rows], indent=2))
            return
        t = Table("id", "hash", "created (UTC)", "chunks", "records", "embedding model", "")
        for v in rows:
            created = v.created_at.replace("T", " ").removesuffix("+00:00")
            t.add_row(str(v.id), v.hash[:12], created, f"{v.chunk_count:,}", f"{v.record_count:,}", v.embedding_model,
                      "current" if cur and v.id == cur.id else "")
        out.print(t)
    except VouchedError as exc:
        _fail(exc)


def rollback(
    version: Optional[int] = typer.Argument(None, help="Version id to serve (see `vouched versions`; default: the newest one older than the current)."),
    config: Optional[Path] = ConfigOpt,
) -> None:
    """Switch the served corpus back to a kept version, atomically: readers see the old or the new one, never a mix.

    A running server follows on its next question. Only versions kept by store.keep_versions
    can be rolled back to.
    """
    try:
        eng = _engine(config)
        before = eng.store.current_version()
        v = eng.rollback(version)
        was = f" (was {before.id})" if before else ""
        out.print(f"now serving corpus version {v.id}{was} ({v.hash[:12]}): {v.chunk_count} chunks, {v.record_count} records, "
                  f"created {v.created_at}", highlight=False)
    except VouchedError as exc:
        _fail(exc)
