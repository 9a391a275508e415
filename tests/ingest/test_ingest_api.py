"""The public API of vouched.ingest is pinned: a change here is a deliberate one."""

import vouched.ingest


def test_public_api_is_pinned():
    assert sorted(vouched.ingest.__all__) == sorted([
        "RECORD_KINDS", "SUPPORTED_SUFFIXES", "Block", "CorpusLoad", "IngestReport", "LoadedDocument",
        "chunk_document", "is_records_file", "is_supported", "iter_files", "load_corpus", "load_document", "load_records",
    ])  # fmt: skip
    assert all(hasattr(vouched.ingest, name) for name in vouched.ingest.__all__)
