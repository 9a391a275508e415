"""Tiny datasets in the published BEIR and XQuAD formats, written into tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import SHARED  # noqa: E402 - one definition of where the shared benchmarks live

# Distinct topics, so even the hashing embedder and plain keyword search find them.
BEIR_DOCS = [
    {"_id": "d1", "title": "Vitamin D and bone density", "text": "Vitamin D supplements increase bone mineral density in older adults."},
    {"_id": "d2", "title": "Smoking and lung cancer", "text": "Tobacco smoking is the main cause of lung cancer worldwide."},
    {"_id": "d3", "title": "Exercise and heart disease", "text": "Regular aerobic exercise lowers the risk of coronary heart disease."},
    {"_id": "d4", "title": "Sleep and memory", "text": "Sleep deprivation impairs memory consolidation in students."},
    {"_id": "d5", "title": "Coffee and liver", "text": "Coffee consumption is associated with lower rates of liver cirrhosis."},
    {"_id": "d6", "title": "Antibiotics and gut flora", "text": "Antibiotic treatment reduces the diversity of gut bacteria."},
]
BEIR_QUERIES = [
    {"_id": "1", "text": "Vitamin D supplements improve bone density.", "metadata": {}},
    {"_id": "2", "text": "Smoking tobacco causes lung cancer.", "metadata": {}},
    {"_id": "3", "text": "Aerobic exercise reduces coronary heart disease risk.", "metadata": {}},
    {"_id": "4", "text": "Sleep deprivation harms memory.", "metadata": {}},
    {"_id": "99", "text": "A training claim that is not in the test qrels.", "metadata": {}},
]
BEIR_QRELS = [("1", "d1", 1), ("2", "d2", 1), ("3", "d3", 2), ("3", "d4", 0), ("4", "d4", 1)]


def _write_beir(root: Path, docs=BEIR_DOCS, queries=BEIR_QUERIES, qrels=BEIR_QRELS, header=True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels").mkdir(exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({**d, "metadata": {}}) + "\n" for d in docs), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    lines = (["query-id\tcorpus-id\tscore"] if header else []) + [f"{q}\t{d}\t{s}" for q, d, s in qrels]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


# Two articles; paragraph (a, p) in Spanish is the translation of (a, p) in English.
XQ_EN = [
    ("Rhine", [("The Rhine flows from the Swiss Alps to the North Sea through Germany and the Netherlands.",
                [("q1", "Where does the Rhine flow to?")]),
               ("Basel is the first large city on the Rhine, with a busy river port.",
                [("q2", "What is the first large city on the Rhine?"), ("q3", "What does Basel have?")])]),
    ("Oxygen", [("Oxygen is a chemical element with symbol O and atomic number 8.",
                 [("q4", "What is the atomic number of oxygen?")])]),
]
XQ_ES = [
    ("Rhine", [("\ufeffEl Rin fluye desde los Alpes suizos hasta el mar del Norte a través de Alemania y los Países Bajos.",
                [("q1", "¿Hacia dónde fluye el Rin?")]),
               ("Basilea es la primera gran ciudad del Rin, con un puerto fluvial muy activo.",
                [("q2", "¿Cuál es la primera gran ciudad del Rin?"), ("q3", "¿Qué tiene Basilea?")])]),
    ("Oxygen", [("El oxígeno es un elemento químico de símbolo O y número atómico 8.",
                 [("q4", "¿Cuál es el número atómico del oxígeno?")])]),
]


def _squad(articles) -> dict:
    return {
        "version": "1.1",
        "data": [
            {"title": title, "paragraphs": [
                {"context": ctx, "qas": [{"id": qid, "question": q, "answers": [{"answer_start": 0, "text": ctx[:3]}]}
                                         for qid, q in qas]}
                for ctx, qas in paras]}
            for title, paras in articles
        ],
    }


def _write_xquad(root: Path, en=XQ_EN, es=XQ_ES) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "xquad.en.json").write_text(json.dumps(_squad(en), ensure_ascii=False), encoding="utf-8")
    (root / "xquad.es.json").write_text(json.dumps(_squad(es), ensure_ascii=False), encoding="utf-8")
    return root


@pytest.fixture
def data():
    """The fixture contents, for assertions (tests never import conftest)."""
    from types import SimpleNamespace

    return SimpleNamespace(BEIR_DOCS=BEIR_DOCS, BEIR_QUERIES=BEIR_QUERIES, XQ_EN=XQ_EN, XQ_ES=XQ_ES, SHARED=SHARED)


@pytest.fixture
def write_beir():
    return _write_beir


@pytest.fixture
def write_xquad():
    return _write_xquad


@pytest.fixture
def beir_dir(tmp_path) -> Path:
    return _write_beir(tmp_path / "tinyfact")


@pytest.fixture
def xquad_dir(tmp_path) -> Path:
    return _write_xquad(tmp_path / "tinyquad")
