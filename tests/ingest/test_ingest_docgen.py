"""HTML from documentation generators (issue 19, item 5): Sphinx, MkDocs and Docusaurus pages
(fixtures written for these tests) read as their content only, headings without permalink
anchors, titles without the site name, and public links from corpus.base_url."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vouched.ingest import Block, load_corpus, load_document
from vouched.ingest._html import page_title

DOCGEN = Path(__file__).resolve().parents[1] / "fixtures" / "docgen"
FURNITURE = ("¶", "\u200b", "Navigation", "Skip to main content", "Edit this page", "Powered by", "Made with",
             "Previous:", "Harbour Handbook", "Harbour Portal", "documentation")


@pytest.mark.parametrize("name,title,blocks", [
    ("sphinx", "Tide tables", [
        Block("heading", "Tide tables", 1),
        Block("paragraph", "The harbourmaster publishes a tide table for every berth each Monday."),
        Block("heading", "Reading a table", 2),
        Block("paragraph", "Each row gives the time of high water and its height in metres above chart datum."),
        Block("code", 'table = load("berth-4")'),
        Block("paragraph", "load(berth)"),
        Block("paragraph", "Return the tide table of one berth."),
    ]),
    ("mkdocs", "Booking a berth", [
        Block("heading", "Booking a berth", 1),
        Block("paragraph", "Visiting boats book a berth online at least two days before arrival."),
        Block("heading", "Cancellations", 2),
        Block("paragraph", "A booking cancelled more than a day ahead is refunded in full."),
    ]),
    ("docusaurus", "Fuel dock", [
        Block("heading", "Fuel dock", 1),
        Block("paragraph", "The fuel dock sells diesel and petrol from seven in the morning to eight in the evening."),
        Block("heading", "Payment", 2),
        Block("paragraph", "Card payment is taken at the pump; cash is accepted at the office only."),
    ]),
])
def test_generator_pages_read_as_their_content(name, title, blocks):
    doc = load_document(DOCGEN / f"{name}.html")
    assert doc.title == title
    assert list(doc.blocks) == blocks
    for junk in FURNITURE:
        assert junk not in doc.text and junk not in doc.title, (name, junk)


def test_chunks_carry_clean_sections_and_public_links(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(DOCGEN, site)
    load = load_corpus([site], allowed_langs=["en"], base_url="https://harbour.example.org/docs/",
                       url_rules={"mkdocs.html": "https://handbook.example.org/{stem}/"})
    by_doc = {}
    for c in load.chunks:
        by_doc.setdefault(c.doc_id, c)
        assert "¶" not in c.section and "¶" not in c.text and "\u200b" not in c.section
    # a page's own canonical link wins; otherwise a rule, then base_url + its path
    assert by_doc["sphinx"].url == "https://harbour.example.org/docs/sphinx.html"
    assert by_doc["mkdocs"].url == "https://docs.example.org/berths/booking/"  # <link rel=canonical>
    assert by_doc["docusaurus"].url == "https://portal.example.org/docs/fuel-dock"
    assert {c.title for c in load.chunks} == {"Tide tables", "Booking a berth", "Fuel dock"}


def test_url_rule_applies_when_the_page_has_no_link_of_its_own(tmp_path):
    (tmp_path / "api").mkdir()
    shutil.copy(DOCGEN / "sphinx.html", tmp_path / "api" / "tides.html")
    load = load_corpus([tmp_path], allowed_langs=["en"], base_url="https://x.org",
                       url_rules={"api/*.html": "https://api.example.org/{stem}"})
    assert {c.url for c in load.chunks} == {"https://api.example.org/api/tides"}


def test_page_title_rules():
    assert page_title("Tide tables — Harbourmaster 2.3 documentation", "Tide tables") == "Tide tables"
    assert page_title("Fuel dock | Harbour Portal", "Fuel dock") == "Fuel dock"
    assert page_title("Harbour Portal | Fuel dock", "Fuel dock") == "Fuel dock"
    assert page_title("Booking a berth - Harbour Handbook", None, "Harbour Handbook") == "Booking a berth"
    assert page_title("Harbour Handbook · Booking", None, "Harbour Handbook") == "Booking"
    assert page_title("Servicios", "Servicios de consultoría") == "Servicios"  # not a suffix form: kept
    assert page_title("Harbour Handbook", None, "Harbour Handbook") == "Harbour Handbook"
    assert page_title("", "Only heading") == "Only heading"
    assert page_title("A-B testing guide", "A") == "A-B testing guide"  # a hyphen inside a word is no separator
    assert page_title("راهنمای لنگرگاه | بندر", "راهنمای لنگرگاه") == "راهنمای لنگرگاه"
    assert page_title("停泊指南 | 港口门户", "停泊指南") == "停泊指南"


words = st.text(st.characters(categories=("L", "N")), min_size=1, max_size=12)


@given(h1=st.lists(words, min_size=1, max_size=4).map(" ".join), site=st.lists(words, min_size=1, max_size=4).map(" ".join),
       sep=st.sampled_from([" — ", " – ", " - ", " | ", " · "]), prefix=st.booleans())
def test_page_title_drops_any_site_name_around_the_h1(h1, site, sep, prefix):
    head = f"{site}{sep}{h1}" if prefix else f"{h1}{sep}{site}"
    assert page_title(head, h1) == h1
    assert page_title(h1, h1) == h1
