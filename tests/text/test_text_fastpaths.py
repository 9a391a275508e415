"""Fast paths in vouched.text give exactly what the plain steps give.

``normalize`` skips work that cannot change its result, ``first_sentence_end`` runs its
own scan instead of ``_punct_cuts`` and may start it late, and ``_dot_is_boundary``
answers early for tokens that end in no letter or digit. Each is checked against the
plain version here, and the facts about Unicode they rest on are checked on every code
point.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.plain import CODE_POINTS, normalize_plain
from vouched.guard import gate as G
from vouched.text import sentences as S
from vouched.text.normalize import _MAP, _apply_map, normalize


# --- normalize ------------------------------------------------------------------------------


ALPHABET = (
    "aAéE\u0301 \t\n\u00a0\u2029ßﬁＡ①²ΣσςİK"
    + "".join(chr(cp) for cp in sorted(_MAP))
    + "ابپکیهةيىكأإآ۰۱٠١०१中文"
)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_normalize_matches_the_plain_steps(text: str) -> None:
    assert normalize(text) == normalize_plain(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ALPHABET, min_size=100, max_size=300))
def test_apply_map_is_translate_on_long_text_too(text: str) -> None:
    assert _apply_map(text) == text.translate(_MAP)


def test_whitespace_other_than_space_is_unprintable() -> None:
    """normalize skips " ".join(s.split()) for printable text without double, leading or
    trailing spaces: that needs every other whitespace character to be unprintable."""
    assert [c for c in CODE_POINTS if c.isspace() and c != " " and c.isprintable()] == []


def test_casefold_is_idempotent() -> None:
    """normalize skips its stability check when NFKC left the casefolded text alone."""
    assert [c for c in CODE_POINTS if c.casefold().casefold() != c.casefold()] == []


# --- sentences ------------------------------------------------------------------------------


def _first_sentence_end_reference(text: str) -> tuple[int, bool] | None:
    start = len(text) - len(text.lstrip())
    if start == len(text):
        return None
    cuts = S._boundaries(text) if "\n" in text or "\u2029" in text else S._punct_cuts(text)
    for cut in cuts:
        if cut > start and not text[start:cut].isspace():
            return len(text[:cut].rstrip()), not text[cut:].isspace() and cut < len(text)
    return len(text.rstrip()), False


PIECES = [
    "Dr.", "Mrs.", "e.g.", "i.e.", "U.S.", "etc.", "No.", "Fig.", "J.", "approx.", "vs.",
    "z.B.", "Inc.", "am 3. Mai", "S. 12", "1. ", "12.", "3.5", "x.com", "Hi!there", "Ⓐ.",
    ".", ".", "!", "?", "...", "…", "．", "؟", "۔", "।", "॥", "。", "！", "？", "?!", "«", "»",
    "« oui. »", "\"", "”", "’", ")", "]", "[1]", "[1, 2]", "[2-3]", "[۲]", "[", "(", "¿",
    " ", " ", " ", "  ", "\t", "\u00a0", "\u202f", "\n", "\n\n", "\n- ", "\u2029", "a", "the",
    "Next", "next", "Lisbon", "ÉCOLE", "é", "5", "18%", "این", "该项目", "परियोजना", "_",
]
windows = st.lists(st.sampled_from(PIECES), max_size=25).map("".join)


@settings(max_examples=1500, deadline=None)
@given(windows)
def test_first_sentence_end_matches_punct_cuts(text: str) -> None:
    assert S.first_sentence_end(text) == _first_sentence_end_reference(text)


@settings(max_examples=1500, deadline=None)
@given(windows)
def test_first_sentence_end_may_start_at_the_gates_first_terminal(text: str) -> None:
    """The gate starts the splitter's scan at its first terminal when no "«" comes before
    it (see SentenceGate._drain_live): same result as scanning from the start."""
    lead = G._SPACES.match(text).end()
    hit = G._TERMINAL_SPAN.search(text, lead)
    if hit is None or "«" in text[: hit.start()]:
        return
    assert S.first_sentence_end(text, hit.start()) == S.first_sentence_end(text)


def test_dot_is_boundary_early_answer_holds_for_every_character() -> None:
    """A token ending in a character that is no letter, digit or capital is in none of the
    abbreviation lists, is no initial, no dotted form and no number, whatever case
    mapping does to it."""
    for entry in S._ABBR_NEVER | S._ABBR_WEAK | S._ABBR_NUMBER:
        assert entry[-1].isalnum()
    for c in CODE_POINTS:
        if not c.isalnum() and not c.isupper():
            low = c.lower()
            assert not any(x.isalnum() for x in low) and not low.isupper() and not c.isdigit()
            assert not S._DOTTED.search("ab." + c)
