"""Site kinds choose the L1 categories and fixed texts in force (issue 19, item 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vouched.answer import Assistant
from vouched.config import load_config
from vouched.engine import Engine
from vouched.guard.kinds import KINDS, ONLY_FOR, categories_off, kind_text, packs_for_kind, texts_for_kind
from vouched.guard.packs import load_packs
from vouched.guard.refusal import match_refusal
from vouched.guard.texts import TEXT_KEYS, fixed_text, texts_for
from vouched.text import LANGS

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "docs_site"
COST = "What does it cost to call a function?"


def test_categories_by_kind():
    assert categories_off("person") == frozenset()
    assert categories_off("organisation") == {"fees", "availability", "hiring", "private"}
    assert categories_off("docs") == {"fees", "availability", "hiring", "private", "speculation"}
    assert categories_off("organisation", refuse=["fees"]) == {"availability", "hiring", "private"}
    for kind in KINDS:  # meta, task and any category a pack adds later are never switched off
        assert not categories_off(kind) & {"meta", "task", "action_request", "anything_new"}
    with pytest.raises(ValueError):
        categories_off("shop")


def test_docs_packs_drop_person_categories_but_keep_task_meta_and_new_ones():
    packs = load_packs(LANGS)
    docs = packs_for_kind(packs, "docs")
    assert {r.group for r in docs.rules} == {r.group for r in packs.rules} - categories_off("docs")
    assert match_refusal("What are her day rates?", packs).category == "fees"
    assert match_refusal("What are her day rates?", docs) is None
    assert match_refusal("Write me a poem about the sea.", docs).category == "task"
    assert match_refusal("هزینه‌ی همکاری با او چقدر است؟", docs) is None  # every language's pack is filtered
    assert packs_for_kind(packs, "person") is packs


def test_a_deployments_own_patterns_stay_in_force_whatever_the_kind():
    extra = {"en": {"fees": [r"price list"]}, "*": {"fees": [r"discount code"]}}
    packs = packs_for_kind(load_packs(LANGS, extra), "docs", extra_patterns=extra)
    assert match_refusal("Where is the price list?", packs).category == "fees"
    assert match_refusal("any discount code?", packs).category == "fees"
    assert match_refusal("What are her day rates?", packs) is None


def test_neutral_texts_cover_every_language_and_drop_the_contact_form():
    person_only = [k for k in TEXT_KEYS if kind_text(k, "en", "docs")]
    assert {"refusal.fees", "refusal.availability", "refusal.hiring", "notice.limit", "reply.greeting"} <= set(person_only)
    for lang in LANGS:
        for key in person_only:
            neutral = kind_text(key, lang, "organisation")
            assert neutral and neutral != texts_for(lang)[key], (lang, key)
    assert "contact form" not in kind_text("notice.limit", "en", "docs")
    assert kind_text("notice.limit", "en", "person") is None
    over = texts_for_kind("docs", {"en": {"notice.limit": "Mine."}})
    assert fixed_text("notice.limit", "en", over) == "Mine."  # the deployment's text wins
    assert fixed_text("notice.limit", "fa", over) == kind_text("notice.limit", "fa", "docs")
    assert texts_for_kind("person") is None


@pytest.fixture(scope="module")
def docs_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("kinds")
    shutil.copytree(FIXTURE, root / "docs")
    toml = root / "vouched.toml"
    toml.write_text('languages = ["en"]\n[corpus]\npaths = ["docs"]\n[embedding]\nmodel = "hashing"\n'
                    '[threshold]\nvalue = 0.05\n', encoding="utf-8")
    Engine(load_config(toml)).ingest()
    return toml


def _ask(cfg, question):
    events = list(Assistant(cfg).stream(question))
    return events[:-1], events[-1]


def test_docs_site_answers_the_cost_of_a_function_call_from_its_sources(docs_site):
    cfg = load_config(docs_site)
    assert cfg.site_kind == "docs"  # no [subject] name
    body, done = _ask(cfg, COST)
    assert done.outcome == "answered" and done.sources[0].doc_id == "functions"
    assert "50 nanoseconds" in " ".join(e.text for e in body)
    body, done = _ask(cfg, "Write a haiku about recursion.")
    assert done.outcome == "refused" and done.category == "task"


def test_person_site_still_refuses_fees(docs_site):
    cfg = load_config(docs_site, subject={"name": "Ada Byron"})
    assert cfg.site_kind == "person"
    body, done = _ask(cfg, COST)
    assert done.outcome == "refused" and done.category == "fees" and done.layer == "L1"
    assert body[0].text == fixed_text("refusal.fees", "en")


def test_organisation_refuses_prices_only_when_configured(docs_site):
    plain = load_config(docs_site, site={"kind": "organisation"})
    assert _ask(plain, COST)[1].outcome == "answered"
    strict = load_config(docs_site, site={"kind": "organisation", "refuse": ["fees"]})
    body, done = _ask(strict, COST)
    assert done.category == "fees" and body[0].text == kind_text("refusal.fees", "en", "organisation")
    assert "contact form" not in body[0].text


def test_only_for_names_real_categories():
    cats = set(load_packs(LANGS).categories())
    assert set(ONLY_FOR) <= cats
