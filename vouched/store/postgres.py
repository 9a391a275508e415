"""The scale-out store: PostgreSQL + pgvector, the same semantics as `SQLiteStore`.

Layout (schema `vouched` by default, created by versioned migrations recorded in
`schema_migrations`): `chunks` holds every chunk of every live corpus version with its
metadata, its analysed keyword terms (`terms text[]`, repeats kept) and a pgvector `vec`;
`postings` holds each (term, chunk) count and `term_df` each version's document
frequencies, for BM25; `store_state` holds the `current` pointer. A version is written in ONE transaction that also moves the pointer
and drops versions beyond `keep_versions`, so readers always see exactly one complete
version and a killed ingest leaves the previous one serving.

Keyword search. The SQLite store indexes OUR analysed terms (vouched.text.analyze:
normalised, stop-worded, stemmed per language, Chinese as bigrams), and so does this one:
`postings` holds (term, chunk, tf, w) for the terms as FTS5's tokenizer cuts them
(`fts_tokens`: Latin diacritics folded, punctuation splits), so both backends match the same
chunks in every language; no PostgreSQL text parser or per-language config runs (they stem
differently from our Snowball + stop lists and know no Persian, Hindi or Chinese). Until
migration 2 the same lexemes also fed a tsvector + GIN index; postings alone decide a match,
so that index is gone (it cost a third of the COPY).

Scores. The retriever uses keyword scores for ORDER only (RRF takes ranks; the bounded L2
score is coverage from `get_terms`). We compute the same Okapi BM25 as FTS5's `bm25()`
(k1=1.2, b=0.75, idf floored at 1e-6, N and avgdl over the whole version), so both backends
rank keyword candidates alike. Since migration 2 each posting stores its dl-normalised weight
`w` (avgdl is fixed when a version is written), so a query sums idf x w over the query terms'
postings — written in (term, chunk) order, a few pages a term — and joins only its best
candidates to `chunks` for the filters, doubling the candidate count on a shortfall (exact:
see keyword_search). Before, every posting of every query term was joined to its chunk
(20 vs 1.4 ms at 10k chunks; docs/scale-out.md). Versions written before keep that query.
Since migration 5 that sum runs in this process instead (vouched.store.pg_keyword): the
version's posting lists, with the same weights, are stored in `keyword_blobs` when it is
written and loaded once per process; only the best candidates' rowids go to the server, which
applies the filters and the version gate. Versions written before keep the SQL sum.

Dense search: one HNSW index (cosine) per version — a partial index on `vec::vector(dim)`
WHERE version_id = v, because versions may differ in dimension — with pgvector's iterative
scan (strict order) so filters apply inside the index scan, before the LIMIT; ef_search is
set per connection. Versions of at most `exact_below` chunks are scanned exactly instead (the
top-k SQLite gives): on SciFact (5,183 chunks, E5 vectors) HNSW at ef_search=100 returned the
exact top-50 list for 40% of queries (recall@50 0.974), enough to move fused top-10s. Since
ef_search defaults to 200: at 100k synthetic chunks its dense recall@50 against exact
was 0.84 for 29 ms p50, against 0.79 / 24 ms at 100 and 0.90 / 56 ms at 400 (recall@10
0.9975, 0.9975, 1.0; load ~15). A query of `limit` results raises it to 4 x limit (at most
1000, `dense_ef_search`): the retriever fuses all 100 dense ranks, and the graph's recall at
100 is what moved fused top-10s away from exact search. Since migration 2 the vector stays in the heap row (STORAGE MAIN), so the exact scan reads the
table, not one TOAST lookup per row (10k rows: 2.5k instead of 61k buffers, 29 vs 143 ms).
Each search is one statement (psycopg prepares a statement run five times on a connection),
gated on the current version the store last read (`_gate`): a version another process replaced
returns nothing, and the store re-reads the pointer and runs again. ef_search is SET on a
connection only when a query needs another value than the one it holds.

Since migration 6 a new version's graph is, by default, not pgvector's: the writer builds a faiss
HNSW graph (float16 copies of the vectors) while it loads the rows, stores it in `dense_blobs`,
and each search process walks it in memory and sends the candidates' rowids to the server,
which filters them and scores them by their float32 vectors (vouched.store.pg_dense, plan
"graph"; `dense_graph = "server"` keeps pgvector's graph). A version of at most `exact_below`
chunks gets the float16 copies without a graph, scanned in process with the same exact list as
the server scan (`pg_dense.scan`, plan "exact"). What follows describes pgvector's graph, which
versions written before or with "server" keep.

Since migration 4 a new version's graph is built on `halfvec` (float16 copies of the vectors,
`hnsw_type`): half the pages to build and to walk — at 100k synthetic rows dense p50 18.5 vs
37.8 ms at ef_search 200, recall@100 0.728 vs 0.723 — while the rows keep float32 and the rows
found are scored and ordered by it. Versions written before keep their float32 graph.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections import Counter
from dataclasses import asdict
from datetime import date, datetime, timezone
from typing import Callable, Sequence

import numpy as np

from vouched.errors import StoreError
from vouched.store import pg_copy, pg_dense, pg_keyword
from vouched.store.ann import AnnParams
from vouched.store.base import (
    CorpusVersion, DocFreqCache, VersionBuffer, corpus_hash, keep_order, superseded_from, term_df, version_rollback_target,
)
from vouched.store.pg_schema import MIGRATIONS, SCHEMA_VERSION, _fts_tokens_cached, fts_tokens, tsquery_any  # noqa: F401 (tsquery_any: re-exported)
from vouched.store.rowfilter import FilterColumns
from vouched.text import analyze
from vouched.types import Chunk, DocFreq, Hits, Record, SearchFilters

BM25_K1 = 1.2  # FTS5's constants, so both backends rank keyword candidates alike
BM25_B = 0.75
DSN_ENV = "VOUCHED_PG_DSN"

_CHUNK_COLS = (
    "chunk_id, doc_id, text, title, section, overlap, doc_version, page, position, source, url, lang, tenant, "
    "updated_at, effective_from, effective_to, supersedes, authority, draft, flags"
)
_COPY_COLS = (
    "rowid, version_id, chunk_id, doc_id, text, title, section, overlap, doc_version, page, position, source, url, lang, "
    "tenant, updated_at, effective_from, effective_to, supersedes, superseded_from, authority, draft, flags, terms, "
    "lexemes, n_terms, lexeme_tf, vec"
)
_ANALYZE_COLS = ("rowid, version_id, chunk_id, doc_id, lang, tenant, effective_from, effective_to, superseded_from, "
                 "draft, authority")
_ROW_HEAD = pg_copy.row_head(len(_COPY_COLS.split(",")))
_DF_HEAD = pg_copy.row_head(3)
_BLOCK_ROWS = 500  # chunk rows a COPY write carries (and a progress step)


def _F8(x: float) -> str:
    """A float8 literal of exactly this double (a bare 0.75 is numeric in SQL, and numeric arithmetic rounds otherwise)."""
    return f"{float(x)!r}::float8"


def _vec_text(v: np.ndarray) -> str:
    return "[" + ",".join(map(repr, np.asarray(v, dtype=np.float32).tolist())) + "]"  # tolist: 5x faster than float(x) a value


def bm25_weight(tf: int, dl: int, avgdl: float) -> float:
    """The BM25 term weight of one posting, without idf: what FTS5's bm25() multiplies idf by."""
    return tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * dl / avgdl))


_CURRENT = "SELECT current_version FROM store_state"
KEYWORD_CANDIDATES = 4  # keyword search first scores postings alone, keeps limit x this, then filters; doubles on a shortfall


EF_PER_RESULT = 4  # the HNSW candidate list a dense query keeps: at least this many per result asked
EF_SEARCH_MAX = 1000  # pgvector's upper bound for hnsw.ef_search


def dense_ef_search(ef_search: int, limit: int) -> int:
    """hnsw.ef_search for a dense query of `limit` results: the configured floor, or EF_PER_RESULT x limit.

    The retriever asks for 100 dense candidates and RRF reads all their ranks, so the graph's
    recall at 100, not at 10, decides whether fused top-10s match exact search. With ef_search
    = limit the walk returns about the first 100 it can reach: at 30k synthetic chunks
    (benchmarks' corpus) dense recall@100 against exact was 0.73 at ef_search 200 and 0.87 at
    400, and hybrid top-10 agreement with SQLite-exact 0.971 / 0.986 (docs/scale-out.md).
    """
    return max(int(ef_search), min(EF_SEARCH_MAX, EF_PER_RESULT * int(limit)))


def _row_to_chunk(r: tuple) -> Chunk:
    (cid, doc_id, text, title, section, overlap, version, page, position, source, url, lang, tenant,
     updated_at, eff_from, eff_to, supersedes, authority, draft, flags) = r
    return Chunk(
        id=cid, doc_id=doc_id, text=text, title=title, section=section, overlap=overlap, version=version, page=page,
        position=position, source=source, url=url, lang=lang, tenant=tenant, updated_at=updated_at,
        effective_from=eff_from, effective_to=eff_to, supersedes=supersedes, authority=authority, draft=bool(draft),
        flags=tuple(flags),
    )


class PostgresStore:
    """Store in PostgreSQL + pgvector. Thread-safe (a connection pool); opens nothing until first used.

    dsn: a libpq connection string; the `VOUCHED_PG_DSN` environment variable overrides it.
    schema: the PostgreSQL schema holding vouched's tables (one database can serve several).
    exact_below: versions with at most this many chunks are searched exactly (a scan of a
    few MB is as fast as the graph and gives SQLite's exact top-k); above it, HNSW. A version
    with a process graph is scanned in process (its float16 copies; the best rows scored in
    float32 by the server, `pg_dense.scan`: the same top-k) unless `scan_in_process` is false,
    which keeps every exact search in the server (tests compare the two).
    `concurrent_reads`: the hybrid retriever runs the dense search on another connection
    while it does the keyword side (the server works on both at once).
    dense_graph: where new versions' HNSW graph lives — "process" (default: a faiss graph built
    by the writer, stored in `dense_blobs` and walked in each search process, vouched.store.pg_dense)
    or "server" (pgvector's graph in the database, of `hnsw_type`). Each version is searched by
    the graph it was written with. ann_params: the process graph's M, ef_construction, ef_search.
    """

    concurrent_reads = True

    def __init__(self, dsn: str = "", *, schema: str = "vouched", keep_versions: int = 2,
                 pool_size: int = 8, ef_search: int = 200, exact_below: int = 20_000,
                 maintenance_work_mem: str = "1GB", hnsw_type: str = "halfvec", dense_graph: str = "process",
                 ann_params: AnnParams = AnnParams(), scan_in_process: bool = True) -> None:
        self.dsn = os.environ.get(DSN_ENV) or dsn
        if not self.dsn:
            raise StoreError(f"[store] backend = \"postgres\" needs a dsn: set store.dsn in vouched.toml or {DSN_ENV}")
        if not schema.replace("_", "").isalnum() or not schema[0].isalpha():
            raise StoreError(f"store schema must be a plain identifier (letters, digits, _), got {schema!r}")
        self.schema = schema.lower()
        self.keep_versions = max(1, keep_versions)
        self.pool_size = pool_size
        self.ef_search = ef_search
        self.exact_below = exact_below
        import re

        if not re.fullmatch(r"\d+\s*(kB|MB|GB)", maintenance_work_mem):
            raise StoreError(f"maintenance_work_mem must look like '1GB' or '512MB', got {maintenance_work_mem!r}")
        self.maintenance_work_mem = maintenance_work_mem
        if hnsw_type not in ("halfvec", "vector"):
            raise StoreError(f"hnsw_type must be 'halfvec' or 'vector', got {hnsw_type!r}")
        self.hnsw_type = hnsw_type  # the type new versions' HNSW graphs are built on (migration 4)
        if dense_graph not in ("process", "server"):
            raise StoreError(f"dense_graph must be 'process' or 'server', got {dense_graph!r}")
        self.dense_graph = dense_graph  # migration 6: new versions get a graph walked in process ("process")
        self.ann_params = ann_params
        self.scan_in_process = scan_in_process
        self.on_index_progress: Callable[[int, int], None] | None = None  # (done, total) during the HNSW build
        self.on_write_phase: Callable[[str], None] | None = None  # called as each write phase ends (benchmarks: server CPU per phase)
        self._pool = None
        self._lock = threading.Lock()
        self._df_cache = DocFreqCache()
        self._meta: tuple[int, int, int, bool, int, str] | None = None  # the current version's _current_meta, as last read
        self._kw: tuple[int, pg_keyword.PgKeywordIndex | None] | None = None  # (version id, its index or None: no blobs)
        self._kw_lock = threading.Lock()
        self._graph: tuple[int, pg_dense.PgDenseGraph | None] | None = None  # (version id, its graph or None)
        self._cols: tuple[int, FilterColumns | None] | None = None  # (version id, its filter columns or None)
        self._graph_lock = threading.Lock()
        self._cols_lock = threading.Lock()  # apart: _dense_graph holds _graph_lock while it asks for the columns
        self._conn_ef: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # connection -> hnsw.ef_search set on it

    # -- connections and migrations -----------------------------------------------------------
    def _configure(self, conn) -> None:
        conn.execute(f"SET search_path TO {self.schema}, public")
        conn.execute("SET hnsw.iterative_scan = strict_order")
        # per connection, so a dense query needs no transaction of its own (SET LOCAL) unless it asks for more
        conn.execute(f"SET hnsw.ef_search = {int(self.ef_search)}")

    def _get_pool(self):
        if self._pool is not None:
            return self._pool
        with self._lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                pool = ConnectionPool(self.dsn, min_size=1, max_size=self.pool_size, open=False,
                                      kwargs={"autocommit": True}, configure=self._configure, name="vouched")
                try:
                    pool.open(wait=True, timeout=15)
                    with pool.connection() as conn:
                        self._migrate(conn)
                except Exception as exc:
                    pool.close()
                    if isinstance(exc, StoreError):
                        raise
                    raise StoreError(f"cannot use PostgreSQL at {self._where()}: {exc}. Start it, or fix store.dsn / {DSN_ENV}") from exc
                self._pool = pool
        return self._pool

    def _where(self) -> str:
        from psycopg.conninfo import conninfo_to_dict

        try:
            d = conninfo_to_dict(self.dsn)
            return f"{d.get('host', 'localhost')}:{d.get('port', 5432)}/{d.get('dbname', '')}"
        except Exception:
            return "the configured dsn"

    def _migrate(self, conn) -> None:
        """Apply the migrations this database lacks, under a lock so concurrent starts do it once."""
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('vouched-migrate'))")
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                         "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
            done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
            if done and max(done) > SCHEMA_VERSION:
                raise StoreError(f"schema {self.schema} is at migration {max(done)}, this vouched knows up to {SCHEMA_VERSION}: upgrade vouched")
            for version, name, sql in MIGRATIONS:
                if version not in done:
                    conn.execute(sql)
                    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name))

    def _conn(self):
        return self._get_pool().connection()

    def migrations(self) -> list[tuple[int, str]]:
        with self._conn() as conn:
            return [tuple(r) for r in conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")]

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    # -- versions -----------------------------------------------------------------------------
    def new_version(self, *, note: str = "", embedding_model: str = "", dim: int = 0,
                    progress: Callable[[int], None] | None = None, max_shrink: float | None = None) -> VersionBuffer:
        return VersionBuffer(self, note, embedding_model, dim, progress, max_shrink)

    def switch_to(self, version_id: int | None = None) -> CorpusVersion:
        """Point `current` at a kept version in one transaction (None: the newest older than current)."""
        with self._conn() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"vouched-write-{self.schema}",))
            target = version_rollback_target(self._versions(conn), self._current_id(conn), version_id)
            conn.execute("UPDATE store_state SET current_version = %s", (target.id,))
        self._meta = None
        return target

    def _current_id(self, conn=None) -> int | None:
        if conn is None:
            with self._conn() as c:
                return self._current_id(c)
        row = conn.execute("SELECT current_version FROM store_state").fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def current_version(self, conn=None) -> CorpusVersion | None:
        if conn is None:
            with self._conn() as c:
                return self.current_version(c)
        row = conn.execute(
            "SELECT v.id, v.hash, v.created_at, v.chunk_count, v.record_count, v.embedding_model, v.dim, v.note "
            "FROM corpus_versions v JOIN store_state s ON s.current_version = v.id").fetchone()
        return CorpusVersion(*row) if row else None

    def versions(self) -> list[CorpusVersion]:
        with self._conn() as conn:
            return self._versions(conn)

    @staticmethod
    def _versions(conn) -> list[CorpusVersion]:
        rows = conn.execute("SELECT id, hash, created_at, chunk_count, record_count, embedding_model, dim, note "
                            "FROM corpus_versions ORDER BY id").fetchall()
        return [CorpusVersion(*r) for r in rows]

    def _current_meta(self, conn) -> tuple[int, int, int, bool, int, str]:
        """(id, dim, chunk_count, impact, total_terms, ann_type) of the current version, in one round trip."""
        row = conn.execute("SELECT v.id, v.dim, v.chunk_count, v.impact, v.total_terms, v.ann_type FROM store_state s "
                           "JOIN corpus_versions v ON v.id = s.current_version").fetchone()
        if row is None:
            self._require_current(conn)  # raises the no-corpus error
        return int(row[0]), int(row[1]), int(row[2]), bool(row[3]), int(row[4]), str(row[5])

    def _cached_meta(self, conn) -> tuple[int, int, int, bool, int, str]:
        """_current_meta as last read (no round trip); a search using it gates its statement with `_gate`."""
        meta = self._meta
        if meta is None:
            meta = self._meta = self._current_meta(conn)
        return meta

    def _stale(self, conn, meta: tuple) -> tuple | None:
        """After a search found nothing: the fresh meta when the current version moved away from `meta`'s, else None.

        A search statement carries `_gate(vid)`, so it returns no row unless `vid` is still the
        current version in that statement's snapshot: never rows of a replaced version, and a
        pointer moved by another process (another replica's ingest) costs one round trip then,
        not one on every search.
        """
        fresh = self._meta = self._current_meta(conn)
        return fresh if fresh[0] != meta[0] else None

    @staticmethod
    def _gate(vid: int) -> str:
        return f" AND (SELECT current_version FROM store_state) = {int(vid)}"

    def _require_current(self, conn) -> int:
        vid = self._current_id(conn)
        if vid is None:
            raise StoreError(f"PostgreSQL schema {self.schema} at {self._where()} holds no corpus yet: run `vouched ingest` first")
        return vid

    def _write_version(self, w: VersionBuffer) -> CorpusVersion:
        """Write a version in one transaction, moving `current` to it and dropping versions past `keep_versions`.

        One pass over the chunks, streamed: each chunk is analysed, encoded in binary COPY format
        (vouched.store.pg_copy) and sent in blocks, so the server parses and indexes one block
        while this process analyses the next. Postings (one row per distinct term of a chunk) are
        then derived by the server from the rows' `lexemes` / `lexeme_tf` arrays, with their BM25
        weights, in (term, row) order; document frequencies go as one COPY. The dense graph: with
        `dense_graph = "process"` a thread builds it (faiss) from the first statement on, while
        the rows are analysed and loaded, and it is stored last; with "server" pgvector builds
        its graph last, over the loaded rows, in memory (`maintenance_work_mem`).
        """
        from psycopg.types.json import Jsonb

        chunks = w._chunks
        ids = [(c.tenant, c.id) for c in chunks]
        if len(set(ids)) != len(ids):
            seen: set = set()
            dup = next(i for i in ids if i in seen or seen.add(i))
            raise StoreError(f"duplicate chunk id {dup[1]!r} in tenant {dup[0]!r}")
        vectors = np.concatenate(w._vectors) if w._vectors else np.zeros((0, 0), dtype=np.float32)
        has_vec = vectors.shape[1] > 0 if vectors.ndim == 2 else False
        dim = int(vectors.shape[1]) if has_vec else 0
        sup = superseded_from(chunks)
        t_start = time.perf_counter()
        chash = corpus_hash(chunks, w._records)
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        vec_fields = pg_copy.vector_fields(vectors) if has_vec else None
        in_process = has_vec and self.dense_graph == "process"
        if not in_process:
            del vectors
        times: dict[str, float] = {"prepare_s": time.perf_counter() - t_start}
        self._phase_done("prepare")
        graph: pg_dense.Builder | None = None
        with self._conn() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"vouched-write-{self.schema}",))
            previous = self.current_version(conn)
            w.check_shrink(previous)
            vid = conn.execute(
                "INSERT INTO corpus_versions (hash, created_at, note, embedding_model, dim, chunk_count, record_count, total_terms, "
                "impact, ann_type) VALUES (%s,%s,%s,%s,%s,%s,%s,0,TRUE,%s) RETURNING id",
                (chash, created, w._note, w._model, dim, len(chunks), len(w._records), "process" if in_process else self.hnsw_type),
            ).fetchone()[0]
            t0 = time.perf_counter()
            rows = [r[0] for r in conn.execute("SELECT nextval('chunks_rowid_seq') FROM generate_series(1, %s)", (len(chunks),))]
            if in_process:  # the graph is built in a thread while the rows are analysed and loaded
                # a version this store would scan rather than walk gets the float16 copies without the graph
                graph = pg_dense.Builder(vectors, rows, lambda: pg_dense.columns(chunks, sup), self.ann_params,
                                         self.on_index_progress, flat=len(chunks) <= self.exact_below)
                del vectors
            fields, vec_fields = [vec_fields], None  # the method frees them once they are sent
            try:
                self._write_rows(conn, w, vid, rows, chunks, sup, fields, graph, dim, times)
            except BaseException:
                if graph is not None:
                    graph.cancel()
                raise
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO records (version_id, record_id, tenant, body) VALUES (%s,%s,%s,%s)",
                                [(vid, r.id, r.tenant, Jsonb(asdict(r))) for r in w._records])
            conn.execute("UPDATE store_state SET current_version = %s", (vid,))
            self._drop_old(conn, vid, previous.id if previous else None)
            t0 = time.perf_counter()
        times["commit_s"] = time.perf_counter() - t0
        self._meta = None
        self._phase_done("commit")
        t0 = time.perf_counter()
        with self._conn() as conn:  # fresh statistics, so the planner sees the new version's size
            # only the columns queries filter, join or order on: statistics of the texts, term
            # arrays and vectors (a btree-comparable type: sorted for MCVs) feed no plan
            conn.execute(f"ANALYZE chunks ({_ANALYZE_COLS})")
            conn.execute("ANALYZE term_df")
            conn.execute("ANALYZE postings")
        times["analyze_s"] = time.perf_counter() - t0
        self._phase_done("analyze")
        times["total_s"] = time.perf_counter() - t_start
        w.build_times.update({k: round(v, 3) for k, v in times.items()})
        if "hnsw_build_s" in times:
            w.build_times["ann_build_s"] = times["hnsw_build_s"]
        return self.current_version()  # type: ignore[return-value]

    def _write_rows(self, conn, w: VersionBuffer, vid: int, rows: list[int], chunks: Sequence, sup: dict,
                    fields: list, graph: "pg_dense.Builder | None", dim: int, times: dict) -> None:
        """The version's chunk rows (COPY), postings, document frequencies, keyword index and dense graph.

        `fields` holds the rows' encoded vectors (or None) as its one item, taken out here so
        they are freed as soon as the COPY has sent them."""
        t0 = time.perf_counter()
        vec_fields = fields.pop()
        text, day, int4 = pg_copy.text, pg_copy.day, pg_copy.int4
        df: Counter = Counter()
        kw = pg_keyword.IndexWriter()
        total_terms, analyse_s = 0, 0.0
        vid_f, null = pg_copy.int8(vid), pg_copy.NULL
        with conn.cursor().copy(f"COPY chunks ({_COPY_COLS}) FROM STDIN (FORMAT BINARY)") as cp:
            cp.write(pg_copy.SIGNATURE)
            block: list[bytes] = []
            for i, c in enumerate(chunks):
                ta = time.perf_counter()
                terms = analyze(c.embed_text, c.lang)
                lex = Counter(x for t in terms for x in _fts_tokens_cached(t))
                analyse_s += time.perf_counter() - ta
                uniq = sorted(lex)
                tf = [lex[t] for t in uniq]
                df.update(uniq)
                n_lex = sum(tf)
                total_terms += n_lex
                kw.add(uniq, tf, n_lex)
                block.append(b"".join((
                    _ROW_HEAD, pg_copy.int8(rows[i]), vid_f, text(c.id), text(c.doc_id), text(c.text), text(c.title),
                    text(c.section), text(c.overlap), text(c.version), int4(c.page), int4(c.position), text(c.source),
                    text(c.url), text(c.lang), text(c.tenant), day(c.updated_at), day(c.effective_from),
                    day(c.effective_to), text(c.supersedes), day(sup.get((c.tenant, c.doc_id))), int4(c.authority),
                    pg_copy.boolean(c.draft), pg_copy.jsonb(list(c.flags)), pg_copy.text_array(terms),
                    pg_copy.text_array(uniq), int4(n_lex), pg_copy.int4_array(tf),
                    vec_fields[i] if vec_fields is not None else null,
                )))
                if len(block) == _BLOCK_ROWS:
                    cp.write(b"".join(block))
                    block = []
                    if w._progress:
                        w._progress(_BLOCK_ROWS)
            cp.write(b"".join(block) + pg_copy.TRAILER)
        if w._progress and len(chunks) % _BLOCK_ROWS:
            w._progress(len(chunks) % _BLOCK_ROWS)
        del vec_fields
        times["analyse_s"] = analyse_s  # inside copy_chunks_s: the text analysis, overlapped with the server's work
        times["copy_chunks_s"] = time.perf_counter() - t0
        self._phase_done("copy_chunks")
        t0 = time.perf_counter()
        avgdl = max(total_terms, 1) / max(len(chunks), 1)  # as keyword_search's v.avgdl
        conn.execute("UPDATE corpus_versions SET total_terms = %s WHERE id = %s", (total_terms, vid))
        # the weight as bm25_weight computes it (same float8 operations in the same order);
        # in (term, row) order: one term's postings then sit on adjacent pages, and a keyword
        # query reads a few pages a term instead of one page a posting
        conn.execute(f"SET LOCAL work_mem = '{self.maintenance_work_mem}'")  # the sort in memory
        conn.execute(
            f"""INSERT INTO postings (version_id, term, chunk_row, tf, w)
                SELECT {int(vid)}, u.t, c.rowid, u.tf, u.tf * {_F8(BM25_K1 + 1)}
                       / (u.tf + {_F8(BM25_K1)} * ({_F8(1 - BM25_B)} + {_F8(BM25_B)} * c.n_terms / {_F8(avgdl)}))
                FROM chunks c CROSS JOIN LATERAL unnest(c.lexemes, c.lexeme_tf) AS u(t, tf)
                WHERE c.version_id = {int(vid)}
                ORDER BY u.t COLLATE "C", c.rowid""")
        with conn.cursor().copy("COPY term_df (version_id, term, df) FROM STDIN (FORMAT BINARY)") as cp:
            cp.write(pg_copy.SIGNATURE)
            out: list[bytes] = []
            for t, n in df.items():
                out.append(b"".join((_DF_HEAD, vid_f, text(t), int4(n))))
                if len(out) == 4 * _BLOCK_ROWS:
                    cp.write(b"".join(out))
                    out = []
            cp.write(b"".join(out) + pg_copy.TRAILER)
        times["copy_postings_s"] = time.perf_counter() - t0
        self._phase_done("copy_postings")
        t0 = time.perf_counter()
        pg_keyword.write(conn, vid, kw.build(rows, avgdl))  # the same weights as the postings above
        del kw
        times["keyword_index_build_s"] = time.perf_counter() - t0
        self._phase_done("keyword_index")
        if graph is not None:  # the process graph (built meanwhile), stored with the version
            t0 = time.perf_counter()
            built = graph.result()
            times["dense_graph_wait_s"] = time.perf_counter() - t0  # how long the write waited for the thread
            times["hnsw_build_s"] = graph.seconds
            pg_dense.write(conn, vid, built)
            del built
            times["dense_graph_write_s"] = time.perf_counter() - t0 - times["dense_graph_wait_s"]
            self._phase_done("hnsw_build")
        elif dim:
            t0 = time.perf_counter()
            # the graph built in memory is several times faster than one spilling to disk
            conn.execute(f"SET LOCAL maintenance_work_mem = '{self.maintenance_work_mem}'")
            with self._watch_index_build(conn):
                t = self.hnsw_type  # halfvec: a graph of float16 copies, half the pages to build and to walk
                conn.execute(f"CREATE INDEX chunks_v{vid}_hnsw ON chunks USING hnsw ((vec::{t}({dim})) {t}_cosine_ops) "
                             f"WHERE version_id = {int(vid)}")
            times["hnsw_build_s"] = time.perf_counter() - t0
            self._phase_done("hnsw_build")

    def _phase_done(self, name: str) -> None:
        if self.on_write_phase is not None:
            self.on_write_phase(name)

    def _watch_index_build(self, conn):
        """While the HNSW index builds, report (tuples done, total) to `on_index_progress` every half second.

        PostgreSQL publishes a build's progress in pg_stat_progress_create_index (pgvector fills
        tuples_done / tuples_total while it loads the graph); a second connection reads it.
        """
        import contextlib

        callback = self.on_index_progress
        if callback is None:
            return contextlib.nullcontext()
        pid = conn.info.backend_pid
        stop = threading.Event()

        def poll() -> None:
            import psycopg

            try:
                with psycopg.connect(self.dsn, autocommit=True) as watcher:
                    while not stop.wait(0.5):
                        row = watcher.execute("SELECT tuples_done, tuples_total FROM pg_stat_progress_create_index "
                                              "WHERE pid = %s", (pid,)).fetchone()
                        if row and row[1]:
                            callback(int(row[0]), int(row[1]))
            except Exception:  # progress is a courtesy: never fail the build for it
                return

        @contextlib.contextmanager
        def watching():
            t = threading.Thread(target=poll, name="vouched-index-progress", daemon=True)
            t.start()
            try:
                yield
            finally:
                stop.set()
                t.join(timeout=2)

        return watching()

    def _drop_old(self, conn, current: int, previous: int | None = None) -> None:
        old = keep_order([r[0] for r in conn.execute("SELECT id FROM corpus_versions WHERE id < %s", (current,))], previous)
        for vid in old[self.keep_versions - 1:]:
            conn.execute(f"DROP INDEX IF EXISTS chunks_v{int(vid)}_hnsw")
            for table in ("chunks", "postings", "term_df", "records", "keyword_blobs", "dense_blobs"):
                conn.execute(f"DELETE FROM {table} WHERE version_id = %s", (vid,))
            conn.execute("DELETE FROM corpus_versions WHERE id = %s", (vid,))

    # -- filters ------------------------------------------------------------------------------
    @staticmethod
    def _filter_sql(f: SearchFilters) -> tuple[str, list]:
        day = f.as_of or date.today()
        sql = " AND c.tenant = %s"
        args: list = [f.tenant]
        if not f.any_time:
            sql += (" AND (c.effective_from IS NULL OR c.effective_from <= %s)"
                    " AND (c.effective_to IS NULL OR c.effective_to >= %s) AND (c.superseded_from IS NULL OR c.superseded_from > %s)")
            args += [day, day, day]
        if not f.include_drafts:
            sql += " AND NOT c.draft"
        if f.langs is not None:
            sql += " AND c.lang = ANY(%s)" if f.langs else " AND FALSE"
            if f.langs:
                args.append(list(f.langs))
        return sql, args

    # -- search -------------------------------------------------------------------------------
    def keyword_search(self, terms: Sequence[str], filters: SearchFilters, limit: int) -> list[tuple[str, float]]:
        terms = [t for t in dict.fromkeys(terms) if t]
        if not terms or limit <= 0:
            return []
        terms = list(dict.fromkeys(x for t in terms for x in fts_tokens(t)))
        if not terms:
            with self._conn() as conn:
                self._require_current(conn)
            return []
        where, args = self._filter_sql(filters)
        with self._conn() as conn:
            meta = self._cached_meta(conn)
            while True:
                hits = self._keyword_in(conn, meta, terms, where, args, limit, filters)
                if hits or (meta := self._stale(conn, meta)) is None:
                    return hits

    def _keyword_in(self, conn, meta: tuple, terms: list[str], where: str, args: list, limit: int,
                    filters: SearchFilters) -> Hits:
        """keyword_search over the version `meta` names; nothing if that version is no longer current."""
        vid, _dim, n, impact, _total_terms, _ann = meta
        where = self._gate(vid) + where
        # plan "index" (the version's in-memory index, then filters), "impact" (postings alone,
        # then filters: versions written before migration 5) or "join" (before migration 2)
        if not impact:
            return pg_keyword.join_search(conn, vid, terms, where, args, limit)
        cand = max(limit * KEYWORD_CANDIDATES, 64)
        index = self._keyword_index(conn, vid)
        if index is not None:
            # a version written with a process graph has its filter columns: the filters then
            # apply in the index, and the server is sent exactly the rows to answer with
            cols = self._filter_columns(conn, vid) if _ann == "process" else None
            allowed = cols.allowed(filters).mask if cols is not None and len(cols) == len(index.rowids) else None
            return pg_keyword.index_search(conn, index, vid, terms, where, args, limit, cand, allowed)
        return pg_keyword.impact_search(conn, vid, n, terms, where, args, limit, cand, self._gate(vid))

    def _keyword_index(self, conn, vid: int) -> pg_keyword.PgKeywordIndex | None:
        """Version `vid`'s keyword index, loaded once per process (None: the version has none).

        One index is held, the last version asked for: a search on a version the pointer left
        finds nothing (its statement is gated) and re-reads, so the new version replaces it.
        """
        kw = self._kw
        if kw is None or kw[0] != vid:
            with self._kw_lock:
                kw = self._kw
                if kw is None or kw[0] != vid:
                    if self._current_id(conn) != vid:  # a search on a replaced version: never load it
                        return None  # (the gated SQL path finds nothing, and the caller re-reads)
                    self._kw = None  # the old index goes before the new one loads
                    kw = self._kw = (vid, pg_keyword.load(conn, vid))
        return kw[1]

    def dense_search(self, vector: np.ndarray, filters: SearchFilters, limit: int) -> list[tuple[str, float]]:
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        where, args = self._filter_sql(filters)
        with self._conn() as conn:
            meta = self._cached_meta(conn)
            if q.shape[0] != meta[1] and meta[1]:
                meta = self._meta = self._current_meta(conn)  # a new version may have another dimension
            while True:
                vid, dim, n, _impact, _terms, ann = meta
                if not dim or limit <= 0:
                    if (meta := self._stale(conn, meta)) is None:
                        return []
                    continue
                if q.shape[0] != dim:
                    raise StoreError(f"query vector has {q.shape[0]} dimensions, the corpus {dim}: re-ingest with this embedder")
                qtext = _vec_text(q)
                where_v = f"c.version_id = {vid} AND c.vec IS NOT NULL{self._gate(vid)}{where}"
                if ann == "process" and (n > self.exact_below or self.scan_in_process):
                    # the graph in this process finds the filtered candidates (a walk, or a scan of its
                    # float16 copies for a version of at most exact_below rows); the server scores them
                    graph = self._dense_graph(conn, vid, dim)
                    hits = (pg_dense.search(conn, graph, q, qtext, dim, where_v, args, limit, filters,
                                            exact=n <= self.exact_below, in_process=self.scan_in_process)
                            if graph else None)
                    if hits is not None:
                        if hits or (meta := self._stale(conn, meta)) is None:
                            return hits
                        continue
                if n <= self.exact_below or ann == "process":  # no cast: no index applies, an exact scan
                    plan = "exact"
                    sql = (f"SELECT c.chunk_id, 1 - (c.vec <=> %s::vector({dim})) AS s FROM chunks c WHERE {where_v} "
                           f"ORDER BY c.vec <=> %s::vector({dim}), c.rowid LIMIT %s")
                    params = [qtext, *args, qtext, limit]
                elif ann == "halfvec":
                    # the graph walks float16 copies; the rows found are scored and ordered by their float32 vectors
                    plan = "hnsw"
                    sql = (f"SELECT h.chunk_id, 1 - h.d FROM (SELECT c.chunk_id, c.rowid, c.vec <=> %s::vector({dim}) AS d "
                           f"FROM chunks c WHERE {where_v} ORDER BY c.vec::halfvec({dim}) <=> %s::halfvec({dim}), c.rowid "
                           f"LIMIT %s) h ORDER BY h.d, h.rowid")
                    params = [qtext, *args, qtext, limit]
                else:  # the cast matches the version's partial HNSW index (float32 graph, versions before migration 4)
                    plan = "hnsw"
                    sql = (f"SELECT c.chunk_id, 1 - (c.vec::vector({dim}) <=> %s::vector({dim})) AS s FROM chunks c "
                           f"WHERE {where_v} ORDER BY c.vec::vector({dim}) <=> %s::vector({dim}), c.rowid LIMIT %s")
                    params = [qtext, *args, qtext, limit]
                if plan == "hnsw":
                    self._set_ef_search(conn, dense_ef_search(self.ef_search, limit))
                rows = conn.execute(sql, params).fetchall()
                if rows or (meta := self._stale(conn, meta)) is None:
                    return Hits([(r[0], float(r[1])) for r in rows], plan)

    def _dense_graph(self, conn, vid: int, dim: int) -> pg_dense.PgDenseGraph | None:
        """Version `vid`'s process graph, loaded once per process (None: it has none; then exact scans).

        One graph is held, the last version asked for, as with the keyword index: a version the
        pointer left is never loaded (its gated statements find nothing and the caller re-reads).
        """
        g = self._graph
        if g is None or g[0] != vid:
            with self._graph_lock:
                g = self._graph
                if g is None or g[0] != vid:
                    cols = self._filter_columns(conn, vid)
                    if cols is None:
                        return None
                    self._graph = None  # the old graph goes before the new one loads
                    g = self._graph = (vid, pg_dense.load(conn, vid, dim, self.ann_params, cols))
        return g[1]

    def _filter_columns(self, conn, vid: int) -> FilterColumns | None:
        """Version `vid`'s filter columns (written with its process graph), loaded once per process;
        None when it has none or is no longer current (never loaded then)."""
        c = self._cols
        if c is None or c[0] != vid:
            with self._cols_lock:
                c = self._cols
                if c is None or c[0] != vid:
                    if self._current_id(conn) != vid:
                        return None
                    self._cols = None
                    c = self._cols = (vid, pg_dense.load_columns(conn, vid))
        return c[1]

    def _set_ef_search(self, conn, ef: int) -> None:
        """hnsw.ef_search on this connection, set (one round trip) only when it differs from the last one set on it.

        A session-level SET on an autocommit connection lasts as long as the connection; the
        retriever asks the same limit every time, so after a connection's first dense query
        none is sent. (Before: BEGIN, SET LOCAL, the query, COMMIT: four round trips a query.)
        """
        if self._conn_ef.get(conn, self.ef_search) != ef:
            conn.execute(f"SET hnsw.ef_search = {int(ef)}")
            self._conn_ef[conn] = ef

    def score_dense(self, vector: np.ndarray, ids: Sequence[str], tenant: str = "default") -> dict[str, float]:
        if not ids:
            return {}
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT chunk_id, 1 - (vec <=> %s::vector) FROM chunks WHERE version_id = ({_CURRENT}) AND tenant = %s "
                "AND chunk_id = ANY(%s) AND vec IS NOT NULL", [_vec_text(q), tenant, list(ids)],
            ).fetchall()
            if not rows:
                self._require_current(conn)
        return {r[0]: float(r[1]) for r in rows}

    # -- reads --------------------------------------------------------------------------------
    def _in_current(self, cols: str, ids: Sequence[str], tenant: str) -> list[tuple]:
        with self._conn() as conn:
            if not ids:
                self._require_current(conn)
                return []
            # the current version read in the same statement: one round trip, and never a mix of two versions
            rows = conn.execute(f"SELECT {cols} FROM chunks WHERE version_id = ({_CURRENT}) AND tenant = %s AND chunk_id = ANY(%s)",
                                [tenant, list(ids)]).fetchall()
            if not rows:
                self._require_current(conn)
            return rows

    def get_chunks(self, ids: Sequence[str], tenant: str = "default") -> dict[str, Chunk]:
        return {r[0]: _row_to_chunk(r) for r in self._in_current(_CHUNK_COLS, ids, tenant)}

    def get_terms(self, ids: Sequence[str], tenant: str = "default") -> dict[str, frozenset[str]]:
        return {r[0]: frozenset(r[1]) for r in self._in_current("chunk_id, terms", ids, tenant)}

    def doc_freq(self, terms: Sequence[str]) -> DocFreq:
        """From `term_df` (written with the version), cached per version."""
        with self._conn() as conn:  # the current version and its size in one round trip
            row = conn.execute("SELECT v.id, v.chunk_count FROM store_state s JOIN corpus_versions v ON v.id = s.current_version").fetchone()
            if row is None:
                return DocFreq(0, {})
            vid, n = row

        def fetch(want: list[str]) -> dict[str, int]:
            toks = sorted({x for t in want for x in fts_tokens(t)})
            with self._conn() as conn:
                tok_df = dict(conn.execute("SELECT term, df FROM term_df WHERE version_id = %s AND term = ANY(%s)",
                                           (vid, toks)).fetchall())
            return {t: term_df(t, tok_df, fts_tokens) for t in want}

        return self._df_cache.lookup(vid, int(n), terms, fetch)

    def records(self, tenant: str = "default") -> list[Record]:
        with self._conn() as conn:
            vid = self._current_id(conn)
            if vid is None:
                return []
            rows = conn.execute('SELECT body FROM records WHERE version_id = %s AND tenant = %s ORDER BY record_id COLLATE "C"',
                                (vid, tenant)).fetchall()
        return [Record(**r[0]) for r in rows]
