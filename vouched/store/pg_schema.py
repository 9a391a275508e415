"""PostgreSQL store: its versioned schema and the pure text helpers its keyword index uses.

Kept apart from `vouched.store.postgres` so the migrations read as one list and the
tokenising functions can be tested without a server.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Sequence

# Append-only: a deployed database has applied a prefix of these; never edit one, add the next.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "initial", """
CREATE TABLE corpus_versions (
  id BIGSERIAL PRIMARY KEY, hash TEXT NOT NULL, created_at TEXT NOT NULL, note TEXT NOT NULL DEFAULT '',
  embedding_model TEXT NOT NULL DEFAULT '', dim INTEGER NOT NULL DEFAULT 0,
  chunk_count INTEGER NOT NULL DEFAULT 0, record_count INTEGER NOT NULL DEFAULT 0,
  total_terms BIGINT NOT NULL DEFAULT 0);
CREATE TABLE store_state (id BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (id), current_version BIGINT);
INSERT INTO store_state (id, current_version) VALUES (TRUE, NULL);
CREATE TABLE chunks (
  rowid BIGSERIAL PRIMARY KEY, version_id BIGINT NOT NULL, chunk_id TEXT NOT NULL, doc_id TEXT NOT NULL,
  text TEXT NOT NULL, title TEXT NOT NULL, section TEXT NOT NULL, overlap TEXT NOT NULL,
  doc_version TEXT NOT NULL, page INTEGER, position INTEGER NOT NULL, source TEXT NOT NULL, url TEXT,
  lang TEXT NOT NULL, tenant TEXT NOT NULL, updated_at DATE, effective_from DATE, effective_to DATE,
  supersedes TEXT, superseded_from DATE, authority INTEGER NOT NULL, draft BOOLEAN NOT NULL,
  flags JSONB NOT NULL, terms TEXT[] NOT NULL, lexemes TEXT[] NOT NULL, n_terms INTEGER NOT NULL,
  tsv TSVECTOR GENERATED ALWAYS AS (array_to_tsvector(lexemes)) STORED,
  vec vector);
CREATE UNIQUE INDEX chunks_id ON chunks (version_id, tenant, chunk_id);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE TABLE postings (version_id BIGINT NOT NULL, term TEXT NOT NULL, chunk_row BIGINT NOT NULL, tf INTEGER NOT NULL,
  PRIMARY KEY (version_id, term, chunk_row));
CREATE TABLE term_df (version_id BIGINT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL,
  PRIMARY KEY (version_id, term));
CREATE TABLE records (
  version_id BIGINT NOT NULL, record_id TEXT NOT NULL, tenant TEXT NOT NULL, body JSONB NOT NULL,
  PRIMARY KEY (version_id, tenant, record_id));
"""),
    (2, "inline vectors, impact-scored postings", """
ALTER TABLE chunks ALTER COLUMN vec SET STORAGE MAIN;
ALTER TABLE postings ADD COLUMN w DOUBLE PRECISION;
ALTER TABLE corpus_versions ADD COLUMN impact BOOLEAN NOT NULL DEFAULT FALSE;
DROP INDEX IF EXISTS chunks_tsv;
ALTER TABLE chunks DROP COLUMN IF EXISTS tsv;
"""),
    (3, "lexeme counts beside the lexemes", """
ALTER TABLE chunks ADD COLUMN lexeme_tf INTEGER[];
"""),
    (4, "half-precision HNSW graphs", """
ALTER TABLE corpus_versions ADD COLUMN ann_type TEXT NOT NULL DEFAULT 'vector';
"""),
    (5, "keyword index blobs", """
CREATE TABLE keyword_blobs (version_id BIGINT NOT NULL, name TEXT NOT NULL, part INTEGER NOT NULL, data BYTEA NOT NULL,
  PRIMARY KEY (version_id, name, part));
ALTER TABLE keyword_blobs ALTER COLUMN data SET STORAGE EXTERNAL;
"""),
    (6, "dense graph blobs", """
CREATE TABLE dense_blobs (version_id BIGINT NOT NULL, name TEXT NOT NULL, part INTEGER NOT NULL, data BYTEA NOT NULL,
  PRIMARY KEY (version_id, name, part));
ALTER TABLE dense_blobs ALTER COLUMN data SET STORAGE EXTERNAL;
"""),
)
# Migration 2. `vec` SET STORAGE MAIN: a 384-d vector is 1.5 kB, and a chunk row with its text
# passes the 2 kB TOAST threshold, so under the default (EXTERNAL) the vector went out of line
# and an exact scan read ~6 TOAST pages a row (61k buffer hits for 10k rows, 143 ms); MAIN keeps
# it in the row and moves the text out instead (rows written before stay as they were).
# `postings.w` is the BM25 term weight tf(k1+1)/(tf + k1(1-b+b dl/avgdl)), fixed when the version
# is written (its avgdl is), so keyword scoring reads postings alone; `corpus_versions.impact`
# says a version has it (older versions keep the query that joins chunks for dl). The tsvector
# column and its GIN index go: keyword candidates come from `postings` (a row matches a term
# exactly when it has a posting for it), so the GIN index only cost ingest time (~1/3 of COPY).
# Migration 3. `lexeme_tf[i]` counts `lexemes[i]` (the chunk's distinct lexemes, sorted) in the
# chunk, so the server derives a version's postings from its chunk rows (INSERT ... SELECT over
# unnest) instead of the writer sending one COPY row a posting (~50 a chunk). Nullable: rows
# written before have none and need none (their postings exist already).
# Migration 4. `corpus_versions.ann_type` names the type a version's HNSW graph is built on:
# 'vector' (float32, every version written before) or 'halfvec' (float16 copies of the vectors
# in the graph; the rows keep float32 and scores are computed from them). At 100k synthetic
# rows a halfvec graph answered in half the time at the same recall@100 (docs/scale-out.md).
# Migration 5. `keyword_blobs` holds each version's in-memory keyword index (vouched.store.pg_keyword:
# vocabulary, posting lists, weights, rowids), each array in parts of at most 256 MB, written in
# the version's transaction and read once per process. STORAGE EXTERNAL: the arrays do not
# compress (pglz would only cost CPU at write and read). Versions written before have no rows
# and keep the SQL keyword query.
# Migration 6. `dense_blobs` holds the HNSW graph of each version written with
# dense_graph = "process" (vouched.store.pg_dense: the faiss index serialised, the rowid of each
# label, each tenant's row count), written in the version's transaction and read once per
# process; such a version's `ann_type` is 'process' and it has no pgvector graph. Versions
# written before keep theirs.
SCHEMA_VERSION = MIGRATIONS[-1][0]

_LATIN_MARKS = range(0x300, 0x370)


def fts_tokens(term: str) -> list[str]:
    """An analysed term as FTS5's tokenizer cuts it (see `_fts_tokens`); memoised, as terms repeat (Zipf)."""
    return list(_fts_tokens_cached(term))


@functools.lru_cache(maxsize=1 << 18)
def _fts_tokens_cached(term: str) -> tuple[str, ...]:
    return tuple(_fts_tokens(term))


def _fts_tokens(term: str) -> list[str]:
    """An analysed term as FTS5's `unicode61 remove_diacritics 2` tokenizer (SQLiteStore) sees it.

    Split on characters outside letters, numbers, marks and private use; lower-cased; a
    Latin letter with diacritics becomes its base letter ("água" → "agua"), other scripts'
    marks are kept (Devanagari vowel signs, Arabic harakat, Cyrillic ё). Indexing these
    tokens makes both backends find the same candidates (tests/store/test_pg_schema.py
    checks this against FTS5 itself). Known difference: a term FTS5 splits in two ("3.5")
    is a phrase query there and any of its parts here.
    """
    out, cur = [], []
    for ch in term.lower():
        cat = unicodedata.category(ch)
        if not (cat[0] in "LNM" or cat == "Co"):
            if cur:
                out.append("".join(cur))
                cur = []
            continue
        if ord(ch) in _LATIN_MARKS:  # a combining diacritic is dropped, wherever it stands
            continue
        if ord(ch) >= 0xC0:
            d = unicodedata.normalize("NFD", ch)
            if len(d) > 1 and d[0] < "\u0250" and all(ord(x) in _LATIN_MARKS for x in d[1:]):
                ch = d[0]
        cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out  # (FTS5 also counts a token made of diacritics alone, as an empty one; we drop it)


def tsquery_any(terms: Sequence[str]) -> str:
    """A tsquery text matching any of the terms as exact lexemes (quoted: no parser, no stemming)."""
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)
