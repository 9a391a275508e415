"""Records loader: valid files in YAML and JSON, and one test per error message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vouched.errors import IngestError
from vouched.ingest import is_records_file, load_records
from vouched.types import Record

LANGS = ("en", "fa", "es")

GOOD = """
lang: en
records:
  - id: acme
    kind: cv
    title: Lead engineer
    organisation: Acme
    summary: Led the search platform.
    start: 2021-03
    end: present
    url: https://acme.example
    translations:
      fa: {title: مهندس ارشد, organisation: اکمه}
      es:
        title: Ingeniera principal
        summary: Dirigió la plataforma de búsqueda.
  - id: globex
    kind: cv
    title: Engineer
    start: 2018
    end: 2021-02-28
  - id: talk-1
    kind: podcast
    title: Search that refuses
    start: 2023-05-05
    current: false
    tenant: other
  - id: now
    kind: service
    title: Consulting
    current: true
"""


def test_records_yaml_with_translations_and_precision_kept(write):
    records = load_records(write("records.yaml", GOOD), default_tenant="site", allowed_langs=LANGS)
    acme, globex, talk, now = records
    assert acme == Record(
        id="acme", kind="cv", title="Lead engineer", summary="Led the search platform.", start="2021-03", end=None,
        current=True, url="https://acme.example", organisation="Acme", lang="en", tenant="site",
        translations={
            "fa": {"title": "مهندس ارشد", "organisation": "اکمه"},
            "es": {"title": "Ingeniera principal", "summary": "Dirigió la plataforma de búsqueda."},
        },
    )  # fmt: skip
    assert (globex.start, globex.end, globex.current) == ("2018", "2021-02-28", False)
    assert (talk.kind, talk.start, talk.tenant, talk.current) == ("podcast", "2023-05-05", "other", False)
    assert (now.current, now.end, now.start) == (True, None, None)


def test_records_json_list_and_language_detection(write):
    data = [
        {"id": "es-1", "kind": "article", "title": "Cómo construir un buscador",
         "summary": "Un artículo sobre la búsqueda híbrida y los umbrales de evidencia en español."},
        {"id": "en-1", "kind": "article", "title": "Building a search engine", "lang": "en-GB"},
    ]  # fmt: skip
    records = load_records(write("site.records.json", json.dumps(data)), allowed_langs=LANGS)
    assert [(r.id, r.lang, r.tenant) for r in records] == [("es-1", "es", "default"), ("en-1", "en", "default")]


def test_empty_records_file_gives_no_records(write):
    assert load_records(write("records.yaml", ""), allowed_langs=LANGS) == []


def test_records_file_names():
    for name in ("records.yaml", "records.yml", "records.json", "cv.records.yaml", "Talks.Records.YML"):
        assert is_records_file(Path(name))
    for name in ("records.md", "myrecords.yaml", "data.json"):
        assert not is_records_file(Path(name))


BASE = "  - id: a\n    kind: cv\n    title: A\n    start: 2020\n"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("  - id: acme\n    kind: cv\n    title: X\n    start: 2021-13\n",
         "entry 2 (id 'acme'): start '2021-13' is not a date (use YYYY, YYYY-MM or YYYY-MM-DD)"),
        ("  - id: b\n    kind: cv\n    title: X\n    end: 2021-02-30\n", "entry 2 (id 'b'): end '2021-02-30' is not a date"),
        ("  - id: b\n    kind: cv\n    title: X\n    start: March 2021\n", "entry 2 (id 'b'): start 'March 2021' is not a date"),
        ("  - id: b\n    kind: cv\n", "entry 2 (id 'b'): title is required"),
        ("  - kind: cv\n    title: X\n", "entry 2: id is required"),
        ("  - id: b\n    title: X\n", "entry 2 (id 'b'): kind is required"),
        ("  - id: b\n    kind: Case Study\n    title: X\n", "entry 2 (id 'b'): kind 'Case Study' must be lower-case"),
        ("  - id: b\n    kind: cv\n    title: X\n    organization: Acme\n", "entry 2 (id 'b'): unknown key 'organization'; did you mean 'organisation'?"),
        ("  - id: a\n    kind: cv\n    title: X\n", "entry 2 (id 'a'): duplicate id 'a' (first used by entry 1)"),
        ("  - id: b\n    kind: cv\n    title: X\n    start: 2021-05\n    end: 2021\n", "entry 2 (id 'b'): end '2021' is before start '2021-05'"),
        ("  - id: b\n    kind: cv\n    title: X\n    end: 2022\n    current: true\n", "entry 2 (id 'b'): current: true but end is '2022'"),
        ("  - id: b\n    kind: cv\n    title: X\n    end: present\n    current: false\n", "entry 2 (id 'b'): end 'present' contradicts current: false"),
        ("  - id: b\n    kind: cv\n    title: X\n    current: yes please\n", "entry 2 (id 'b'): current must be true or false"),
        ("  - id: b\n    kind: cv\n    title: X\n    translations: {fa: {name: x}}\n", "entry 2 (id 'b'): translations.fa: unknown key 'name'"),
        ("  - id: b\n    kind: cv\n    title: X\n    translations: [fa]\n", "entry 2 (id 'b'): translations must be a mapping"),
        ("  - id: b\n    kind: cv\n    title: X\n    summary: [a, b]\n", "entry 2 (id 'b'): summary must be a string"),
        ("  - just a string\n", "entry 2: an entry must be a mapping"),
    ],
)  # fmt: skip
def test_each_error_names_file_entry_and_key(write, entry, message):
    path = write("records.yaml", "records:\n" + BASE + entry)
    with pytest.raises(IngestError) as info:
        load_records(path, allowed_langs=LANGS)
    assert str(info.value).startswith(f"{path} ")
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("records.yaml", "records: [\n", "not valid YAML"),
        ("records.json", "[{", "not valid JSON"),
        ("records.yaml", "title: not a list\n", "expected a list of records"),
        ("records.yaml", "records: []\nowner: me\n", "unknown top-level key(s) owner"),
    ],
)
def test_file_level_errors_name_the_file(write, name, text, message):
    path = write(name, text)
    with pytest.raises(IngestError) as info:
        load_records(path, allowed_langs=LANGS)
    assert str(path) in str(info.value) and message in str(info.value)
