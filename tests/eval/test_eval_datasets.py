"""Dataset loaders on fixture files, and a smoke test on the real shared files."""

from __future__ import annotations


import json

import pytest

from vouched.eval.datasets import (
    BenchInputError,
    detect_format,
    load_beir,
    load_dataset,
    load_xquad,
    read_qrels,
    sha256_file,
)
from vouched.types import Chunk
from tests.helpers import SHARED, needs_shared




def test_beir_chunks_are_built_exactly_as_the_cache_was_filled(beir_dir, data):
    ds = load_beir(beir_dir)
    d = data.BEIR_DOCS[0]
    assert ds.chunks[0] == Chunk(id=d["_id"], doc_id=d["_id"], title=d["title"], text=d["text"])
    assert ds.chunks[0].embed_text == f"{d['title']}\n{d['text']}"
    assert len(ds.chunks) == len(data.BEIR_DOCS)


def test_beir_keeps_only_queries_judged_in_the_split(beir_dir):
    ds = load_beir(beir_dir)
    assert [q for q, _, _ in ds.queries] == ["1", "2", "3", "4"]
    assert ds.queries[0] == ("1", "Vitamin D supplements improve bone density.", "en")
    assert ds.qrels["3"] == {"d3": 2, "d4": 0}
    assert ds.stats == {"documents": 6, "queries": 4, "qrels": 5}
    assert set(ds.files) == {"corpus.jsonl", "queries.jsonl", "qrels/test.tsv"}
    assert ds.files["corpus.jsonl"] == sha256_file(beir_dir / "corpus.jsonl")
    assert ds.name == "tinyfact"


def test_qrels_with_or_without_header(tmp_path, write_beir):
    a = read_qrels(write_beir(tmp_path / "a", header=True) / "qrels" / "test.tsv")
    b = read_qrels(write_beir(tmp_path / "b", header=False) / "qrels" / "test.tsv")
    assert a == b and a["1"] == {"d1": 1}


def test_checksum_follows_the_bytes(tmp_path, write_beir):
    a = load_beir(write_beir(tmp_path / "a"))
    b = load_beir(write_beir(tmp_path / "b"))
    assert a.checksum == b.checksum  # same bytes, different folder
    with open(tmp_path / "b" / "corpus.jsonl", "a") as f:
        f.write(json.dumps({"_id": "d7", "title": "", "text": "extra"}) + "\n")
    assert load_beir(tmp_path / "b").checksum != a.checksum


def test_beir_fails_loudly_on_inconsistent_files(tmp_path, write_beir):
    with pytest.raises(BenchInputError, match="judged documents"):
        load_beir(write_beir(tmp_path / "a", qrels=[("1", "missing-doc", 1)]))
    with pytest.raises(BenchInputError, match="query ids"):
        load_beir(write_beir(tmp_path / "b", qrels=[("404", "d1", 1)]))
    with pytest.raises(BenchInputError, match="not found"):
        load_beir(tmp_path / "nowhere")
    bad = write_beir(tmp_path / "c")
    (bad / "qrels" / "test.tsv").write_text("1\td1\n")
    with pytest.raises(BenchInputError, match="3 tab-separated"):
        load_beir(bad)


def test_xquad_same_language(xquad_dir):
    ds = load_xquad(xquad_dir, "es", "es")
    assert ds.name == "xquad-es-es"
    assert [c.id for c in ds.chunks] == ["es-0-0", "es-0-1", "es-1-0"]
    assert all(c.lang == "es" and c.doc_id == c.id for c in ds.chunks)
    assert ds.chunks[0].text.startswith("El Rin")  # byte-order mark stripped
    assert ds.chunks[0].title == "" and ds.chunks[0].source == "xquad/Rhine"
    assert ds.queries[0] == ("q1", "¿Hacia dónde fluye el Rin?", "es")
    assert ds.qrels == {"q1": {"es-0-0": 1}, "q2": {"es-0-1": 1}, "q3": {"es-0-1": 1}, "q4": {"es-1-0": 1}}
    assert set(ds.files) == {"xquad.es.json"}


def test_xquad_cross_language_uses_the_aligned_paragraph(xquad_dir, data):
    ds = load_xquad(xquad_dir, "es", "en")
    assert ds.name == "xquad-es-en"
    assert ds.chunks[1].text == data.XQ_EN[0][1][1][0] and ds.chunks[1].lang == "en"
    assert ds.queries[2] == ("q3", "¿Qué tiene Basilea?", "es")
    assert ds.qrels["q3"] == {"en-0-1": 1}
    assert set(ds.files) == {"xquad.es.json", "xquad.en.json"}
    assert ds.checksum != load_xquad(xquad_dir, "es", "es").checksum
    assert ds.stats == {"documents": 3, "queries": 4, "qrels": 4}


def test_xquad_refuses_misaligned_files(tmp_path, write_xquad, data):
    es = data.XQ_ES
    other = (es[0][1][1][0], [("q9", "¿otra?")])  # paragraph 1 carries another question
    root = write_xquad(tmp_path / "x", es=[(es[0][0], [es[0][1][0], other]), es[1]])
    with pytest.raises(BenchInputError, match="question ids differ"):
        load_xquad(root, "es", "en")
    root = write_xquad(tmp_path / "y", es=es[:1])
    with pytest.raises(BenchInputError, match="articles"):
        load_xquad(root, "es", "en")


def test_detect_format_and_dispatch(beir_dir, xquad_dir, tmp_path):
    assert detect_format(beir_dir) == "beir"
    assert detect_format(xquad_dir) == "xquad"
    with pytest.raises(BenchInputError):
        detect_format(tmp_path)
    assert load_dataset(xquad_dir, "xquad", query_lang="es", doc_lang="en").name == "xquad-es-en"
    with pytest.raises(BenchInputError, match="query_lang"):
        load_dataset(xquad_dir, "xquad")
    with pytest.raises(BenchInputError, match="unknown dataset loader"):
        load_dataset(xquad_dir, "msmarco")


# -- the real files (read-only, shared; skipped where they are absent) ---------------------


@needs_shared("scifact", "corpus.jsonl")
def test_real_scifact_counts():
    ds = load_beir(SHARED / "scifact")
    assert ds.stats == {"documents": 5183, "queries": 300, "qrels": 339}
    assert ds.files["corpus.jsonl"] == "dec31c8182f3d744c7d2c09423756fd1d17cbef75808db13ba01cc0aab4d1ac6"


@needs_shared("xquad")
@pytest.mark.parametrize("doc_lang", ["es", "en"])
def test_real_xquad_counts(doc_lang):
    ds = load_xquad(SHARED / "xquad", "es", doc_lang)
    assert ds.stats == {"documents": 240, "queries": 1190, "qrels": 1190}
    assert all(c.lang == doc_lang and not c.text.startswith("\ufeff") for c in ds.chunks)
