"""Ingestion: load sources (Markdown, HTML, text, PDF), cut them into chunks, read records.

    load_corpus(paths, allowed_langs=...)  → CorpusLoad(chunks, records, report)
      ├─ iter_files(paths)                  the files it will visit, in order
      ├─ load_document(path)                one file → LoadedDocument (blocks + fields)
      ├─ chunk_document(doc)                LoadedDocument → [Chunk]
      └─ load_records(path)                 records.yaml / *.records.yaml → [Record]

Parsers are imported when a file of their kind is first loaded, never at import time.
"""

from vouched.ingest.chunker import chunk_document
from vouched.ingest.corpus import CorpusLoad, IngestReport, iter_files, load_corpus
from vouched.ingest.loaders import SUPPORTED_SUFFIXES, Block, LoadedDocument, is_supported, load_document
from vouched.ingest.records import RECORD_KINDS, is_records_file, load_records

__all__ = [
    "RECORD_KINDS",
    "SUPPORTED_SUFFIXES",
    "Block",
    "CorpusLoad",
    "IngestReport",
    "LoadedDocument",
    "chunk_document",
    "is_records_file",
    "is_supported",
    "iter_files",
    "load_corpus",
    "load_document",
    "load_records",
]
