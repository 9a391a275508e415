"""The SQLite store's schema: its tables, the FTS5 tokenizer, the chunk columns and row conversions.

The store itself is vouched.store.sqlite.SQLiteStore.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date

from vouched.store.rowfilter import NO_DATE_HI, NO_DATE_LO
from vouched.types import Chunk

SCHEMA_VERSION = 1
FTS_TOKENIZE = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
_NO_DATE_LO, _NO_DATE_HI = NO_DATE_LO, NO_DATE_HI  # the filter columns' open dates (vouched.store.rowfilter)
DEFAULT_ANN_MIN_CHUNKS = 50_000
DEFAULT_KEYWORD_INDEX_MIN_CHUNKS = 50_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS corpus_versions (
  id INTEGER PRIMARY KEY, hash TEXT NOT NULL, created_at TEXT NOT NULL, note TEXT NOT NULL DEFAULT '',
  embedding_model TEXT NOT NULL DEFAULT '', dim INTEGER NOT NULL DEFAULT 0,
  chunk_count INTEGER NOT NULL DEFAULT 0, record_count INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS chunks (
  rowid INTEGER PRIMARY KEY, version_id INTEGER NOT NULL, chunk_id TEXT NOT NULL, doc_id TEXT NOT NULL,
  text TEXT NOT NULL, title TEXT NOT NULL, section TEXT NOT NULL, overlap TEXT NOT NULL,
  doc_version TEXT NOT NULL, page INTEGER, position INTEGER NOT NULL, source TEXT NOT NULL, url TEXT,
  lang TEXT NOT NULL, tenant TEXT NOT NULL, updated_at TEXT, effective_from TEXT, effective_to TEXT,
  supersedes TEXT, superseded_from TEXT, authority INTEGER NOT NULL, draft INTEGER NOT NULL,
  flags TEXT NOT NULL, terms TEXT NOT NULL, vec BLOB);
CREATE UNIQUE INDEX IF NOT EXISTS chunks_id ON chunks (version_id, tenant, chunk_id);
CREATE TABLE IF NOT EXISTS records (
  version_id INTEGER NOT NULL, record_id TEXT NOT NULL, tenant TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (version_id, tenant, record_id));
"""

_CHUNK_COLS = (
    "chunk_id, doc_id, text, title, section, overlap, doc_version, page, position, source, url, lang, tenant, "
    "updated_at, effective_from, effective_to, supersedes, authority, draft, flags"
)


_INSERT_CHUNK = (
    "INSERT INTO chunks (version_id, chunk_id, doc_id, text, title, section, overlap, doc_version, page, position, "
    "source, url, lang, tenant, updated_at, effective_from, effective_to, supersedes, superseded_from, authority, "
    "draft, flags, terms, vec) VALUES (" + ",".join("?" * 24) + ")"
)


def _iso(d: date | None) -> str | None:
    return d.isoformat() if d else None


def _date(s: str | None) -> date | None:
    return date.fromisoformat(s) if s else None


def _row_to_chunk(r: sqlite3.Row) -> Chunk:
    return Chunk(
        id=r["chunk_id"], doc_id=r["doc_id"], text=r["text"], title=r["title"], section=r["section"],
        overlap=r["overlap"], version=r["doc_version"], page=r["page"], position=r["position"],
        source=r["source"], url=r["url"], lang=r["lang"], tenant=r["tenant"], updated_at=_date(r["updated_at"]),
        effective_from=_date(r["effective_from"]), effective_to=_date(r["effective_to"]),
        supersedes=r["supersedes"], authority=r["authority"], draft=bool(r["draft"]), flags=tuple(json.loads(r["flags"])),
    )
