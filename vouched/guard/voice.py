"""L5 — voice: the answer never speaks as the subject.

``first_person_word(sentence, lang)`` returns the first first-person word of a sentence
(normalised, as matched), or None. The sentence gate (L4) runs it on every sentence,
markers already stripped.

Lists: one data file per language in ``voice_words/{lang}.txt`` (en fa es pt fr de ar ru
zh hi); each file's header says what is in it and what was left out, and why.

How a sentence is matched:

* on ``normalize(sentence)`` (case folded, Arabic forms → Persian, ZWNJ → space, ...), as
  whole words: a match may not touch a letter, digit or combining mark on either side, nor
  an apostrophe that joins it to one — the same word boundaries as ``vouched.text.words``
  (a test pins the two together). An entry with a space is a word sequence (Persian
  "می کنم"); an entry ending in an apostrophe is a French elision ("j'" before "ai");
* Chinese has no word boundaries: 我 and 咱 are found anywhere, except inside 自我
  ('self'). 我们 ('we') counts;
* which lists: the answer language's list plus English (English pronouns are what a
  model falls back to in any language). Checking every list at once would trade one
  language's pronoun for another's ordinary word: Persian «من» 'I' is Arabic «من» 'from',
  Portuguese "nos" is 'in the'. With ``lang=None`` the lists are English plus those the
  script implies: Han → zh, Cyrillic → ru, Devanagari → hi, Arabic script → fa or ar as
  ``arabic_script_lang`` decides from the raw letters. Latin-script languages other than
  English are only checked when ``lang`` says so. An unknown ``lang`` gets English only.

Decisions (see the data files for the rest):

* "we / us / our" count — an answer that says "we" speaks for the subject's
  organisation; a source's "we" must be paraphrased;
* "mine" is left out (a gold mine); "US" in capitals, dotted abbreviations (i.e., U.S.),
  "(i)" enumerations and Roman-numeral "I" after War/Phase/Type/Part/... are not pronouns;
* Persian clitics ‌ام / ‌ایم are not matched (after normalisation "ام" is also Arabic «أم»
  'or/mother'); present-perfect first person ("کرده‌ام") is therefore missed;
* Arabic «لديّ» ('I have') is left out: normalisation makes it «لدی», the same as the
  preposition «لدى» ('at, with'). «عليّ» / «إليّ» / «فيّ» fold onto «على» / «إلى» / «في» too.

Weak spots, stated plainly: first person carried only by a verb ending (Spanish
"trabajé" is listed, but most verbs are not; Arabic suffixes; Persian endings beyond the
listed verbs) passes; so does a first-person claim phrased impersonally ("this author").
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

# The matchers (word classes, script tables, _Lexicon, the regex builders) live in
# voice_match; this module reads the lists, picks them and stays the entry point.
from vouched.guard.voice_match import (
    _ANY_SCRIPT,
    _NOT_PRONOUN,
    _NOT_W1,  # noqa: F401  (re-exported for tests/guard: VOICE._NOT_W1 ...)
    _OTHER_SCRIPTS,
    _RUNS,  # noqa: F401
    _SCRIPT_TABLE,
    _W,  # noqa: F401
    _W1,  # noqa: F401
    _apostrophes,
    _char_re,
    _encode,  # noqa: F401
    _Lexicon,
    _script_index,
    _sep_re,  # noqa: F401
    _word_re,  # noqa: F401
    _word_re1,  # noqa: F401
    _word_re_per_entry,  # noqa: F401
)
from vouched.text import LANGS, arabic_script_lang, normalize
from vouched.text.normalize import _LATIN, _fold_to_bytes, _from_bytes

__all__ = ["first_person_word", "mask_source_quotes", "voice_langs", "voice_words"]


@lru_cache(maxsize=None)
def voice_words(lang: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(entries, exceptions) of ``lang``'s list, normalised; empty for an unknown ``lang``."""
    if lang not in LANGS:
        return (), ()
    raw = resources.files("vouched.guard").joinpath("voice_words", f"{lang}.txt")
    entries: list[str] = []
    exceptions: list[str] = []
    for line in raw.read_text("utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        if entry.startswith("-"):
            exceptions.append(normalize(entry[1:]))
        else:
            entries.append(_apostrophes(normalize(entry)))
    return tuple(dict.fromkeys(entries)), tuple(exceptions)


def voice_langs(sentence: str, lang: str | None) -> tuple[str, ...]:
    """The lists checked for ``sentence``: ``lang`` plus English, or English plus script."""
    if lang is not None:
        return _given_langs(lang)
    if sentence.isascii():
        return ("en",)
    # Usually one script: find its first letter, then look once for any of the others.
    m = _ANY_SCRIPT.search(sentence)
    if m is None:
        return ("en",)
    first = _script_index(m.group())
    present = {first}
    rest = _OTHER_SCRIPTS[first].search(sentence, m.end())
    if rest is not None:
        present.update(i for i, (pattern, _) in enumerate(_SCRIPT_TABLE) if pattern.search(sentence))
    found = ["en"]
    for i, (_, code) in enumerate(_SCRIPT_TABLE):
        if i in present:
            found.append(arabic_script_lang(sentence) if code == "ar" else code)
    return tuple(found)


@lru_cache(maxsize=64)
def _given_langs(lang: str) -> tuple[str, ...]:
    key = re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]
    return ("en", key) if key in LANGS and key != "en" else ("en",)


@lru_cache(maxsize=64)
def _lexicon(langs: tuple[str, ...]) -> _Lexicon:
    words: list[str] = []
    chars: list[str] = []
    exceptions: tuple[str, ...] = ()
    for code in langs:
        entries, excs = voice_words(code)
        if code == "zh":
            chars.extend(entries)
            exceptions += excs
        else:
            words.extend(entries)
    return _Lexicon(words, _char_re(chars, exceptions), tuple(dict.fromkeys(chars)),
                    english="en" in langs)


# lang → its lexicon (what _lexicon(_given_langs(lang)) returns; both are cached, but two
# cached calls per sentence cost more than the search on a short one).
_BY_LANG: dict[str, _Lexicon] = {}


def first_person_word(sentence: str, lang: str | None = None) -> str | None:
    """The first first-person word of ``sentence`` (normalised), or None."""
    if lang is None:
        lex = _lexicon(voice_langs(sentence, None))
    else:
        lex = _BY_LANG.get(lang)
        if lex is None:
            lex = _lexicon(_given_langs(lang))
            if len(_BY_LANG) < 64:
                _BY_LANG[lang] = lex
    # The test for no whole-word match (see _Lexicon), on the bytes of the normalised
    # sentence where it has them: (heads, runs table) and the bytes.
    test: tuple[frozenset[bytes], bytes] | None = None
    folded_bytes = None
    if sentence.isascii():
        test = lex.heads.get(_LATIN)
        b = sentence.encode("ascii").lower()  # normalize(): lower, on ASCII
    elif sentence < "\u0980":  # (else in no alphabet: see _fold_to_bytes)
        folded_bytes = _fold_to_bytes(sentence)
        if folded_bytes is not None:
            test = lex.heads.get(folded_bytes[0])
            b = folded_bytes[1]
    no_word = test is not None and test[0].isdisjoint(b.translate(test[1]).split(b" "))
    if no_word and lex.chars is None:
        return None
    if sentence.isascii():  # normalize() inlined; no curly apostrophe to read
        norm = sentence.lower()
        if not norm.isprintable() or "  " in norm or norm.startswith(" ") or norm.endswith(" "):
            norm = " ".join(norm.split())
    else:
        norm = None if folded_bytes is None else _from_bytes(*folded_bytes)  # normalize()'s
        if norm is None:
            norm = normalize(sentence)
        if "\u2019" in norm or "\u02bc" in norm:  # _apostrophes
            norm = norm.replace("\u2019", "'").replace("\u02bc", "'")
    words1 = lex.words1
    if words1 is not None and lex.chars is None and "_" not in norm:  # _search, one pattern
        m = words1.search(norm)
        hit = None if m is None else m.group(0)
    else:
        hit = _search(lex, norm, no_word)
    if hit is not None and lex.english and hit in ("i", "us"):
        # Only now pay for the English guard, then look again without the false friends.
        hit = _search(lex, _apostrophes(normalize(_NOT_PRONOUN.sub(" ", sentence))))
    if hit is not None:
        # Only now look for titles and names that may hold the word (see _mask_titles).
        masked = _mask_titles(sentence)
        if masked != sentence:
            return first_person_word(masked, lang)
    return hit


# A quoted span (a title, or words quoted from a source), in the quotes of any language.
_TITLE_QUOTE = re.compile(
    r"“[^“”\n]{1,120}”|„[^„“”\n]{1,120}[“”]|«[^«»\n]{1,120}»|‹[^‹›\n]{1,120}›|\"[^\"\n]{1,120}\""
    r"|《[^《》\n]{1,120}》|「[^「」\n]{1,120}」|『[^『』\n]{1,120}』|〈[^〈〉\n]{1,120}〉"
)
_PIECE = re.compile(r"\S+")
_EDGE = "\"'“”‘’„«»‹›()[]{}<>.,;:!?¡¿…—–*"
_MAX_QUOTED_WORDS = 8


def _mask_titles(sentence: str) -> str:
    """``sentence`` with the spans where a first-person word is not the assistant speaking
    blanked out (each character a space):

    * a quoted span of at most ``_MAX_QUOTED_WORDS`` words (a song, book or film title,
      or a name: “Me Before You”, «Я и Москва», 《我的世界》);
    * a run of capitalised words, small lower-case words (at most 3 letters: "the", "of",
      "me") allowed between them, with at least two capitalised words of two or more
      letters besides the sentence's first word — a title written without quotes ("her
      single I Will Survive", "the film Me Before You"; not "Tessera and I", "So I
      think"). A run that starts the sentence keeps its first word ("My Life in Porto
      is..." is still held: it reads as "my");
    * a hyphenated word with a one-letter part ("I-Ching", "X-Men", "Kim Jae-I").

    Cased scripts only for the last two; quotes everywhere.
    """
    chars = list(sentence)

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if not chars[k].isspace():
                chars[k] = " "

    for m in _TITLE_QUOTE.finditer(sentence):
        if m.group(0).count(" ") < _MAX_QUOTED_WORDS:
            blank(m.start(), m.end())
    pieces = [(m.start(), m.end(), m.group(0).strip(_EDGE)) for m in _PIECE.finditer(sentence)]
    run: list[int] = []  # indices of the pieces of the current run

    def close() -> None:
        # Two capitalised words besides the sentence's first word and one-letter words (the
        # pronoun "I" itself): "Tessera and I", "So I think" are no titles.
        caps = [i for i in run if i > 0 and len(pieces[i][2]) > 1 and pieces[i][2][:1].isupper()]
        if len(caps) >= 2:
            start = run[0] + (1 if run[0] == 0 else 0)  # a run that starts the sentence keeps its first word
            for i in run:
                if i >= start:
                    blank(pieces[i][0], pieces[i][1])
        run.clear()

    for i, (a, b, core) in enumerate(pieces):
        if core[:1].isupper():
            run.append(i)
        elif run and core.isalpha() and core.islower() and len(core) <= 3 \
                and i + 1 < len(pieces) and pieces[i + 1][2][:1].isupper():
            run.append(i)  # "the", "of" inside a title
        else:
            close()
        raw = sentence[a:b]
        if "-" in core and any(len(p) == 1 and p.isalpha() for p in core.split("-")) \
                and any(p[:1].isupper() for p in core.split("-")):
            blank(a, b)
        if raw[-1:] in ".!?;:" or raw[-1:] in "”»\"":
            close()  # a title does not run over punctuation
    close()
    return "".join(chars)


def _search(lex: _Lexicon, norm: str, no_word: bool = False) -> str | None:
    """The first entry in ``norm``; ``no_word``: known to have no whole-word match."""
    if no_word:
        words = sep = None
    elif lex.fast and "_" not in norm:
        words, sep = lex.words1, lex.sep1
    else:
        words, sep = lex.general()
    if sep is not None:
        m = sep[0].match(norm) or sep[1].search(norm)
        word = None if m is None else (m.start(1), m.group(1))
    else:
        m = None if words is None else words.search(norm)
        word = None if m is None else (m.start(), m.group(0))
    if lex.chars is not None:
        for entry in lex.char_entries:
            if entry in norm:  # else the scan cannot match (see _Lexicon)
                m = lex.chars.search(norm)
                if m is not None and (word is None or m.start() < word[0]):
                    return m.group(0)
                break
    return None if word is None else word[1]


_OPEN_QUOTES = {"“": "”", "„": "“”", "«": "»", "‹": "›", '"': '"', "《": "》", "「": "」", "『": "』"}


def mask_source_quotes(sentence: str, sources: list[str]) -> str:
    """``sentence`` with every quotation whose words are, verbatim, in one of ``sources``
    blanked out: quoting a source's own first person ("told the court, “I am here to…”) is
    not the assistant speaking as the subject. A quotation runs from an opening quote to
    its closing one, or to the sentence's end when the sentence splitter cut it there.
    Compared normalised (``normalize``, whitespace collapsed), at least three words long.
    """
    out = sentence
    norm_sources = None
    i = 0
    while i < len(sentence):
        close = _OPEN_QUOTES.get(sentence[i])
        if close is None:
            i += 1
            continue
        j = i + 1
        while j < len(sentence) and sentence[j] not in close:
            j += 1
        inner = " ".join(normalize(sentence[i + 1 : j]).split()).strip(" .,;:!?…")
        if len(inner.split()) >= 3:
            if norm_sources is None:
                norm_sources = [" ".join(normalize(t).split()) for t in sources]
            if any(inner in t for t in norm_sources):
                out = out[: i + 1] + " " * (j - i - 1) + out[j:]
        i = j + 1
    return out
