"""Benchmark datasets read from their published files, never copied into the project.

Two formats: BEIR (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) and XQuAD (SQuAD v1.1
JSON, one file per language, paragraphs aligned across languages by position). Each loader
returns a `BenchDataset` whose `checksum` covers the bytes of every file it read and the
way it turned them into chunks, so a cached store built from it is reused only when both
are unchanged.

Loaders fail loudly (`BenchInputError`) on anything inconsistent — a judged document
missing from the corpus, paragraphs that don't align — because a metric computed on
silently-dropped data is a wrong number that looks right.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from vouched.types import Chunk

# Bump when a loader changes how files become chunks or queries: stores cached under the
# old checksum must not be reused.
LOADER_VERSION = "1"


from vouched.errors import BenchInputError  # noqa: E402  (drawn in the one error tree; re-exported here)


Query = tuple[str, str, str]  # (query id, text, language)


@dataclass(frozen=True)
class BenchDataset:
    """A corpus, its queries and their relevance judgements, plus where they came from."""

    name: str
    chunks: tuple[Chunk, ...]
    queries: tuple[Query, ...]
    qrels: Mapping[str, Mapping[str, int]]
    checksum: str
    files: Mapping[str, str] = field(default_factory=dict)  # path relative to the dataset dir -> sha256

    @property
    def stats(self) -> dict[str, int]:
        """The input statistics a condition file pins (checked before any metric)."""
        return {
            "documents": len(self.chunks),
            "queries": len(self.queries),
            "qrels": sum(len(q) for q in self.qrels.values()),
        }


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _checksum(kind: str, params: str, files: Mapping[str, str]) -> str:
    h = hashlib.sha256(f"vouched-bench {kind} v{LOADER_VERSION} {params}\n".encode())
    for rel in sorted(files):
        h.update(f"{rel} {files[rel]}\n".encode())
    return h.hexdigest()


def _need(path: Path) -> Path:
    if not path.is_file():
        raise BenchInputError(f"{path} not found; --dataset must point at the dataset folder (see its README.md)")
    return path


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise BenchInputError(f"{path}:{n}: not JSON ({exc})") from exc
    return rows


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV: `query-id<TAB>corpus-id<TAB>score`, with or without the header line."""
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if not line.strip():
                continue
            if len(parts) != 3:
                raise BenchInputError(f"{path}:{n}: expected 3 tab-separated fields, got {len(parts)}")
            qid, doc_id, score = parts
            try:
                grade = int(score)
            except ValueError:
                if n == 1:  # the header line
                    continue
                raise BenchInputError(f"{path}:{n}: score {score!r} is not an integer") from None
            qrels.setdefault(qid, {})[doc_id] = grade
    return qrels


def load_beir(directory: Path, split: str = "test") -> BenchDataset:
    """A BEIR dataset, one chunk per document, only the queries judged in `split`.

    Chunks are built as `Chunk(id=_id, doc_id=_id, title=title, text=text)` and nothing
    else: the embedding cache is keyed by `chunk.embed_text`, and the SciFact cache was
    pre-filled with exactly this construction (5,183 abstracts, ~75 minutes to embed).
    """
    directory = Path(directory)
    corpus_p = _need(directory / "corpus.jsonl")
    queries_p = _need(directory / "queries.jsonl")
    qrels_p = _need(directory / "qrels" / f"{split}.tsv")
    files = {
        "corpus.jsonl": sha256_file(corpus_p),
        "queries.jsonl": sha256_file(queries_p),
        f"qrels/{split}.tsv": sha256_file(qrels_p),
    }
    chunks = tuple(
        Chunk(id=str(d["_id"]), doc_id=str(d["_id"]), title=d.get("title") or "", text=d.get("text") or "")
        for d in _read_jsonl(corpus_p)
    )
    doc_ids = {c.id for c in chunks}
    if len(doc_ids) != len(chunks):
        raise BenchInputError(f"{corpus_p}: duplicate document ids")
    qrels = read_qrels(qrels_p)
    texts = {str(q["_id"]): q.get("text") or "" for q in _read_jsonl(queries_p)}
    missing_q = sorted(set(qrels) - set(texts))
    if missing_q:
        raise BenchInputError(f"{qrels_p}: {len(missing_q)} query ids not in queries.jsonl, e.g. {missing_q[:3]}")
    missing_d = sorted({d for q in qrels.values() for d in q} - doc_ids)
    if missing_d:
        raise BenchInputError(f"{qrels_p}: {len(missing_d)} judged documents not in corpus.jsonl, e.g. {missing_d[:3]}")
    queries = tuple((qid, text, "en") for qid, text in texts.items() if qid in qrels)
    return BenchDataset(
        name=directory.name,
        chunks=chunks,
        queries=queries,
        qrels=qrels,
        checksum=_checksum("beir", f"split={split}", files),
        files=files,
    )


def xquad_doc_id(doc_lang: str, article_idx: int, para_idx: int) -> str:
    return f"{doc_lang}-{article_idx}-{para_idx}"


def _read_squad(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise BenchInputError(f"{path}: not a SQuAD-format JSON file ({exc})") from exc
    return data


def _check_aligned(q_articles: list[dict], d_articles: list[dict], q_path: Path, d_path: Path) -> None:
    """Paragraph (a, p) of one language must be the translation of (a, p) of the other.

    XQuAD keeps the same question ids, in the same order, in every language; so matching
    id lists per paragraph is a proof of alignment, and a mismatch means the files differ
    from the published ones.
    """
    if len(q_articles) != len(d_articles):
        raise BenchInputError(f"{q_path} has {len(q_articles)} articles, {d_path} has {len(d_articles)}")
    for a, (qa, da) in enumerate(zip(q_articles, d_articles)):
        if len(qa["paragraphs"]) != len(da["paragraphs"]):
            raise BenchInputError(f"article {a}: paragraph counts differ between {q_path.name} and {d_path.name}")
        for p, (qp, dp) in enumerate(zip(qa["paragraphs"], da["paragraphs"])):
            if [q["id"] for q in qp["qas"]] != [q["id"] for q in dp["qas"]]:
                raise BenchInputError(f"article {a} paragraph {p}: question ids differ between {q_path.name} and {d_path.name}")


def load_xquad(directory: Path, query_lang: str, doc_lang: str) -> BenchDataset:
    """XQuAD: `query_lang` questions over `doc_lang` paragraphs; each question's relevant
    document is its own paragraph, found in the other language by position.

    The article title is kept out of the indexed text (it goes to `source`): XQuAD titles
    are English Wikipedia page names in every language, so indexing them would put English
    words into Spanish paragraphs. A leading byte-order mark (two Spanish paragraphs have
    one) is stripped: it is file debris, not text.
    """
    directory = Path(directory)
    q_path = _need(directory / f"xquad.{query_lang}.json")
    d_path = _need(directory / f"xquad.{doc_lang}.json")
    files = {q_path.name: sha256_file(q_path), d_path.name: sha256_file(d_path)}
    q_articles = _read_squad(q_path)
    d_articles = q_articles if d_path == q_path else _read_squad(d_path)
    _check_aligned(q_articles, d_articles, q_path, d_path)
    chunks: list[Chunk] = []
    queries: list[Query] = []
    qrels: dict[str, dict[str, int]] = {}
    for a, (qa, da) in enumerate(zip(q_articles, d_articles)):
        for p, (qp, dp) in enumerate(zip(qa["paragraphs"], da["paragraphs"])):
            doc_id = xquad_doc_id(doc_lang, a, p)
            chunks.append(
                Chunk(
                    id=doc_id,
                    doc_id=doc_id,
                    text=dp["context"].lstrip("\ufeff").strip(),
                    lang=doc_lang,
                    source=f"xquad/{da.get('title', '')}",
                    position=p,
                )
            )
            for q in qp["qas"]:
                if q["id"] in qrels:
                    raise BenchInputError(f"{q_path}: question id {q['id']} appears twice")
                queries.append((q["id"], q["question"].strip(), query_lang))
                qrels[q["id"]] = {doc_id: 1}
    return BenchDataset(
        name=f"xquad-{query_lang}-{doc_lang}",
        chunks=tuple(chunks),
        queries=tuple(queries),
        qrels=qrels,
        checksum=_checksum("xquad", f"query_lang={query_lang} doc_lang={doc_lang}", files),
        files=files,
    )


def detect_format(directory: Path) -> str:
    """'beir' or 'xquad', from the files present; raises if neither."""
    directory = Path(directory)
    if not directory.is_dir():
        raise BenchInputError(f"dataset folder {directory} does not exist")
    if (directory / "corpus.jsonl").is_file() and (directory / "queries.jsonl").is_file():
        return "beir"
    if any(directory.glob("xquad.*.json")):
        return "xquad"
    raise BenchInputError(
        f"{directory} is neither a BEIR dataset (corpus.jsonl, queries.jsonl, qrels/) nor XQuAD (xquad.<lang>.json)"
    )


def load_dataset(directory: Path, loader: str, **params: str) -> BenchDataset:
    """Dispatch on a condition file's `dataset.loader` ('beir' or 'xquad')."""
    if loader == "beir":
        return load_beir(directory, split=params.get("split", "test"))
    if loader == "xquad":
        try:
            return load_xquad(directory, params["query_lang"], params["doc_lang"])
        except KeyError as exc:
            raise BenchInputError(f"the xquad loader needs {exc.args[0]} (e.g. query_lang: es, doc_lang: en)") from None
    raise BenchInputError(f"unknown dataset loader {loader!r}; use 'beir' or 'xquad'")


@dataclass(frozen=True)
class SquadQuestion:
    """One SQuAD 2.0 question: its paragraph, and either gold answers or `is_impossible`."""

    id: str
    question: str
    doc_id: str
    is_impossible: bool
    answers: tuple[str, ...] = ()  # gold spans (empty when impossible)
    plausible_answers: tuple[str, ...] = ()  # the distractor spans of an impossible question


@dataclass(frozen=True)
class Squad2:
    """SQuAD 2.0: one chunk per paragraph, and every question with its answerability."""

    dataset: BenchDataset
    questions: tuple[SquadQuestion, ...]


SQUAD2_FILE = "dev-v2.0.json"


def squad2_doc_id(article_idx: int, para_idx: int) -> str:
    return f"squad2-{article_idx}-{para_idx}"


def load_squad2(directory: Path, file: str = SQUAD2_FILE) -> Squad2:
    """SQuAD 2.0 (`dev-v2.0.json`): each paragraph is one document, titled by its article.

    Article titles are Wikipedia page names ("Southern_California"); underscores become
    spaces so the title reads as the document title a deployment would show and embed.
    Every question's relevant document is its own paragraph (`qrels`), answerable or not:
    SQuAD 2.0 wrote its impossible questions against that paragraph on purpose.
    """
    directory = Path(directory)
    path = _need(directory / file)
    files = {file: sha256_file(path)}
    chunks: list[Chunk] = []
    questions: list[SquadQuestion] = []
    qrels: dict[str, dict[str, int]] = {}
    for a, article in enumerate(_read_squad(path)):
        title = str(article.get("title", "")).replace("_", " ").strip()
        for p, para in enumerate(article.get("paragraphs", [])):
            doc_id = squad2_doc_id(a, p)
            chunks.append(Chunk(id=doc_id, doc_id=doc_id, title=title, text=para["context"].lstrip("\ufeff").strip(),
                                lang="en", source=f"squad2/{title}", position=p))
            for q in para.get("qas", []):
                if q["id"] in qrels:
                    raise BenchInputError(f"{path}: question id {q['id']} appears twice")
                impossible = bool(q.get("is_impossible", False))
                answers = tuple(dict.fromkeys(x["text"] for x in q.get("answers", []) if x.get("text")))
                if impossible == bool(answers):
                    raise BenchInputError(f"{path}: question {q['id']} is_impossible={impossible} but has "
                                          f"{len(answers)} answers; SQuAD 2.0 gives answers exactly to possible ones")
                plausible = tuple(dict.fromkeys(x["text"] for x in q.get("plausible_answers", []) if x.get("text")))
                questions.append(SquadQuestion(q["id"], q["question"].strip(), doc_id, impossible, answers, plausible))
                qrels[q["id"]] = {doc_id: 1}
    return Squad2(
        BenchDataset(
            name="squad2-dev",
            chunks=tuple(chunks),
            queries=tuple((q.id, q.question, "en") for q in questions),
            qrels=qrels,
            checksum=_checksum("squad2", f"file={file}", files),
            files=files,
        ),
        tuple(questions),
    )


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks (benchmark inputs are pinned by it)."""
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
