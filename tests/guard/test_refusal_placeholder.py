"""Property: every pack pattern that uses the subject placeholder matches the same text with
the pronoun, the subject's full name and each alias in the placeholder's place (issue 15.1).

The texts are written from each pattern by ``vouched.guard.packs._sample`` (shortest text
per top-level alternative, one per position where the placeholder may stand). A sample the
pattern does not match even with the pronoun (a look-around the writer does not satisfy)
is skipped and counted; the test also requires that most samples are usable, so it cannot
pass by skipping everything.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from vouched.guard.packs import PLACEHOLDER, load_packs, matching_text, subject_texts
from vouched.guard.packs._sample import samples
from vouched.guard.refusal import match_refusal

_WORD = re.compile(r"\w")


def _with_name(text: str, name: str) -> str:
    """``text`` with the placeholder replaced by ``name``, a space added where it would touch a letter."""
    out = []
    for i, ch in enumerate(text):
        if ch != PLACEHOLDER:
            out.append(ch)
            continue
        before = text[i - 1] if i else ""
        after = text[i + 1] if i + 1 < len(text) else ""
        out.append((" " if _WORD.match(before or " ") else "") + name + (" " if _WORD.match(after or " ") else ""))
    return "".join(out)


NAMES = ("Leila Navid", "Leila", "Navid", "Dr. Navid")


def _cases():
    packs = load_packs()
    out = []
    for rule in packs.rules:
        if PLACEHOLDER not in rule.body:
            continue
        for pronoun_text, subject_text in samples(rule.body):
            out.append((rule, pronoun_text, subject_text))
    return packs, out


PACKS, CASES = _cases()


def test_the_placeholder_is_a_word_character():
    assert re.fullmatch(r"\w", PLACEHOLDER)
    assert re.search(r"will\s+(?:she|" + PLACEHOLDER + r")\b", f"will {PLACEHOLDER} move")


def test_most_samples_are_usable():
    usable = sum(1 for rule, p, _ in CASES if rule.regex.search(p))
    assert len(CASES) > 200
    assert usable / len(CASES) > 0.85, (usable, len(CASES))


@pytest.mark.parametrize("name", NAMES)
def test_every_placeholder_pattern_matches_pronoun_name_and_alias(name):
    failures = []
    for rule, pronoun_text, subject_text in CASES:
        if rule.regex.search(matching_text(pronoun_text)) is None:
            continue  # the sample writer cannot satisfy this rule's look-arounds
        assert rule.regex.search(subject_text), (rule.lang, rule.source, subject_text)
        # the sample writer glues words where the pattern allows no space; a name is
        # written as a separate word, so it gets spaces (Chinese: the seam spaces)
        question = _with_name(subject_text, name)
        if not any(rule.regex.search(t) for t in subject_texts(question, NAMES)):
            failures.append(f"{rule.lang} {rule.group}: {rule.source!r} on {question!r}")
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} in all)"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NAMES), st.sampled_from(["will {} move abroad?", "Will {} be cheaper than others?", "is {} going to quit?"]))
def test_name_and_pronoun_refuse_alike_in_english(name, frame):
    by_pronoun = match_refusal(frame.format("she"), PACKS)
    by_name = match_refusal(frame.format(name), PACKS, subject_names=NAMES)
    assert by_pronoun is not None and by_name is not None
    assert by_pronoun.category == by_name.category
