"""Anchors of a question: the terms an answer must be about (pure functions).

A small corpus embedded with multilingual-e5-small sits in a narrow cosine band, so L2's
threshold measures the *topic*; "Which OCR model does the British Library use?" clears it on a
portfolio that talks about OCR. The anchors are what the threshold cannot see: the names,
codes, numbers and quoted titles of the question, and its words that are rare in the
corpus. L2 coverage (vouched.answer.coverage) then requires them in the passages that would
be given.

Kinds (``Anchor.kind``):

* ``name`` — proper names. Cased scripts (Latin, Cyrillic): capitalised words and sequences
  of them ("Tessera Health", "Bank of England"); a capitalised word that opens a sentence is a
  name only when the next word is capitalised too, because "Describe …" or "Kubernetes?"
  cannot be told from a common word without a lexicon (a lone one may still be a rare word).
  German capitalises every noun, so in German only codes and mixed-case words ("PostgreSQL")
  are names. Latin-script tokens inside Persian, Arabic, Chinese, Hindi or Russian text are
  names too, and script-independent ("script_free").
* ``code`` — identifiers: letters with digits (``SEV1``, ``v2.3``, ``pg-core-2``), acronyms
  (``CER``, ``GIL``), inner capitals (``PostgreSQL``), ``snake_case`` and dotted names
  (``config.toml``). Script-independent.
* ``number`` — numbers, years, dates (digits of every script, as normalize() makes them
  ASCII). Script-independent.
* ``quoted`` — a span in quotation marks (“…”, "…", «…», „…“, 「…」, ‘…’).
* ``rare`` — a content word (analysed as the keyword index analyses it) that the corpus
  holds, in fewer than ``rare_cut`` of its chunks (needs the corpus's document frequencies;
  without them there are no rare anchors). A word in no chunk at all is not an anchor: on a
  small corpus most such words are ordinary vocabulary ("reduce", "look like", "long"), a
  question made of them is the threshold's to refuse, and a Chinese bigram that straddles
  two words is in no chunk and would look rare in every question. A number joined to a unit
  word ("12-hour", "5-minute") describes rather than identifies: it is a soft anchor of this
  kind too, counted in the rare words' share.

* ``head`` — in an evaluative question ("the best restaurant in Lisbon", «بهترین هتل»,
  "最好的餐厅"), the words it asks to rank: the content words right after the evaluative word
  (and the one right before it: "el restaurante más recomendado"), generic heads ("way",
  "place", "option" …) skipped. The sources must mention every one of them, as any name
  (``evaluative_heads``): a corpus that never names a restaurant does not know the best one,
  however close the topic. Chinese: the two characters after the evaluative word (and 的).

Excluded: the subject's name and aliases and the site's own names (``exempt_names``), stop
words, and the words of the question frame ("tell", "describe", "explica", «توضیح» …).

Persian, Arabic, Chinese and Hindi have no case: their anchors are rare words, numbers and
Latin tokens. Everything here is string work on one question; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Literal, Mapping, Sequence

from vouched.text.evaluative import evaluative_heads  # noqa: F401  (re-exported: part of this module's API)
from vouched.text.stemming import analyze
from vouched.text.words import _lang_key, stopwords, words

Kind = Literal["name", "code", "number", "quoted", "rare", "head"]
REQUIRED_KINDS: tuple[str, ...] = ("name", "code", "number", "quoted")
DEFAULT_RARE_CUT = 0.05  # share of chunks; calibrated per deployment (threshold.rare_cut)

_LATIN_LANGS = frozenset({"en", "es", "pt", "fr", "de"})
_UNCASED_LANGS = frozenset({"fa", "ar", "zh", "hi"})

# Imperatives and fillers that open or frame a question but are not what it is about.
# Normalised (lower-case, accents kept as normalize() keeps them); matched on words.
_FRAME = {
    "en": "tell describe explain list give show name summarize summarise define please know mean meaning "
          "say says said find info information detail details explain anything something kind kinds sort type types",
    "es": "dime dígame cuéntame cuénteme describe describa explica explique enumera enumere muestra menciona "
          "di por favor información detalle detalles sabe saber",
    "pt": "diga conte descreva explique liste mostre mencione informação detalhes sabe saber",
    "fr": "dis dites décris décrivez explique expliquez liste donne donnez montre nomme informations détails "
          "sais savez savoir",
    "de": "sag sagen beschreibe beschreiben erkläre erklären nenne nennen zeige liste bitte informationen details",
    "ru": "расскажи расскажите опиши опишите объясни объясните назови назовите перечисли покажи скажи "
          "скажите пожалуйста информация подробности",
    "fa": "بگو بگویید توضیح بده بدهید شرح لطفا اطلاعات درباره مورد",
    "ar": "اخبرني أخبرني اشرح صف اذكر عدد من فضلك معلومات عن حول",
    "hi": "बताइए बताओ बताएं समझाइए वर्णन कृपया जानकारी बारे",
    "zh": "告诉 介绍 解释 说明 描述 列出 请问 一下",
}

# Connectors allowed inside a capitalised sequence ("Bank of England", "Casa de Papel").
_NAME_JOIN = frozenset("of the de del da do dos das la le les van von der du di y and et und & for".split())

_QUOTES = re.compile(r"“([^”]{1,120})”|\"([^\"]{1,120})\"|«([^»]{1,120})»|„([^“”]{1,120})[“”]|"
                     r"「([^」]{1,120})」|『([^』]{1,120})』|‘([^’]{1,120})’")
# Raw tokens of cased scripts and digits: letters/digits joined by - _ . / : (a code keeps its parts).
_RAW = re.compile(r"[^\W_](?:[\w]|[-_./:'’](?=[^\W_]))*")
_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_QUANTITY = re.compile(r"\d+(?:[.,]\d+)?-[^\W\d_]+")  # 12-hour, 5-minute
_SENTENCE_END = frozenset(".!?。！？؟:;")
_OPENERS = frozenset("¿¡\"“«„'‘([「『")
_POSSESSIVE = re.compile(r"['’]s?$")


@dataclass(frozen=True)
class Anchor:
    """One term an answer must be about.

    ``terms``: analysed forms (as the keyword index stores them), all of which must be in
    one passage; ``words``: the plain normalised words, in order (codes and numbers are
    matched as this sequence; a name also matches on them when a stemmer differs).
    ``script_free``: counts against passages of any language (numbers, codes, Latin
    tokens in non-Latin text). ``df``: chunks holding it, for rare words (else None).
    """

    text: str
    kind: Kind
    terms: tuple[str, ...]
    words: tuple[str, ...]
    script_free: bool = False
    df: int | None = None


@dataclass(frozen=True)
class Anchors:
    items: tuple[Anchor, ...] = ()
    lang: str = ""

    def of(self, *kinds: str) -> tuple[Anchor, ...]:
        return tuple(a for a in self.items if a.kind in kinds)

    @property
    def required(self) -> tuple[Anchor, ...]:
        """Names, codes, numbers and quoted titles: each must be found."""
        return self.of(*REQUIRED_KINDS)

    @property
    def rare(self) -> tuple[Anchor, ...]:
        return self.of("rare")

    @property
    def heads(self) -> tuple[Anchor, ...]:
        """An evaluative question's head words: at least one must be found."""
        return self.of("head")

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(a.text for a in self.items)

    def __bool__(self) -> bool:
        return bool(self.items)


@lru_cache(maxsize=16)
def _frame_words(lang: str | None) -> frozenset[str]:
    key = _lang_key(lang)
    langs = [key] if key in _FRAME else []
    if key != "en":
        langs.append("en")  # English frame words turn up in every language's questions
    out: set[str] = set()
    for k in langs:
        out.update(words(_FRAME[k]))
    return frozenset(out)


@lru_cache(maxsize=16)
def _frame_terms(lang: str | None) -> frozenset[str]:
    return frozenset(analyze(" ".join(_frame_words(lang)), lang))


def _is_latin_word(tok: str) -> bool:
    return any("a" <= c.lower() <= "z" for c in tok) and all(ord(c) < 0x250 or not c.isalpha() for c in tok)


def _is_code(tok: str) -> bool:
    letters = [c for c in tok if c.isalpha()]
    if not letters:
        return False
    has_digit = any(c.isdigit() for c in tok)
    if has_digit:
        return True  # SEV1, v2.3, pg-core-2, H200
    if "_" in tok or ("." in tok and not tok.endswith(".")):
        return True  # max_connections, config.toml
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return True  # CER, GIL, OCR
    # an inner capital after a lower-case letter: PostgreSQL, iPhone, GitHub
    return any(a.islower() and b.isupper() for a, b in zip(tok, tok[1:]))


def _capitalised(tok: str) -> bool:
    return tok[:1].isupper() and not tok.isupper() if len(tok) > 1 else False


def _raw_tokens(text: str) -> list[tuple[str, bool]]:
    """(token, opens a sentence) for each raw token, possessives stripped."""
    out: list[tuple[str, bool]] = []
    last_end = 0
    first = True
    for m in _RAW.finditer(text):
        gap = text[last_end:m.start()]
        initial = first or any(c in _SENTENCE_END for c in gap)
        if not initial and gap.strip() and all(c in _OPENERS or c.isspace() for c in gap) and out == []:
            initial = True
        tok = _POSSESSIVE.sub("", m.group(0)) or m.group(0)
        out.append((tok, initial))
        last_end, first = m.end(), False
    return out


def _exempt_words(names: Iterable[str]) -> frozenset[str]:
    out: set[str] = set()
    for n in names:
        for w in words(n):
            out.add(_POSSESSIVE.sub("", w))
    return frozenset(out)


def _plain(tok: str) -> tuple[str, ...]:
    return tuple(_POSSESSIVE.sub("", w) or w for w in words(tok))


def _make(text: str, kind: Kind, lang: str, *, script_free: bool) -> Anchor | None:
    plain = _plain(text)
    if not plain:
        return None
    if kind in ("code", "number"):
        return Anchor(text=text, kind=kind, terms=plain, words=plain, script_free=script_free)
    terms = tuple(dict.fromkeys(analyze(text, lang))) or plain
    return Anchor(text=text, kind=kind, terms=terms, words=plain, script_free=script_free)


def question_anchors(
    text: str,
    lang: str,
    *,
    exempt_names: Sequence[str] = (),
    doc_freq: Mapping[str, int] | None = None,
    n_docs: int = 0,
    rare_cut: float = DEFAULT_RARE_CUT,
    normalized: str | None = None,
) -> Anchors:
    """The anchors of one question.

    ``normalized``: ``normalize(text)`` when the caller already has it (answer.front.Question).

    ``doc_freq`` maps analysed terms to the number of chunks holding them (a term missing
    from it is in none) out of ``n_docs``; without it (or with ``rare_cut`` 0) no word is rare.
    """
    key = _lang_key(lang) or ""
    text = text.translate(_DIGITS)
    exempt = _exempt_words(exempt_names)
    stop = stopwords(key) | stopwords("en")
    frame = _frame_words(key)
    found: list[Anchor] = []
    taken: set[str] = set()  # plain words already inside an anchor

    def add(a: Anchor | None) -> None:
        if a is None or (set(a.words) <= exempt):
            return
        if a.kind not in ("code", "number") and set(a.words) <= (stop | frame | exempt):
            return
        if a.kind == "name" and set(a.words) <= taken:
            return  # already inside a quoted title
        if any(b.kind == a.kind and b.words == a.words for b in found):
            return
        found.append(a)
        taken.update(a.words)

    for m in _QUOTES.finditer(text):
        span = next(g for g in m.groups() if g is not None).strip()
        add(_make(span, "quoted", key, script_free=False))

    shouting = sum(c.isupper() for c in text) > 0.6 * max(1, sum(c.isalpha() for c in text))
    uncased = key in _UNCASED_LANGS
    tokens = _raw_tokens(text)
    soft: list[Anchor] = []
    i = 0
    while i < len(tokens):
        tok, initial = tokens[i]
        if _NUMBER.fullmatch(tok):
            add(_make(tok, "number", key, script_free=True))
            i += 1
            continue
        if _QUANTITY.fullmatch(tok):
            plain = _plain(tok)
            soft.append(Anchor(text=tok, kind="rare", terms=plain, words=plain, script_free=True, df=None))
            taken.update(plain)
            i += 1
            continue
        if not shouting and _is_code(tok):
            add(_make(tok, "code", key, script_free=True))
            i += 1
            continue
        if (uncased or key == "ru") and _is_latin_word(tok) and len(tok) >= 2:
            # a Latin token inside Persian, Arabic, Chinese, Hindi or Russian text
            j = i + 1
            while j < len(tokens) and _is_latin_word(tokens[j][0]) and not _NUMBER.fullmatch(tokens[j][0]):
                j += 1
            span = " ".join(t for t, _ in tokens[i:j])
            if not set(_plain(span)) <= (stop | exempt):
                add(_make(span, "name", key, script_free=True))
            i = j
            continue
        if shouting or uncased or key == "de" or not _capitalised(tok):
            i += 1
            continue
        # a capitalised sequence, connectors allowed between capitalised words
        j = i + 1
        while j < len(tokens):
            t, _ = tokens[j]
            if _capitalised(t) and not _is_code(t):
                j += 1
            elif t.lower() in _NAME_JOIN and j + 1 < len(tokens) and _capitalised(tokens[j + 1][0]):
                j += 2
            else:
                break
        seq = [t for t, _ in tokens[i:j]]
        while seq and (seq[0].lower() in stop or seq[0].lower() in frame or seq[0].lower() in exempt):
            seq.pop(0)
        while seq and (seq[-1].lower() in _NAME_JOIN or seq[-1].lower() in exempt):
            seq.pop()
        kept = [t for t in seq if t.lower() not in exempt]
        lone_initial = initial and j == i + 1
        if kept and not lone_initial and not (len(kept) == 1 and len(kept[0]) < 2):
            add(_make(" ".join(seq if len(kept) == len(seq) else kept), "name", key,
                      script_free=all(_is_latin_word(t) for t in kept) and key in _LATIN_LANGS))
        i = j

    for h in evaluative_heads(text, key, skip=taken | exempt, frame=frame,
                              normalized=None if normalized is None else normalized.translate(_DIGITS)):
        head = _make(h, "head", key, script_free=False)
        if head is not None and not any(b.kind == "head" and b.words == head.words for b in found):
            found.append(head)

    if doc_freq is not None and n_docs > 0 and rare_cut > 0:
        anchored = {t for a in found for t in a.terms} | set(taken)
        skip = anchored | _frame_terms(key) | frozenset(analyze(" ".join(exempt), key)) | exempt
        for term in dict.fromkeys(analyze(text, key)):
            if term in skip or term[:1].isdigit():
                continue
            df = int(doc_freq.get(term, 0))
            if df == 0:
                continue  # a word the corpus never uses: general vocabulary or off-topic, the threshold's call
            if df / n_docs < rare_cut:
                found.append(Anchor(text=term, kind="rare", terms=(term,), words=(term,), df=df))
    return Anchors(items=tuple(found) + tuple(soft), lang=key)

