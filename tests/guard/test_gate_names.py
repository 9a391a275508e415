"""vouched.guard.names and the gate's unsupported_name rule: what counts as a name, how it
is compared, and the rule in check_sentence (languages, false holds to avoid)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.guard.gate import RULES, check_sentence
from vouched.guard.names import NamePool, _inflected, _key, name_keys, name_spans

SOURCES = {
    1: "Ana Moreira founded Quillmate in Porto in 2019. The team ships pg-core-2 and runs SEV1 drills; "
    "its OCR stack uses Tesseract. Her essay “Reading Old Ledgers” won a prize.",
    2: "Das Unternehmen wurde 2016 in Berlin von Jana Krüger gegründet; es nutzt GitHub.",
    3: "Компания основана в Москве Иваном Петровым.",
    4: "این پروژه با Tesseract و Python ساخته شد. 该项目使用GitHub上的Kraken模型。",
    5: "Jean-Paul Sartre visited São Paulo and Zürich with the Baden-Württemberg group.",
}


def reported(text: str, lang: str | None) -> list[str]:
    return [raw for _kind, raw, _key in name_spans(text, lang)]


# (sentence, lang, names reported)
SPANS = [
    ("She founded the company in Porto.", "en", ["Porto"]),
    ("Porto is where she founded it.", "en", []),  # sentence-initial: could be any word
    ("However, the team grew.", "en", []),
    ("In short: Quillmate grew.", "en", []),  # after a colon a clause starts
    ("The team ships pg-core-2 and v2.3 with SEV1.", "en", ["pg-core-2", "v2.3", "SEV1"]),
    ("It has 3rd-party tools from the 1990s and 5km of cable.", "en", []),  # units and ordinals
    ("The OCR stack runs on GitHub.", "en", ["OCR", "GitHub"]),
    ("Her essay “Reading Old Ledgers” won.", "en", ["“Reading Old Ledgers”", "Old", "Ledgers"]),
    ("She met O'Brien and Leila's team.", "en", ["Brien", "Leila"]),
    ("See https://Example.com/Docs or mail Ana@Example.com now.", "en", []),
    ("Das Team hat 42 Mitglieder und wurde in Berlin gegründet.", "de", ["Berlin"]),  # nouns are not names
    ("Die Firma wurde von Jana Krüger geleitet.", "de", ["Jana", "Krüger"]),
    ("Das Modell läuft auf GitHub.", "de", ["GitHub"]),
    ("Компания основана в Москве Иваном.", "ru", ["Москве", "Иваном"]),
    ("این پروژه با Tesseract ساخته شد.", "fa", ["Tesseract"]),
    ("该项目使用GitHub上的Kraken模型。", "zh", ["GitHub", "Kraken"]),
    ("यह परियोजना Python में लिखी गई।", "hi", ["Python"]),
    ("«Мастер и Маргарита» — роман.", "ru", ["«Мастер и Маргарита»", "Маргарита"]),
]


@pytest.mark.parametrize(("text", "lang", "names"), SPANS)
def test_name_spans(text: str, lang: str, names: list[str]) -> None:
    assert reported(text, lang) == names


# (sentence, lang, rule or None, offending value)
RULE_CASES = [
    ("Ana Moreira founded Quillmate in Porto [1].", "en", None, None),
    ("Ana Moreira founded Quillmate in Lisbon [1].", "en", "unsupported_name", "Lisbon"),
    ("The founder is Ana Moreira of QUILLMATE [1].", "en", None, None),  # case does not matter
    ("The company was founded by Ana Moreira in Porto [2].", "en", "unsupported_name", "Ana"),  # not cited
    ("The team ships pg-core-2 [1].", "en", None, None),
    ("The team ships pg-core-3 [1].", "en", "unsupported_value", "3"),  # values are checked first
    ("The team runs SEV2 drills [1].", "en", "unsupported_name", "SEV2"),
    ("Her essay “Reading Old Ledgers” won a prize [1].", "en", None, None),
    ("Her essay “Reading New Ledgers” won a prize [1].", "en", "unsupported_name", "“Reading New Ledgers”"),
    ("Die Firma wurde von Jana Krüger in Berlin gegründet [2].", "de", None, None),
    ("Die Firma wurde von Jana Kruger in Hamburg gegründet [2].", "de", "unsupported_name", "Hamburg"),
    ("Das Unternehmen hat viele Kunden und Partner [2].", "de", None, None),  # nouns, paraphrased
    ("Компанию основал Иван Петров в Москве [3].", "ru", None, None),  # inflected forms
    ("Компанию основал Иван Сидоров [3].", "ru", "unsupported_name", "Сидоров"),
    ("این پروژه با Python ساخته شد [4].", "fa", None, None),
    ("این پروژه با Rust ساخته شد [4].", "fa", "unsupported_name", "Rust"),
    ("该项目使用GitLab上的模型[4]。", "zh", "unsupported_name", "GitLab"),
    ("He went with Jean Paul Sartre to Sao Paulo and Zurich [5].", "en", None, None),  # hyphens, diacritics
    ("He went with JeanPaul Sartre to the Baden Württemberg group [5].", "en", None, None),
    ("The city is Lisbon.", "en", "missing_marker", None),  # a name makes a sentence contentful
]


@pytest.mark.parametrize(("sentence", "lang", "rule", "value"), RULE_CASES)
def test_unsupported_name_rule(sentence: str, lang: str, rule: str | None, value: str | None) -> None:
    v = check_sentence(sentence, SOURCES, lang)
    assert (v.rule, v.value) == (rule, value)
    assert "unsupported_name" in RULES


def test_allowed_names_are_never_held() -> None:
    s = "Leila Navid built it in Porto [1]."
    assert check_sentence(s, SOURCES, "en").rule == "unsupported_name"
    assert check_sentence(s, SOURCES, "en", allowed_names=["Leila Navid"]).ok
    assert check_sentence("Navid built it in Porto [1].", SOURCES, "en", allowed_names=["Leila Navid"]).ok


def test_no_answer_is_not_a_code() -> None:
    assert check_sentence("NO_ANSWER", SOURCES, "en").rule == "no_answer"
    assert check_sentence("(NO_ANSWER)", SOURCES, "fa").rule == "no_answer"


# --- properties of the comparison form ----------------------------------------------------------

_LATIN = st.text(alphabet="abcdefghijklmnopqrstuvwxyzàáâãäçèéêëíîïñóôõöúûüý", min_size=2, max_size=9)


def _strip_accents(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


@settings(max_examples=300, deadline=None)
@given(_LATIN)
def test_key_ignores_case_and_diacritics(word: str) -> None:
    assert _key(word) == _key(word.upper()) == _key(word.capitalize()) == _key(_strip_accents(word))


@settings(max_examples=300, deadline=None)
@given(_LATIN, _LATIN)
def test_hyphenated_names_match_joined_and_split(a: str, b: str) -> None:
    name = f"{a.capitalize()}-{b.capitalize()}"
    for source in (f"met {a} {b} there", f"met {a}{b} there", f"met {a.upper()}-{b} there"):
        pool = NamePool(source)
        assert all(pool.has(kind, key) for kind, _raw, key in name_spans(f"She met {name} there.", "en"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_LATIN, st.booleans()), min_size=2, max_size=12))
def test_a_sentence_copied_from_its_source_is_never_held_for_a_name(words) -> None:
    """Whatever capitals and accents it has, a source sentence cited as itself passes."""
    text = " ".join(w.capitalize() if cap else w for w, cap in words)
    assert check_sentence(f"{text} [1].", {1: f"{text}."}, "en").rule != "unsupported_name"
    assert check_sentence(f"{text} [1].", {1: f"{_strip_accents(text).lower()}."}, "en").rule != "unsupported_name"


@settings(max_examples=300, deadline=None)
@given(_LATIN, st.sampled_from(["s", "a", "e", "u", "om", "ov"]))
def test_inflected_names_are_found(stem: str, ending: str) -> None:
    if len(stem) < 4:
        return
    assert _inflected(_key(stem + ending), _key(stem))
    assert NamePool(f"about {stem.capitalize()} here").has("name", _key(stem + ending))


@settings(max_examples=300, deadline=None)
@given(_LATIN, _LATIN)
def test_a_name_is_found_only_where_it_is(a: str, b: str) -> None:
    """Found exactly when the source has the word, or a form sharing all but its last
    character (the inflection rule) — never as a substring."""
    ka, kb = _key(a), _key(b)
    pool = NamePool(f"only {b} here")
    expect = ka == kb or ka in name_keys(f"only {b} here") or (len(ka) >= 4 and _inflected(ka, kb))
    assert pool.has("name", ka) is expect
    if ka != kb and not ka.startswith(kb[:4]):
        assert not pool.has("name", ka)
    assert not NamePool(f"x{a}x").has("code", ka + "q")
