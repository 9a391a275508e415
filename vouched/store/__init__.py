"""Stores: the `Store` protocol, the embedded SQLite store and the PostgreSQL + pgvector one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vouched.store.ann import AnnParams
from vouched.store.base import CorpusVersion, Store, VersionWriter
from vouched.store.sqlite import SQLiteStore

if TYPE_CHECKING:
    from vouched.config import Config
    from vouched.store.postgres import PostgresStore

__all__ = ["CorpusVersion", "PostgresStore", "SQLiteStore", "Store", "VersionWriter", "make_store"]


def make_store(config: "Config") -> Store:
    """The store `[store]` names. Opens nothing: both backends connect on first use."""
    s = config.store
    if s.backend == "postgres":
        from vouched.store.postgres import PostgresStore

        return PostgresStore(s.dsn, schema=s.pg_schema, keep_versions=s.keep_versions, pool_size=s.pool_size,
                             dense_graph=s.pg_dense_graph, ann_params=AnnParams(ef_search=s.ann_ef_search))
    return SQLiteStore(config.store_path, keep_versions=s.keep_versions, ann_min_chunks=s.ann_min_chunks,
                       ann_params=AnnParams(ef_search=s.ann_ef_search),
                       keyword_index_min_chunks=s.keyword_index_min_chunks)


def __getattr__(name: str):
    if name == "PostgresStore":  # psycopg is an optional extra: imported only when asked for
        from vouched.store.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(name)
