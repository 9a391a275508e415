"""The extractive generator on a documentation page of our own (tests/fixtures/docs).

Keyword-only (no embedder) unless a test says otherwise, so every choice below is decided by
the generator's own rules: the question's words weighted by rarity, its type and anchors,
lists, whole blocks. Every plan is also put through the real sentence gate, as the pipeline
does, and must be released whole.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st

from vouched.answer.extractive import (
    ExtractiveGenerator, add_marker, anchor_found, joined, pieces, score_units, section_lists, units_of,
)
from vouched.embed.hashing import HashingEmbedder
from vouched.guard.gate import SentenceGate
from vouched.guard.prompt import NO_ANSWER, PromptSource
from vouched.ingest.chunker import chunk_document
from vouched.ingest.loaders import load_document

PAGE = Path(__file__).resolve().parents[1] / "fixtures" / "docs" / "archiver.md"


def sources_of(question: str = "", path: Path = PAGE) -> list[PromptSource]:
    """The page's chunks as numbered sources, ranked as retrieval would: by the words they
    share with the question (a stand-in for the retriever; ties in page order)."""
    from vouched.text import analyze

    doc = load_document(path)
    chunks = chunk_document(doc, max_chars=1200)
    q = set(analyze(question, "en"))
    ranked = sorted(chunks, key=lambda c: -len(q & set(analyze(f"{c.section} {c.text}", "en"))))
    return [
        PromptSource(number=i, id=c.id, doc_id=c.doc_id, title=c.title, section=c.section, date=None, url=None, text=c.text)
        for i, c in enumerate(ranked, 1)
    ]


def released(plan: list[str], sources: list[PromptSource], *, by_char: bool = False) -> list[str]:
    """What the pipeline's gate releases for this plan (all of it, or the test fails)."""
    gate = SentenceGate({s.number: s.text for s in sources}, "en")
    text = joined(plan)
    verdicts = []
    for piece in (list(text) if by_char else [text]):
        verdicts += gate.feed(piece)
    verdicts += gate.finish()
    assert all(v.ok for v in verdicts), [v for v in verdicts if not v.ok]
    assert len(verdicts) == len(plan)
    return [v.released for v in verdicts]


def ask(question: str, sources=None, **kw) -> tuple[list[str], list[str]]:
    sources = sources if sources is not None else sources_of(question)
    plan = ExtractiveGenerator(None, **kw).plan(question, sources, "en")
    return plan, ([] if plan == [NO_ANSWER] else released(plan, sources))


def test_add_marker():
    assert add_marker("She built it.", 2) == "She built it [2]."
    assert add_marker("Run it as the service user:", 1) == "Run it as the service user [1]:"
    assert add_marker("no punctuation", 3) == "no punctuation [3]."
    # a unit cut at a clause mark ends as a sentence: no "…؛ [1]." / "…; [1]."
    assert add_marker("از 11.4% به 4.2% کاهش یافت؛", 1) == "از 11.4% به 4.2% کاهش یافت [1]."
    assert add_marker("it fell to 4.2%; ", 2) == "it fell to 4.2% [2]."
    assert add_marker("下降到 4.2%，", 5) == "下降到 4.2% [5]."
    assert add_marker(";", 6) == "; [6]."  # nothing left: the text stays as it was
    block = "```\nx = 1. Y\n```"
    assert add_marker(block, 4) == block + " [4]"


def test_the_sentence_that_states_the_value_beats_the_one_that_mentions_it():
    plan, out = ask("What is the default compression level?")
    assert any("is 6" in s for s in out)
    assert not any("takes an integer" in s for s in out)


def test_a_code_block_is_released_whole_with_its_lead_in():
    plan, out = ask("How do I restore a snapshot with the restore command?")
    block = "```\narch restore --snapshot latest\n# then check the result. It prints one line per file\narch verify --all\n```"
    assert block in out  # whole: the comment line and the full stop inside did not cut it
    assert any(s.startswith("Run it as the service user") for s in out)
    assert out.index(block) == len(out) - 1 or out[out.index(block) - 1].endswith(":")


def test_a_table_is_released_whole_never_flattened():
    plan, out = ask("What does exit code 7 mean?")
    tables = [s for s in out if s.startswith("| Code | Meaning |")]
    assert len(tables) == 1
    rows = tables[0].split("\n")
    assert "| 7 | Disk full. Free some space first. |" in rows and "| 0 | Success. Nothing was changed. |" in rows


def test_a_block_streamed_a_character_at_a_time_is_released_the_same():
    for q in ("How do I restore a snapshot with the restore command?", "What does exit code 7 mean?"):
        sources = sources_of(q)
        plan = ExtractiveGenerator(None).plan(q, sources, "en")
        assert released(plan, sources, by_char=True) == released(plan, sources)


def test_a_list_question_gets_the_items_not_the_opening_line():
    plan, out = ask("Which formats does the archiver write?")
    text = "\n".join(out)
    for item in ("tar", "zip", "7z"):
        assert f"- {item}," in text
    assert len(out) <= 1 + 8


def test_a_list_of_subsections_for_a_list_question():
    ss = [
        PromptSource(1, "d#0", "d", "Plugins", "Plugins", None, None, "The editor ships with three plugins. Each is optional."),
        PromptSource(2, "d#1", "d", "Plugins", "Plugins > spellbox", None, None, "Spellbox checks spelling in twelve languages."),
        PromptSource(3, "d#2", "d", "Plugins", "Plugins > gitline", None, None, "Gitline shows who changed each line and when."),
        PromptSource(4, "d#3", "d", "Plugins", "Plugins > tabfold", None, None, "Tabfold folds long tables into a summary row."),
    ]
    lists = section_lists(ss, "en")
    assert len(lists) == 1 and [n for n, _ in lists[0].parts] == [1, 2, 3, 4]
    plan, out = ask("Which plugins does the editor ship with?", ss)
    assert [p for p in out if p.startswith("- ")] == [
        "- Spellbox checks spelling in twelve languages.", "- Gitline shows who changed each line and when.",
        "- Tabfold folds long tables into a summary row."]
    assert "[2]" in plan[1] and "[4]" in plan[3]  # each item cites its own section


def test_who_is_answered_by_a_sentence_that_names_someone():
    plan, out = ask("Who is the release manager of the archiver?")
    assert any("Ines Duarte" in s for s in out)
    ss = [
        PromptSource(1, "m#0", "m", "Team", "Team", None, None,
                     "The release manager of the archiver is chosen by a small volunteer group."),
        PromptSource(2, "m#1", "m", "Team", "Team", None, None, "Since 2024 the archiver's release manager is Ines Duarte."),
    ]
    q = "Who is the release manager of the archiver?"
    gen = ExtractiveGenerator(None)
    units = gen.candidates(q, ss, "en")
    plain = {x.unit.text: x.score for x in score_units(q, units, None, "en")}
    typed = {x.unit.text: x.score for x in score_units(q, units, None, "en", kind="person")}
    named = "Since 2024 the archiver's release manager is Ines Duarte."
    assert typed[named] > plain[named]
    assert all(typed[t] == plain[t] for t in typed if t != named)
    # "who" only ranks: with no name in the sources, the best unit still answers
    plan, out = ask("Who chooses the release manager?", ss[:1])
    assert out == ["The release manager of the archiver is chosen by a small volunteer group."]


def test_a_typed_question_without_a_figure_in_the_sources_is_no_answer():
    plan, out = ask("How long does a restore over the network take?")
    assert plan == [NO_ANSWER]


def test_never_a_unit_that_covers_none_of_the_anchors():
    ss = [
        PromptSource(1, "a#0", "a", "Exporters", "Exporters", None, None,
                     "Exporters write reports to disk. The Orbis exporter writes one file per day."),
        PromptSource(2, "b#0", "b", "Reports", "Reports", None, None,
                     "Daily reports are written to disk by the exporters, one report per file, every day."),
    ]
    plan, out = ask("What does the Orbis exporter write to disk every day?", ss)
    assert out and all("Orbis" in s for s in out)


def test_a_list_item_is_quoted_with_all_its_sentences():
    text = ("Stop the writer. If it still runs after a minute, kill it with the kill command.\n"
            "Start the copy with the copy command and wait for it.")
    ss = [PromptSource(1, "s#0", "s", "Steps", "Steps", None, None, text)]
    plan, out = ask("Stop the writer", ss)
    assert out[:2] == ["Stop the writer.", "If it still runs after a minute, kill it with the kill command."]


def test_first_person_units_are_never_offered():
    ss = [PromptSource(1, "p#0", "p", "About", "About", None, None,
                       "I built the archiver in 2019 for my own backups.\n\nThe archiver was first released in 2019.")]
    plan, out = ask("When was the archiver first released?", ss)
    assert out == ["The archiver was first released in 2019."]


def test_the_subjects_own_name_is_not_an_asked_word():
    ss = [
        PromptSource(1, "x#0", "x", "About", "About", None, None, "Mara Voss lives in Ghent and writes every morning."),
        PromptSource(2, "x#1", "x", "About", "Education", None, None, "She studied geology at the University of Lund."),
    ]
    gen = ExtractiveGenerator(None, exclude=("Mara Voss", "Mara"))
    plan = gen.plan("Which university did Mara study at?", ss, "en")
    assert plan == ["She studied geology at the University of Lund [2]."]


def test_a_marker_like_block_is_not_offered_at_all():
    text = "Read the first field:\n\n```\nvalue = row[0]\n```"
    ss = [PromptSource(1, "c#0", "c", "Code", "Code", None, None, text)]
    units = units_of(ss[0], "en")
    assert not any("row[0]" in u.text for u in units)


def test_with_an_embedder_the_plan_is_still_released_whole():
    gen = ExtractiveGenerator(HashingEmbedder(dim=64))
    for q in ("What is the default compression level?", "What does exit code 3 mean?", "Which formats are written?"):
        sources = sources_of(q)
        plan = gen.plan(q, sources, "en")
        if plan != [NO_ANSWER]:
            released(plan, sources)


def test_anchor_found_is_a_phrase_of_whole_words():
    assert anchor_found("Label created", 'It can stay at "Label created" for a day.', "en")
    assert not anchor_found("Label created", "the return label was created", "en")
    assert anchor_found("Tessera", "Tessera's own cluster", "en")
    assert not anchor_found("SEV1", "SEV10 is not a level", "en")


def test_pieces_put_blocks_and_items_on_lines_of_their_own():
    assert pieces(["A [1].", "```\nx\n``` [1]", "- b [1].", "C [1]."]) == [
        "A [1]. ", "\n```\nx\n``` [1]\n", "\n- b [1].", "C [1]. "]


_WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
_SENT = st.lists(_WORD, min_size=4, max_size=9).map(lambda ws: " ".join(ws).capitalize() + ".")


@settings(max_examples=60, deadline=None)
@given(st.lists(_SENT, min_size=1, max_size=4), st.lists(st.lists(_SENT, min_size=1, max_size=2), min_size=1, max_size=4),
       st.lists(_SENT, min_size=1, max_size=3), st.sampled_from(["code", "table", "list"]))
def test_any_plan_is_released_whole_by_the_gate(before, body, after, kind):
    """Whatever the page, the plan is released whole, and a block never in part."""
    if kind == "code":
        block = "Run this:\n\n```\n" + "\n".join("# " + " ".join(b) for b in body) + "\n```"
    elif kind == "table":
        block = "| a | b |\n" + "\n".join(f"| {i} | {' '.join(b)} |" for i, b in enumerate(body))
    else:
        block = "The parts are:\n\n" + "\n".join("- " + " ".join(b) for b in body)
    text = " ".join(before) + "\n\n" + block + "\n\n" + " ".join(after)
    ss = [PromptSource(1, "h#0", "h", "Page", "Page", None, None, text)]
    q = " ".join(body[0][0].split()[:3]) + "?"
    for question in (q, "Which parts are there?"):
        plan = ExtractiveGenerator(None).plan(question, ss, "en")
        if plan == [NO_ANSWER]:
            continue
        out = released(plan, ss)
        for s in out:
            if s.startswith("```") or s.startswith("| a | b |"):
                assert s in text  # a block is released as it stands in the source, whole
