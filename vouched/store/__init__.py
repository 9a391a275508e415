"""Stores: the `Store` protocol and its embedded SQLite implementation."""

from vouched.store.base import CorpusVersion, Store, VersionWriter
from vouched.store.sqlite import SQLiteStore

__all__ = ["CorpusVersion", "SQLiteStore", "Store", "VersionWriter"]
