"""Calibration without a golden set: probes built from the corpus itself, and a bundled off-topic set.

`vouched calibrate --auto` (and `vouched init`) call `auto_calibrate_command`. The choice rule is
the one `vouched calibrate GOLDEN.jsonl` uses (`vouched.eval.calibrate.choose_threshold`): the
lowest threshold above every must-refuse score that loses at most `max_loss` of the answerable
ones. Only where the two sets come from differs:

* answerable — `corpus_probes`: a deterministic sample of the corpus's own chunks (sized to the
  corpus: a fifth of it, at least 30 and at most 150), each turned into a question by rules of
  its language: a section heading becomes "What is <heading>?", otherwise the first sentence's
  leading content words become "What about <words>?" (per-language templates in `_TEMPLATES`).
  These are easier than a reader's questions (their words come from the passage), which is why
  a golden set written by hand remains the better calibration; the report says which was used.
* must refuse — `offtopic_probes`: `vouched/eval/sets/offtopic.jsonl`, ≥ 300 questions of general
  knowledge and about other products and organisations, in all ten languages; those in the
  site's languages are used. A probe the corpus itself covers (every content term of it held
  by one chunk) is dropped and counted: a corpus about football makes "who won the World Cup"
  answerable, not off-topic.

Pure where it can be: `probe_from_chunk`, `sample_chunks` and `offtopic_set` take their inputs
and return values; `auto_cases` reads the corpus (the sources in the config, chunked exactly as
ingest does) and the store.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Sequence

from vouched.eval.calibrate import CalibrationCase, CalibrationError

__all__ = ["AutoCases", "auto_calibrate_command", "auto_cases", "corpus_probes", "held_out_check", "offtopic_set",
           "probe_from_chunk", "sample_chunks", "split_held_out"]

# (heading template, words template) per language: questions a reader could write about a passage.
_TEMPLATES: dict[str, tuple[str, str]] = {
    "en": ("What is {x}?", "What about {x}?"),
    "es": ("¿Qué es {x}?", "¿Qué se sabe de {x}?"),
    "pt": ("O que é {x}?", "O que se sabe sobre {x}?"),
    "fr": ("Qu'est-ce que {x} ?", "Que dit-on de {x} ?"),
    "de": ("Was ist {x}?", "Was gibt es zu {x}?"),
    "fa": ("{x} چیست؟", "درباره {x} چه گفته شده است؟"),
    "ar": ("ما هو {x}؟", "ماذا يقال عن {x}؟"),
    "ru": ("Что такое {x}?", "Что известно о {x}?"),
    "zh": ("{x}是什么？", "关于{x}有什么内容？"),
    "hi": ("{x} क्या है?", "{x} के बारे में क्या कहा गया है?"),
}
_MIN_PROBES, _MAX_PROBES, _SHARE = 30, 150, 0.2
_WORDS_IN_PROBE = 5
_TOKEN = re.compile(r"[^\s\"'“”«»()\[\]{}<>,;:!?¿¡.。，、；：！？؟،]+")
_CODE = re.compile(r"```|`|\|")


@dataclass(frozen=True)
class AutoCases:
    answerable: tuple[CalibrationCase, ...]
    must_refuse: tuple[CalibrationCase, ...]
    offtopic_dropped: tuple[str, ...]  # ids of bundled probes the corpus covers
    chunks_total: int
    # held out: scored after the choice, never used to make it (the report's honest check)
    held_answerable: tuple[CalibrationCase, ...] = ()
    held_must_refuse: tuple[CalibrationCase, ...] = ()

    @property
    def cases(self) -> list[CalibrationCase]:
        return [*self.answerable, *self.must_refuse]

    @property
    def held_cases(self) -> list[CalibrationCase]:
        return [*self.held_answerable, *self.held_must_refuse]


def split_held_out(cases: Sequence[CalibrationCase], share: float = 1 / 3, seed: int = 0
                   ) -> tuple[list[CalibrationCase], list[CalibrationCase]]:
    """(used, held out): a deterministic `share` of the cases, by a hash of their ids, is held out."""
    ranked = sorted(cases, key=lambda c: _rank(c.id, seed))
    cut = round(len(ranked) * share)
    held = {c.id for c in ranked[:cut]}
    return [c for c in cases if c.id not in held], [c for c in cases if c.id in held]


def _rank(key: str, seed: int) -> str:
    return hashlib.sha1(f"{seed}:{key}".encode("utf-8")).hexdigest()


def sample_chunks(chunks: Sequence[Any], *, seed: int = 0, limit: int | None = None) -> list[Any]:
    """A deterministic sample of chunks, sized to the corpus (a fifth, within [30, 150]) unless `limit`."""
    n = len(chunks)
    want = limit if limit is not None else max(_MIN_PROBES, min(_MAX_PROBES, round(n * _SHARE)))
    return sorted(chunks, key=lambda c: _rank(c.id, seed))[: min(n, want)]


def _heading(chunk: Any) -> str:
    section = (chunk.section or "").split(" > ")[-1].strip()
    return section if section and section != (chunk.title or "").strip() else ""


def _leading_content(text: str, lang: str) -> str:
    """The first sentence's first content words, in their own spelling (stop words left out)."""
    from vouched.text import normalize, split_sentences, stopwords

    stop = stopwords(lang)
    for sentence in split_sentences(text)[:3]:
        if _CODE.search(sentence):
            continue
        if lang in ("zh",):
            run = re.sub(r"[\s，。、；：！？]+", "", sentence)
            if len(run) >= 6:
                return run[:8]
            continue
        kept = [t for t in _TOKEN.findall(sentence) if normalize(t) not in stop and len(t) >= 3 and not t.isdigit()]
        if len(kept) >= 3:
            return " ".join(kept[:_WORDS_IN_PROBE])
    return ""


def probe_from_chunk(chunk: Any) -> str | None:
    """A question about `chunk` by the rules of its language, or None when none can be made."""
    from vouched.text import content_words

    heading_t, words_t = _TEMPLATES.get(chunk.lang, _TEMPLATES["en"])
    h = _heading(chunk)
    if h and 2 <= len(content_words(h, chunk.lang)) and len(h.split()) <= 10:
        return heading_t.format(x=h)
    x = _leading_content(chunk.text, chunk.lang)
    return words_t.format(x=x) if x else None


def corpus_probes(chunks: Sequence[Any], *, seed: int = 0, limit: int | None = None) -> list[CalibrationCase]:
    """Answerable probes: one question per sampled chunk (chunks with no usable text give none)."""
    usable = [c for c in chunks if not c.draft and len(c.text) >= 40]
    out = []
    for c in sample_chunks(usable, seed=seed, limit=limit):
        q = probe_from_chunk(c)
        if q:
            out.append(CalibrationCase(f"auto:{c.id}", q, "answerable", c.tenant))
    return out


def offtopic_set() -> list[dict]:
    """The bundled must-refuse questions: [{id, lang, question}], all ten languages."""
    text = resources.files("vouched.eval").joinpath("sets/offtopic.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def offtopic_probes(languages: Iterable[str], tenant: str | None = None) -> list[CalibrationCase]:
    langs = set(languages)
    return [CalibrationCase(r["id"], r["question"], "must_refuse", tenant) for r in offtopic_set() if r["lang"] in langs]


def _covered_by_corpus(store: Any, question: str, lang: str, tenant: str) -> bool:
    """True when one chunk holds every content term of `question` (≥ 2 terms): the corpus covers it."""
    from vouched.text import analyze
    from vouched.types import SearchFilters

    terms = sorted(set(analyze(question, lang)))
    if len(terms) < 2:
        return False
    hits = store.keyword_search(terms, SearchFilters(tenant=tenant), 5)
    if not hits:
        return False
    held = store.get_terms([i for i, _ in hits], tenant)
    return any(set(terms) <= set(t) for t in held.values())


def auto_cases(config: Any, engine: Any, *, seed: int = 0) -> AutoCases:
    """The two probe sets for a deployment: its corpus (chunked as ingest does) and the bundled set."""
    from vouched.ingest.corpus import load_corpus

    c = config
    load = load_corpus(list(c.corpus_paths), allowed_langs=tuple(c.languages), default_tenant=c.corpus.tenant,
                       max_chars=c.corpus.max_chunk_chars, overlap_sentences=c.corpus.overlap_sentences,
                       injection_mode=c.guard.injection.mode, max_file_bytes=c.corpus.max_file_bytes)
    chunks = list(load.chunks)
    if not chunks:
        raise CalibrationError("no chunk in corpus.paths: nothing to build probes from")
    # a corpus of several tenants (documents that name their own): each probe is asked in its
    # chunk's tenant, and the off-topic ones in turn in every tenant present
    tenants = sorted({ch.tenant for ch in chunks})
    answerable, held_answerable = split_held_out(corpus_probes(chunks, seed=seed), seed=seed)
    kept, dropped = [], []
    by_id = {r["id"]: r for r in offtopic_set()}
    for i, case in enumerate(offtopic_probes(c.languages)):
        case = dataclasses.replace(case, tenant=tenants[i % len(tenants)])
        if _covered_by_corpus(engine.store, case.question, by_id[case.id]["lang"], case.tenant):
            dropped.append(case.id)
        else:
            kept.append(case)
    kept, held_refuse = split_held_out(kept, seed=seed)
    return AutoCases(tuple(answerable), tuple(kept), tuple(dropped), len(chunks), tuple(held_answerable),
                     tuple(held_refuse))


def held_out_check(scored: Sequence[Any], threshold: float) -> dict[str, tuple[int, int]]:
    """On held-out scored cases: {"answerable": (kept, n), "must_refuse": (stopped, n)} at `threshold`
    (cases another layer takes first — L1, the records route — count as stopped / not scored)."""
    ans = [s for s in scored if s.case.label == "answerable" and s.evidence is not None]
    ref = [s for s in scored if s.case.label == "must_refuse"]
    stopped = sum(1 for s in ref if s.evidence is None or s.evidence < threshold)
    return {"answerable": (sum(1 for s in ans if s.evidence >= threshold), len(ans)), "must_refuse": (stopped, len(ref))}


def auto_calibrate_command(config_path: Path | None, max_answerable_loss: float = 0.05, write: bool = False,
                           plot_path: Path | None = None, *, console: Any = None) -> int:
    """`vouched calibrate --auto`: calibrate on probes from the corpus and the bundled off-topic set.

    Returns 0 when a threshold was found (written with `write`), 1 when none is safe within
    the allowed loss; errors raise (CalibrationError, StoreError …: the exit-code table).
    """
    from datetime import date

    from rich.console import Console

    from vouched.config import load_config
    from vouched.engine import Engine
    from vouched.eval.calibrate import calibrate, calibration_svg, print_calibration, write_threshold

    con = console or Console()
    if not 0.0 <= max_answerable_loss <= 1.0:
        raise CalibrationError(f"--max-answerable-loss is a share between 0 and 1 (0.05 = 5%), got {max_answerable_loss}")
    cfile = Path(config_path) if config_path else (Path("vouched.toml") if Path("vouched.toml").exists() else None)
    if cfile is not None and cfile.is_dir():
        cfile = cfile / "vouched.toml"
    if cfile is None or not cfile.exists():
        raise CalibrationError("no vouched.toml found: pass --config (or run `vouched init FOLDER`)")
    cfg = load_config(cfile)
    if cfg.missing_store():
        raise CalibrationError(f"no store at {cfg.store_path}: run `vouched ingest -c {cfile}` first")
    eng = Engine(cfg)
    auto = auto_cases(cfg, eng)
    if not auto.answerable or not auto.must_refuse:
        raise CalibrationError("automatic calibration found no answerable probe or no off-topic probe for the site's languages")
    con.print(f"automatic probes: {len(auto.answerable)} answerable (from {auto.chunks_total} chunks of the corpus), "
              f"{len(auto.must_refuse)} off-topic in {', '.join(cfg.languages)} "
              f"({len(auto.offtopic_dropped)} bundled ones dropped: the corpus covers them); held out for the check: "
              f"{len(auto.held_answerable)} answerable, {len(auto.held_must_refuse)} off-topic", highlight=False)
    cal = calibrate(eng, auto.cases, max_answerable_loss)
    print_calibration(cal, con)
    svg = Path(plot_path) if plot_path else cfg.store_path.parent / "calibration.svg"
    svg.parent.mkdir(parents=True, exist_ok=True)
    svg.write_text(calibration_svg(cal), encoding="utf-8")
    con.print(f"picture: {svg}", highlight=False)
    choice = cal.choice
    if choice.value is not None and auto.held_cases:
        check = held_out_check(calibrate(eng, auto.held_cases, max_answerable_loss).scored, choice.value)
        (kept, n_ans), (stopped, n_ref) = check["answerable"], check["must_refuse"]
        con.print(f"held-out check at {choice.value:.4f}: off-topic stopped {stopped}/{n_ref}"
                  f"{f' ({stopped / n_ref:.1%})' if n_ref else ''}, answerable probes kept {kept}/{n_ans}"
                  f"{f' ({kept / n_ans:.1%})' if n_ans else ''}", highlight=False, markup=False)
    if choice.value is None:
        if write:
            con.print(f"[bold red]not written:[/] {cfile} keeps threshold.value = {cfg.threshold.value}", highlight=False)
        return 1
    if write:
        ref = cal.scores("must_refuse")
        top = ref[-1] if ref else None
        lines = [f"Calibrated by `vouched calibrate --auto` on {date.today().isoformat()}: {choice.answerable_total} "
                 f"answerable probes from the corpus, {choice.refused_total} bundled off-topic questions (retrieval only).",
                 (f"Highest off-topic evidence {top.evidence:.4f} ({top.case.id}); " if top else "")
                 + f"answerable probes lost: {choice.answerable_lost} of {choice.answerable_total} "
                   f"(allowed {choice.max_loss:.1%}).",
                 "Probes written by rules are easier than readers' questions: a golden set "
                 "(`vouched calibrate golden.jsonl`) calibrates better."]
        try:
            write_threshold(cfile, choice.value, cal.embedding_model, cal.corpus_version or "", lines,
                            rare_cut=getattr(cal, "rare_cut", None))
        except (OSError, ValueError) as exc:
            raise CalibrationError(f"cannot write {cfile}: {exc}") from exc
        con.print(f"written: {cfile} [threshold] value = {choice.value!r}", highlight=False, markup=False)
    else:
        con.print("[dim]not written (pass --write to record it in the config)[/]")
    return 0
