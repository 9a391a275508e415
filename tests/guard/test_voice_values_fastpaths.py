"""first_person_word and value_spans give exactly what their plain versions give.

``first_person_word`` matches with one character class for the word characters (on text
without "_"), first rules a match out from the bytes of the normalised text where it can,
and skips the Chinese scan when no Chinese entry is in the text; ``value_spans`` finds
e-mail addresses from their "@" instead of trying the e-mail pattern everywhere, strips
a URL's scheme with string tests, and reads the usual non-ASCII digits with one
translate. The plain versions are kept here (the matching as one regex branch per
entry, normalize as its plain steps), and hypothesis compares them on random text; the
facts about Unicode the fast paths rest on are checked on every code point.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.plain import CODE_POINTS, canonical_number_plain, normalize_plain
from vouched.guard import values as VAL
from vouched.guard import voice as VOICE

LANGS = ["en", "fa", "es", "pt", "fr", "de", "ar", "ru", "zh", "hi", None, "xx", "en-US"]


# --- voice: the plain search ----------------------------------------------------------------


def _apostrophes(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u02bc", "'")


def _plain_hit(entries: list[str], text: str) -> tuple[int, str] | None:
    if not entries:
        return None
    m = VOICE._word_re_per_entry(sorted(set(entries), key=len, reverse=True)).search(text)
    return None if m is None else (m.start(), m.group(0))


def _first_person_reference(sentence: str, lang: str | None) -> str | None:
    langs = VOICE.voice_langs(sentence, lang)
    words: list[str] = []
    chars: list[str] = []
    exceptions: tuple[str, ...] = ()
    for code in langs:
        entries, excs = VOICE.voice_words(code)
        if code == "zh":
            chars.extend(entries)
            exceptions += excs
        else:
            words.extend(entries)
    char_re = VOICE._char_re(chars, exceptions)

    def search(norm: str) -> str | None:
        word = _plain_hit(words, norm)
        if char_re is not None:
            m = char_re.search(norm)
            if m is not None and (word is None or m.start() < word[0]):
                return m.group(0)
        return None if word is None else word[1]

    hit = search(_apostrophes(normalize_plain(sentence)))
    if hit is not None and "en" in langs and hit in ("i", "us"):
        hit = search(_apostrophes(normalize_plain(VOICE._NOT_PRONOUN.sub(" ", sentence))))
    if hit is not None:
        masked = VOICE._mask_titles(sentence)  # titles and names hold no speaker (tested in test_voice)
        if masked != sentence:
            return _first_person_reference(masked, lang)
    return hit


_ENTRIES = sorted({e for lang in VOICE.LANGS for e in VOICE.voice_words(lang)[0]} | {"自我"})
_VOICE_PIECES = _ENTRIES + [e.upper() for e in _ENTRIES[::5]] + [
    " ", " ", "  ", "'", "’", "ʼ", "-", "_", ".", ",", "(", ")", "«", "»", "!", "a", "é", "x", "1",
    "\u0301", "\u0902", "\u093e", "\u094d", "\u200c", "\u200d", "\u064e", "\u00a0", "\t", "ß", "Ａ",
    "ب", "ي", "ك", "ة", "ا", "۳", "٢", "中", "я", "Я", "Ё", "й", "и\u0306", "क", "न", "\u093c", "ऩ",
    "क़", "२", "।", "US", "I", "i.e.", "U.S.", "(i)", "War I",
    "I-95", "We", "ÉCOLE", "L'", "J'", "\u2019ai", "ـ", "\ufeff", "aI", "_we",
]
voice_texts = st.lists(st.sampled_from(_VOICE_PIECES), max_size=14).map("".join)


def _script_texts(letters: str, lang: str) -> st.SearchStrategy[str]:
    """Text in one script (so that it takes the byte path), with that language's entries."""
    entries = [e for code in VOICE._given_langs(lang) for e in VOICE.voice_words(code)[0]]
    pieces = entries + [e.capitalize() for e in entries] + list(letters) + [
        " ", " ", "  ", ".", ",", "'", "’", "(", "-", "_", "1", "\u200c", "\u00ad", "«", "»", "—"]
    # The first character picks the alphabet: start with one of the script's letters.
    return st.tuples(st.sampled_from(letters), st.lists(st.sampled_from(pieces), max_size=14)).map(
        lambda t: t[0] + "".join(t[1]))


_SCRIPTS = {
    "en": "abcdefghijklmnopqrstuvwxyzIU", "fr": "éàçèêëîôûœ", "de": "äöüßÄÖÜ", "es": "áéíñóúü¿¡",
    "pt": "ãáâçéêíóôõú", "fa": "ابپتکگیهمنو۰۱۲", "ar": "ابتكيةىأإآؤئ٠١٢", "ru": "абвгдеёжзийЯМН",
    "hi": "कखगमहरनवसएािीुूेैोौंः्०१",
}


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(sorted(_SCRIPTS)).flatmap(
    lambda lang: st.tuples(st.just(lang), _script_texts(_SCRIPTS[lang], lang))))
def test_first_person_word_on_text_in_one_script(case: tuple[str, str]) -> None:
    lang, text = case
    assert VOICE.first_person_word(text, lang) == _first_person_reference(text, lang)
    assert VOICE.first_person_word(text, None) == _first_person_reference(text, None)


@settings(max_examples=1500, deadline=None)
@given(voice_texts, st.sampled_from(LANGS))
def test_first_person_word_matches_the_plain_search(text: str, lang: str | None) -> None:
    assert VOICE.first_person_word(text, lang) == _first_person_reference(text, lang)


def test_first_person_word_on_sentences() -> None:
    cases = [
        ("We grew fast.", "en"), ("i.e. the US grew.", "en"), ("World War I ended.", "en"),
        ("Nosotros crecimos.", "es"), ("La empresa tiene 1.250 clientes.", "es"),
        ("J'ai fondé l'entreprise.", "fr"), ("L’entreprise compte 64 salariés.", "fr"),
        ("Wir sind 42.", "de"), ("Das Team hat 42 Mitglieder.", "de"),
        ("Eu fundei a empresa.", "pt"), ("من این کار را می\u200cکنم.", "fa"),
        ("در این پروژه ۳۵ نفر کار می\u200cکنند.", "fa"), ("أنا أعمل هنا.", "ar"),
        ("تأسست الشركة عام ٢٠١٨.", "ar"), ("Я работаю здесь.", "ru"), ("मैं यहाँ हूँ।", "hi"),
        ("我们在这里。", "zh"), ("自我介绍，", "zh"), ("该项目于2021年启动，", "zh"),
        ("We_grew.", "en"), ("Me_gusta mi casa.", "es"),
    ]
    for text, lang in cases:
        for code in (lang, None):
            assert VOICE.first_person_word(text, code) == _first_person_reference(text, code), (text, code)


# --- voice: the one-class word character and its matchers -------------------------------------


def test_one_class_word_character_is_w_but_for_underscore() -> None:
    w, w1, not_w1 = re.compile(VOICE._W), re.compile(VOICE._W1), re.compile(VOICE._NOT_W1)
    for c in CODE_POINTS:
        if c != "_":
            assert bool(w.fullmatch(c)) == bool(w1.fullmatch(c)), hex(ord(c))
        assert bool(w1.fullmatch(c)) != bool(not_w1.fullmatch(c)), hex(ord(c))


@settings(max_examples=800, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_ENTRIES),
                          st.sampled_from(list(" '-.a1é\u0301\u0902\u093e\u0950"))), max_size=12),
       st.sampled_from(["en", "es", "pt", "fr", "fa", "hi", "ar", "ru", "de"]))
def test_one_class_matchers_match_one_branch_per_entry(parts: list[str], lang: str) -> None:
    text = "".join(parts)  # no "_": the one-class forms are for text without it
    entries = [e for code in VOICE._given_langs(lang) for e in VOICE.voice_words(code)[0]]
    want = _plain_hit(entries, text)
    words1 = VOICE._word_re1(entries)
    if words1 is not None:
        m = words1.search(text)
        assert (None if m is None else (m.start(), m.group(0))) == want
    sep1 = VOICE._sep_re(entries, always=True, w=VOICE._W1, separator=VOICE._NOT_W1)
    if sep1 is not None:
        m = sep1[0].match(text) or sep1[1].search(text)
        assert (None if m is None else (m.start(1), m.group(1))) == want


def test_runs_tables_keep_exactly_the_word_characters() -> None:
    w = re.compile(VOICE._W)
    for alphabet, table in VOICE._RUNS.items():
        for i, c in enumerate(alphabet.chars):
            assert table[i] == (i if w.fullmatch(c) else 0x20)
        assert alphabet.chars[0x20] == " "


@settings(max_examples=1500, deadline=None)
@given(voice_texts, st.sampled_from(["en", "es", "pt", "fr", "de", "fa", "ar", "ru", "hi"]))
def test_no_word_test_never_hides_a_match(text: str, lang: str) -> None:
    """Where the runs of the normalised text hold no head, the plain search finds nothing."""
    lex = VOICE._lexicon(VOICE._given_langs(lang))
    norm = _apostrophes(normalize_plain(text))
    for alphabet, (heads, runs) in lex.heads.items():
        b = VOICE._encode(alphabet, norm)
        if b is not None and heads.isdisjoint(b.translate(runs).split(b" ")):
            assert _plain_hit(lex._entries, norm) is None, norm


# --- values: the plain extraction --------------------------------------------------------------

_LINK_PLAIN = re.compile(rf"(?P<url>{VAL._URL})|(?P<email>{VAL._EMAIL})", re.IGNORECASE)
_SCHEME_PLAIN = re.compile(r"^(?:https?://)?(?:www\.)?")


def _trim_url_reference(url: str) -> str:
    pairs = {")": "(", "]": "[", "}": "{"}
    while url and url[-1] in VAL._URL_TRAIL:
        last = url[-1]
        if last in pairs and url.count(pairs[last]) >= url.count(last):
            break
        url = url[:-1]
    return url


def _canonical_url_reference(raw: str) -> str:
    return _SCHEME_PLAIN.sub("", _trim_url_reference(normalize_plain(raw))).rstrip("/")


def _links_reference(text: str) -> list[tuple[int, int, str, str, str]]:
    out = []
    for m in _LINK_PLAIN.finditer(text):
        if m.group("url") is not None:
            raw = _trim_url_reference(m.group(0))
            if "." not in raw and "/" not in raw.partition("//")[2]:
                continue
            out.append((m.start(), m.start() + len(raw), "url", raw, _canonical_url_reference(raw)))
        else:
            raw = m.group(0)
            out.append((m.start(), m.end(), "email", raw, normalize_plain(raw)))
    return out


def _value_spans_reference(text: str) -> list[tuple[str, str, str]]:
    links = _links_reference(text)
    out = [(start, (kind, raw, canonical)) for start, _, kind, raw, canonical in links]
    for m in VAL._NUMBER_RE.finditer(text):
        if not any(a <= m.start() < b for a, b, _, _, _ in links):
            out.append((m.start(), ("number", m.group(0), canonical_number_plain(m.group(0)))))
    out.sort(key=lambda item: item[0])
    return [v for _, v in out]


def _source_values_reference(text: str) -> frozenset[str]:
    found = {link[4] for link in _links_reference(text)}
    found.update(canonical_number_plain(raw) for raw in VAL._NUMBER_RE.findall(text))
    return frozenset(found)


_VALUE_PIECES = [
    "http://", "https://", "HTTP://", "hTtPs://", "ſ", "www.", "WWW.", "wWw.", "ww.", "://", "@", "@@",
    "a", "b", "x", "info", "com", "de", ".", "..", "-", "+", "_", "/", "//", ")", "(", "]", "[", "}",
    ",", ";", "!", "?", "'", "\"", "<", ">", "»", "。", " ", " ", "\t", "\n", "1", "12", "000", "0",
    "٢", "٠", "۳", "۰", "٫", "٬", "\u00a0", "\u202f", "\u2009", "०", "৩", "１", "\U0001d7cf", "é", "É",
    "中", "ß", "x@y.zz", "a.b@c-d.ef", "e@", "@f", "\u200c", "\u200b",
]
value_texts = st.lists(st.sampled_from(_VALUE_PIECES), max_size=24).map("".join)


@settings(max_examples=3000, deadline=None)
@given(value_texts)
def test_value_spans_match_the_plain_extraction(text: str) -> None:
    assert VAL.value_spans(text) == _value_spans_reference(text)
    assert VAL.source_values(text) == _source_values_reference(text)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="0123456789۰۱۲۳۹٠١٢٩०१९৩１\U0001d7cf٫٬.,\u00a0\u202f\u2009 x", max_size=16))
def test_canonical_number_matches_the_plain_steps(text: str) -> None:
    for raw in VAL._NUMBER_RE.findall(text):
        assert VAL.canonical_number(raw) == canonical_number_plain(raw)


def _outcome(f, arg):
    try:
        return f(arg)
    except Exception as exc:  # noqa: BLE001  (the same error is part of the same result)
        return type(exc)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="0123456789۰۱۲٠١٢٩०१৩１٫٬.,\u00a0\u202f\u2009 xX_-é中", max_size=10))
def test_canonical_number_matches_the_plain_steps_on_any_string(raw: str) -> None:
    """canonical_number is public: any string, not only _NUMBER_RE's spans."""
    assert _outcome(VAL.canonical_number, raw) == _outcome(canonical_number_plain, raw)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(["http://", "https://", "HTTPS://", "www.", "WWW.", "http:/", "ww.", "x",
                                 "é", "/", ")", "(", ".", "!", "\u200b", "Ｈ", " "]), max_size=8).map("".join))
def test_canonical_url_matches_the_plain_steps(raw: str) -> None:
    assert VAL.canonical_url(raw) == _canonical_url_reference(raw)
