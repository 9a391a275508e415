"""Calibration without a golden set (vouched.eval.autocal): the probe rules and the bundled set."""

from __future__ import annotations

from collections import Counter


from vouched.eval.autocal import corpus_probes, offtopic_set, probe_from_chunk, sample_chunks
from vouched.text import LANGS
from vouched.types import Chunk


def ck(i: str, text: str, lang: str = "en", section: str = "", title: str = "Doc", **kw) -> Chunk:
    return Chunk(id=i, doc_id=i.split("#")[0], text=text, lang=lang, section=section, title=title, **kw)


def test_bundled_offtopic_set_has_300_questions_in_all_ten_languages():
    rows = offtopic_set()
    assert len(rows) >= 300
    per = Counter(r["lang"] for r in rows)
    assert set(per) == set(LANGS) and min(per.values()) >= 25
    assert len({r["id"] for r in rows}) == len(rows) and len({r["question"] for r in rows}) == len(rows)


def test_heading_becomes_the_question_in_the_chunks_language():
    c = ck("a#0", "Replica promotion needs the lag under ten seconds before anyone acts.", section="Ops > Replica promotion")
    assert probe_from_chunk(c) == "What is Replica promotion?"
    es = ck("b#0", "El sistema guarda cada versión del corpus.", lang="es", section="Versiones del corpus")
    assert probe_from_chunk(es) == "¿Qué es Versiones del corpus?"


def test_without_a_heading_the_first_sentences_content_words_are_asked_about():
    c = ck("a#0", "The lighthouse keeper trimmed the lantern wick every evening at dusk.", section="")
    q = probe_from_chunk(c)
    assert q.startswith("What about ") and "lighthouse" in q and " the " not in q
    fa = ck("f#0", "کتابخانه پاک‌نویس متن دست‌نوشته‌های فارسی را با دقت بالا می‌خواند.", lang="fa")
    assert probe_from_chunk(fa).startswith("درباره ")


def test_code_only_text_gives_no_probe():
    assert probe_from_chunk(ck("c#0", "```\nx = 1\n```", section="")) is None


def test_sample_is_deterministic_and_sized_to_the_corpus():
    chunks = [ck(f"d{i}#0", f"Sentence number {i} about gardening tools and seeds.") for i in range(1000)]
    a, b = sample_chunks(chunks), sample_chunks(list(reversed(chunks)))
    assert [c.id for c in a] == [c.id for c in b] and len(a) == 150
    assert len(sample_chunks(chunks[:40])) == 30 and len(sample_chunks(chunks[:10])) == 10
    assert [c.id for c in sample_chunks(chunks, seed=1)] != [c.id for c in a]


def test_drafts_and_tiny_chunks_are_not_probed():
    chunks = [ck("a#0", "Short."), ck("b#0", "A draft page about the new pricing model for teams.", draft=True),
              ck("c#0", "The archive holds scanned letters from the nineteenth century.")]
    probes = corpus_probes(chunks)
    assert [p.id for p in probes] == ["auto:c#0"] and probes[0].label == "answerable"


def test_auto_calibration_on_a_small_site(tmp_path):
    """End to end with the hashing stand-in: probes are scored exactly as calibrate scores a golden set."""
    from vouched.config import load_config
    from vouched.engine import Engine
    from vouched.eval.autocal import auto_cases

    site = tmp_path / "site"
    site.mkdir()
    for i, topic in enumerate(["sourdough starter feeding", "rye flour hydration", "oven spring and scoring"]):
        (site / f"p{i}.md").write_text(f"# Baking notes {i}\n\n## {topic.title()}\n\n"
                                       f"Our bakery notes on {topic}: keep the dough warm and patient, "
                                       f"and write down the timings of every {topic} batch.\n", encoding="utf-8")
    (tmp_path / "vouched.toml").write_text('languages = ["en", "es"]\n[corpus]\npaths = ["site"]\n'
                                           '[embedding]\nmodel = "hashing"\n', encoding="utf-8")
    cfg = load_config(tmp_path / "vouched.toml")
    eng = Engine(cfg)
    eng.ingest()
    auto = auto_cases(cfg, eng)
    assert len(auto.answerable) + len(auto.held_answerable) == 3 and len(auto.held_answerable) == 1
    assert all(c.label == "answerable" for c in auto.answerable)
    langs = {r["id"]: r["lang"] for r in offtopic_set()}
    assert auto.must_refuse and {langs[c.id] for c in auto.must_refuse} == {"en", "es"}
    assert len(auto.held_must_refuse) == round((len(auto.must_refuse) + len(auto.held_must_refuse)) / 3)
    assert auto.chunks_total == 3


def test_a_third_is_held_out_deterministically_and_never_used_for_the_choice():
    from vouched.eval.autocal import split_held_out
    from vouched.eval.calibrate import CalibrationCase

    cases = [CalibrationCase(f"c{i}", f"q{i}", "must_refuse") for i in range(30)]
    used, held = split_held_out(cases)
    assert len(held) == 10 and len(used) == 20 and not {c.id for c in used} & {c.id for c in held}
    assert split_held_out(list(reversed(cases)))[1] == list(reversed(held))


def test_held_out_check_counts_at_the_threshold():
    from vouched.eval.autocal import held_out_check
    from vouched.eval.calibrate import CalibrationCase, ScoredCase

    def sc(label, ev):
        return ScoredCase(CalibrationCase(f"{label}{ev}", "q", label), ev)

    scored = [sc("answerable", 0.9), sc("answerable", 0.7), sc("must_refuse", 0.5), sc("must_refuse", 0.85),
              sc("must_refuse", None)]
    assert held_out_check(scored, 0.8) == {"answerable": (1, 2), "must_refuse": (2, 3)}
