"""Code blocks and tables are never cut: not by the splitter, not by the streaming gate."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from vouched.guard.gate import SentenceGate
from vouched.text.sentences import block_spans, first_sentence_end, split_sentences


def test_a_fence_is_one_sentence_whatever_it_holds():
    text = "Run this:\n```\n# stop it. Now\npsql -c \"X. Y\"\n\n- item\n```\nThen more. Yes."
    assert split_sentences(text) == ["Run this:", "```\n# stop it. Now\npsql -c \"X. Y\"\n\n- item\n```", "Then more.", "Yes."]


def test_markers_after_the_closing_fence_stay_with_it():
    assert split_sentences("```\na. B\n``` [2][3] Next one.") == ["```\na. B\n``` [2][3]", "Next one."]


def test_an_unclosed_fence_runs_to_the_end():
    assert split_sentences("Intro.\n~~~\nx = 1. Y\n\n# z") == ["Intro.", "~~~\nx = 1. Y\n\n# z"]


def test_a_table_is_one_sentence():
    text = "The codes:\n| Code | Meaning |\n| 3 | Not found. Check it. |\n| 7 | Full. Free space. |\nAfter. Done."
    assert split_sentences(text) == [
        "The codes:", "| Code | Meaning |\n| 3 | Not found. Check it. |\n| 7 | Full. Free space. |", "After.", "Done."]


def test_text_without_blocks_is_split_as_before():
    assert block_spans("a | b. C\nfoo") == []
    assert split_sentences("x | y. Z\nfoo") == ["x | y.", "Z\nfoo"]
    assert block_spans("One. Two.") == []


def test_first_sentence_end_agrees():
    text = "| a | b. c |\n| d | e |\nNext."
    end, more = first_sentence_end(text)
    assert text[:end] == "| a | b. c |\n| d | e |" and more


_W = st.text(alphabet="abcdef", min_size=1, max_size=5)
_S = st.lists(_W, min_size=2, max_size=6).map(lambda ws: " ".join(ws).capitalize() + ".")
_LINE = st.lists(st.one_of(_W, _S, st.just("# note."), st.just("- x. Y"), st.just("")), min_size=1, max_size=4).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(_S, min_size=1, max_size=3), st.lists(_LINE, min_size=1, max_size=5), st.lists(_S, max_size=3),
       st.sampled_from(["```", "~~~", "|"]))
def test_a_block_is_never_cut_and_nothing_is_lost(before, lines, after, kind):
    """(Blocks are a matter of lines: text with no line break is split as before.)"""
    if kind == "|":
        block = "\n".join(f"| {i} | {ln} |" for i, ln in enumerate(lines))
    else:
        block = kind + "\n" + "\n".join(lines) + "\n" + kind
    text = " ".join(before) + "\n" + block + ("\n" if after else "") + " ".join(after)
    out = split_sentences(text)
    assert block in out
    assert "".join(out).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")


@settings(max_examples=80, deadline=None)
@given(st.lists(_S, min_size=1, max_size=3), st.lists(_LINE, min_size=1, max_size=4), st.lists(_S, max_size=2),
       st.sampled_from(["```", "|"]), st.integers(min_value=1, max_value=7))
def test_the_gate_cuts_a_streamed_block_as_it_cuts_the_whole_text(before, lines, after, kind, step):
    """Fed in pieces of any size, the gate releases the block whole, as split_sentences does."""
    if kind == "|":
        block = "\n".join(f"| {i} | {ln} |" for i, ln in enumerate(lines)) + " [1]"
    else:
        block = "```\n" + "\n".join(lines) + "\n``` [1]"
    text = " ".join(s[:-1] + " [1]." for s in before) + "\n" + block + "\n" + " ".join(s[:-1] + " [1]." for s in after)
    source = {1: text}

    def verdicts(chunks):
        gate = SentenceGate(source, "en")
        out = []
        for c in chunks:
            out += gate.feed(c)
        return out + gate.finish()

    whole = verdicts([text])
    pieces = verdicts([text[i : i + step] for i in range(0, len(text), step)])
    assert [v.sentence for v in pieces] == [v.sentence for v in whole]
    assert any(v.sentence == block for v in whole)
