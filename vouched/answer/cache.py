"""The semantic answer cache: a gate-passed answer, reused for the same question asked again.

Only answers that passed the gate whole are stored (outcome ``answered``: no sentence held,
nothing truncated, no notice). An entry is keyed by

    (tenant, language, corpus version, embedding model, the question's values)

and matched by the cosine of the question embeddings (≥ ``threshold``, 0.95 by default).
The *values* of a question — its numbers, dates, URLs and e-mails in canonical form
(``vouched.guard.values``) — must be equal: "refunds after 14 days?" and "refunds after 30
days?" embed almost identically, yet must never share an answer.

A new corpus version invalidates: an entry of another version never matches, and the
entries of versions seen before it are deleted when a lookup first sees it, on every
write, and by ``prune`` (call it when the store switches version). The cache is bounded:
past ``max_entries`` the entries least recently used (written or hit) are evicted.

Storage is one SQLite file (default ``.vouched/answer_cache.sqlite`` beside the store):
embeddings as float32 blobs, cosine computed with numpy over the entries of one key. One
connection behind a lock makes it safe to share between the service's threads; WAL and a
busy timeout let several processes share the file.

Wiring (the pipeline does it, not this module): L1 always runs first; a follow-up with a
previous turn and an ``as_of`` question bypass the cache; the lookup goes after L2, the
write after a ``done`` event with outcome ``answered`` (see ``cacheable``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from vouched.answer.events import CitedSource, DoneEvent, Event, NoticeEvent, RefusalEvent, SentenceEvent
from vouched.spend.metrics import CacheMetrics

__all__ = ["CachedAnswer", "SemanticCache", "cacheable", "question_values"]

_MEMO_KEYS = 256  # keys whose vectors are held in memory between lookups

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
  id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, lang TEXT NOT NULL, corpus_version TEXT NOT NULL,
  model TEXT NOT NULL, qvalues TEXT NOT NULL, question TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL,
  sentences TEXT NOT NULL, sources TEXT NOT NULL, created_at REAL NOT NULL, last_used INTEGER NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS answers_key ON answers (tenant, lang, corpus_version, model, qvalues, dim);
CREATE INDEX IF NOT EXISTS answers_lru ON answers (last_used);
CREATE INDEX IF NOT EXISTS answers_version ON answers (corpus_version);
CREATE TABLE IF NOT EXISTS versions (corpus_version TEXT PRIMARY KEY, seen INTEGER NOT NULL);
"""


@dataclass(frozen=True)
class CachedAnswer:
    """A stored answer: its released sentences and the sources they cited, as first streamed."""

    sentences: tuple[SentenceEvent, ...]
    sources: tuple[CitedSource, ...]
    question: str  # the question that was answered (not the one being asked now)
    similarity: float
    entry_id: int


def question_values(question: str) -> str:
    """The canonical values of a question, sorted: equal for questions that ask the same figures."""
    from vouched.guard.values import value_spans

    return " ".join(sorted({canonical for _, _, canonical in value_spans(question)}))


def cacheable(events: Iterable[Event]) -> tuple[tuple[SentenceEvent, ...], tuple[CitedSource, ...]] | None:
    """(sentences, cited sources) of a stream that passed the gate whole; None otherwise.

    Whole means: a ``done`` with outcome ``answered``, at least one sentence, no notice and
    no refusal anywhere in the stream.
    """
    sentences: list[SentenceEvent] = []
    done: DoneEvent | None = None
    for e in events:
        if isinstance(e, (NoticeEvent, RefusalEvent)):
            return None
        if isinstance(e, SentenceEvent):
            sentences.append(e)
        elif isinstance(e, DoneEvent):
            done = e
    if done is None or done.outcome != "answered" or not sentences:
        return None
    return tuple(sentences), done.sources


@contextmanager
def _write(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken up front (no read-to-write upgrade that could fail busy)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _unit(vector: np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(v))
    if not np.isfinite(norm) or norm == 0.0:
        raise ValueError("a question embedding must be a finite, non-zero vector")
    return v / norm


class SemanticCache:
    def __init__(self, path: str | Path, *, threshold: float = 0.95, max_entries: int = 10_000,
                 metrics: CacheMetrics | None = None) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.path = Path(path)
        self.threshold = threshold
        self.max_entries = max_entries
        self.metrics = metrics or CacheMetrics()
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._version_seen: str | None = None
        # Per key: the entry ids and their unit vectors as one float32 matrix. Checked against
        # the ids in the file on every lookup (an index-only query), so another process's
        # writes and evictions are seen; only new rows' vectors are read.
        self._matrices: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    @classmethod
    def from_config(cls, config, metrics: CacheMetrics | None = None) -> "SemanticCache":
        c = config.cache
        return cls(config.resolve(c.path), threshold=c.threshold, max_entries=c.max_entries, metrics=metrics)

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # a cache: losing the last writes on power loss is fine
            conn.executescript(_SCHEMA)
            self._conn = conn
        return self._conn

    def _invalidate(self, db: sqlite3.Connection, corpus_version: str) -> None:
        """Delete the entries of every corpus version first seen before this one.

        Versions are ordered by when the cache first saw them, not by name (they are hashes):
        a replica still serving the previous version while another has switched deletes
        nothing of the newer one, and the newer one deletes the older one's entries.
        """
        db.execute("INSERT OR IGNORE INTO versions VALUES (?, (SELECT COALESCE(MAX(seen), 0) + 1 FROM versions))",
                   (corpus_version,))
        db.execute("DELETE FROM answers WHERE corpus_version IN (SELECT corpus_version FROM versions "
                   "WHERE seen < (SELECT seen FROM versions WHERE corpus_version = ?))", (corpus_version,))
        self._version_seen = corpus_version
        self._matrices = {k: v for k, v in self._matrices.items() if k[2] == corpus_version}

    # -- read ------------------------------------------------------------------------------
    def lookup(self, vector: np.ndarray, *, question: str, tenant: str, lang: str, corpus_version: str,
               model: str = "") -> CachedAnswer | None:
        """The stored answer whose question is closest (cosine ≥ threshold) under the same key."""
        q = _unit(vector)
        key = (tenant, lang, corpus_version, model, question_values(question), int(q.shape[0]))
        with self._lock:
            db = self._db()
            if corpus_version != self._version_seen:
                with _write(db):
                    self._invalidate(db, corpus_version)
            ids, matrix = self._matrix(db, key)  # reads only: no write lock while searching
            row = None
            if len(ids):
                sims = matrix @ q
                i = int(np.argmax(sims))
                if float(sims[i]) >= self.threshold:
                    entry_id, sim = int(ids[i]), float(sims[i])
                    with _write(db):
                        db.execute("UPDATE answers SET last_used=(SELECT COALESCE(MAX(last_used), 0) + 1 FROM answers), "
                                   "hits=hits + 1 WHERE id=?", (entry_id,))
                        # None when another process evicted the entry since it was read.
                        row = db.execute("SELECT question, sentences, sources FROM answers WHERE id=?",
                                         (entry_id,)).fetchone()
        if row is None:
            self.metrics.misses.inc()
            return None
        question_was, sentences, sources = row
        self.metrics.hits.inc()
        return CachedAnswer(
            sentences=tuple(SentenceEvent(text=s["text"], sources=tuple(s["sources"])) for s in json.loads(sentences)),
            sources=tuple(CitedSource(**s) for s in json.loads(sources)),
            question=question_was, similarity=sim, entry_id=entry_id,
        )

    def _matrix(self, db: sqlite3.Connection, key: tuple) -> tuple[np.ndarray, np.ndarray]:
        """The key's entry ids (ascending) and vectors, reading only vectors not held yet."""
        where = "tenant=? AND lang=? AND corpus_version=? AND model=? AND qvalues=? AND dim=?"
        ids = np.fromiter((r[0] for r in db.execute(f"SELECT id FROM answers WHERE {where} ORDER BY id", key)),
                          dtype=np.int64)
        held_ids, held = self._matrices.get(key, (np.empty(0, np.int64), np.empty((0, key[-1]), np.float32)))
        if np.array_equal(ids, held_ids):
            self._matrices[key] = self._matrices.pop(key, (held_ids, held))  # most recently used last
            return held_ids, held
        keep = np.isin(held_ids, ids)
        new = ids[~np.isin(ids, held_ids)]
        parts_ids, parts = [held_ids[keep]], [held[keep]]
        for start in range(0, len(new), 500):
            chunk = [int(i) for i in new[start:start + 500]]
            rows = db.execute(f"SELECT id, vec FROM answers WHERE id IN ({','.join('?' * len(chunk))})", chunk).fetchall()
            parts_ids.append(np.array([r[0] for r in rows], dtype=np.int64))
            parts.append(np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), key[-1]))
        all_ids = np.concatenate(parts_ids)
        order = np.argsort(all_ids, kind="stable")
        result = (all_ids[order], np.concatenate(parts)[order])
        self._matrices.pop(key, None)
        if len(all_ids):
            self._matrices[key] = result
            while len(self._matrices) > _MEMO_KEYS:  # forget the least recently used keys
                self._matrices.pop(next(iter(self._matrices)))
        return result

    # -- write -----------------------------------------------------------------------------
    def put(self, vector: np.ndarray, *, question: str, tenant: str, lang: str, corpus_version: str,
            sentences: Sequence[SentenceEvent], sources: Sequence[CitedSource], model: str = "") -> int:
        """Store a gate-passed answer (see `cacheable`); returns its entry id. Evicts past max_entries."""
        if not sentences:
            raise ValueError("only an answer with released sentences is cached")
        q = _unit(vector)
        body = json.dumps([{"text": s.text, "sources": list(s.sources)} for s in sentences], ensure_ascii=False)
        cited = json.dumps([asdict(s) for s in sources], ensure_ascii=False)
        with self._lock:
            db = self._db()
            with _write(db):
                self._invalidate(db, corpus_version)
                cur = db.execute(
                    "INSERT INTO answers (tenant, lang, corpus_version, model, qvalues, question, dim, vec, sentences, "
                    "sources, created_at, last_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "(SELECT COALESCE(MAX(last_used), 0) + 1 FROM answers))",
                    (tenant, lang, corpus_version, model, question_values(question), question, int(q.shape[0]),
                     q.tobytes(), body, cited, time.time()))
                entry_id = int(cur.lastrowid)
                over = db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] - self.max_entries
                if over > 0:
                    db.execute("DELETE FROM answers WHERE id IN (SELECT id FROM answers ORDER BY last_used LIMIT ?)",
                               (over,))
        return entry_id

    # -- upkeep ----------------------------------------------------------------------------
    def prune(self, corpus_version: str) -> int:
        """Make `corpus_version` the newest and delete every other version's entries; returns how many went.

        For the moment a store switches versions (or a service starts): it also undoes a
        rollback's ordering, when an earlier version is served again.
        """
        with self._lock:
            db = self._db()
            with _write(db):
                db.execute("INSERT OR REPLACE INTO versions VALUES (?, (SELECT COALESCE(MAX(seen), 0) + 1 FROM versions))",
                           (corpus_version,))
                n = db.execute("DELETE FROM answers WHERE corpus_version != ?", (corpus_version,)).rowcount
            self._version_seen = corpus_version
            self._matrices = {k: v for k, v in self._matrices.items() if k[2] == corpus_version}
        return n

    def __len__(self) -> int:
        with self._lock:
            return int(self._db().execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
