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
) -> Anchors:
    """The anchors of one question.

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

    for h in evaluative_heads(text, key, skip=taken | exempt):
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


# -- evaluative questions: "the best X", "el mejor X", «بهترین X», "最好的X" ----------------------
# Words (normalised; two-word entries match in a row) that ask the sources to rank or judge.
# Only judgement words: "most", "más", "plus" alone also make ordinary comparisons ("the most
# common cause"), so they count only in the listed pairs.
_EVALUATIVE = {
    "en": "best worst top finest greatest nicest favourite favorite recommended cheapest tastiest "
          "most_recommended most_popular",
    "es": "mejor mejores peor peores recomendado recomendada recomendados recomendadas favorito favorita "
          "más_recomendado más_recomendada más_popular más_barato más_barata",
    "pt": "melhor melhores pior piores recomendado recomendada recomendados recomendadas favorito favorita "
          "mais_recomendado mais_recomendada mais_popular mais_barato mais_barata",
    "fr": "meilleur meilleure meilleurs meilleures pire pires recommandé recommandée recommandés recommandées "
          "préféré préférée plus_populaire moins_cher",
    "de": "beste besten bester bestes schlechteste schlechtesten empfohlene empfohlenen empfehlenswert "
          "empfehlenswerte empfehlenswerteste günstigste günstigsten beliebteste beliebtesten",
    "ru": "лучший лучшая лучшее лучшие лучшего лучшую лучших лучшем худший худшая худшее худшие "
          "рекомендуемый рекомендуемая любимый любимая самый_популярный самое_популярное",
    "fa": "بهترین بدترین برترین محبوب‌ترین ارزان‌ترین",
    "ar": "أفضل أسوأ أحسن أرخص الأفضل الأسوأ",
    "hi": "सर्वश्रेष्ठ बेहतरीन सबसे_अच्छा सबसे_अच्छी सबसे_अच्छे सबसे_बुरा सबसे_सस्ता सबसे_लोकप्रिय",
    "zh": "最好 最佳 最棒 最受欢迎 最便宜 最推荐 最值得 推荐",
}
# Heads too general to say what is ranked ("the best way to …", "the best place to …"): skipped,
# the words after them are the head.
_GENERIC_HEADS = {
    "en": "way ways thing things one ones option options choice choices time place places idea ideas "
          "practice practices approach method methods kind sort type part",
    "es": "forma formas manera maneras cosa cosas opción opciones lugar lugares momento idea tipo parte",
    "pt": "forma formas maneira maneiras coisa coisas opção opções lugar lugares momento ideia tipo parte",
    "fr": "façon manière moyen chose choses option options endroit endroits moment idée type partie",
    "de": "weg art weise sache sachen möglichkeit ort orte zeit idee teil",
    "ru": "способ способы вариант варианты место места вещь вещи время идея",
    "fa": "راه روش گزینه جای جا زمان چیز",
    "ar": "طريقة طريقه خيار مكان وقت شيء شيء",
    "hi": "तरीका विकल्प जगह समय चीज़",
    "zh": "方法 方式 选择 地方 时间 办法 一个 一下 几个 哪个 哪家 哪些 什么 是什 是哪",
}
# The participle of a compound evaluative ("best-known", "top-rated", "best-selling") is not a head.
_PARTICIPLES = frozenset("known rated selling paid loved reviewed".split())
# Question determiners: "Which *hotel* in Lisboa is the nicest?" — the word after one is a head.
_WHICH = frozenset("which what qué que cuál cuáles qual quais quel quelle quels quelles welche welcher welches "
                   "welchen какой какая какое какие каком کدام أي اي".split())
_HEAD_WINDOW = 4  # words after the evaluative word in which its head is looked for
_HAN = re.compile(r"[\u4e00-\u9fff]")


@lru_cache(maxsize=16)
def _evaluative(lang: str) -> tuple[frozenset[tuple[str, ...]], frozenset[str]]:
    raw = _EVALUATIVE.get(lang, "")
    entries = frozenset(tuple(w for part in e.split("_") for w in words(part)) for e in raw.split())
    generic = frozenset(w for g in _GENERIC_HEADS.get(lang, "").split() for w in words(g))
    return frozenset(e for e in entries if e), generic


def evaluative_heads(text: str, lang: str, *, skip: Iterable[str] = ()) -> tuple[str, ...]:
    """The words an evaluative question asks to rank ("What is the best restaurant in Lisboa?"
    → ("restaurant",)); () when the question judges nothing. ``skip``: words already anchors
    (names, codes) or exempt. Pure; per language, from small lexicons (``_EVALUATIVE``)."""
    key = _lang_key(lang) or ""
    entries, generic = _evaluative(key)
    if not entries:
        return ()
    if key == "zh":
        return _han_heads(text, frozenset(_GENERIC_HEADS["zh"].split()))
    ws = words(text)
    stop = stopwords(key) | stopwords("en")
    frame = _frame_words(key)
    judged = {w for e in entries for w in e}
    skipped = set(skip) | {w.lower() for w in skip}

    def content(w: str) -> bool:
        return (w not in stop and w not in frame and w not in judged and w not in generic and w not in skipped
                and w not in _PARTICIPLES
                and not w[:1].isdigit() and len(w) > 1)

    out: list[str] = []
    if any(tuple(ws[i:i + len(e)]) == e for e in entries for i in range(len(ws))):
        for i, w in enumerate(ws[:-1]):
            if w in _WHICH and content(ws[i + 1]):
                out.append(ws[i + 1])  # "Which hotel … is the nicest?"
                break
    i = 0
    while i < len(ws):
        hit = next((e for e in sorted(entries, key=len, reverse=True) if tuple(ws[i:i + len(e)]) == e), None)
        if hit is None:
            i += 1
            continue
        j = i + len(hit)
        if i > 0 and content(ws[i - 1]):
            out.append(ws[i - 1])  # "el restaurante más recomendado", "المطعم الأفضل"
        got: list[str] = []
        vague = False  # after "way", "place" …: what is ranked is the last word of the phrase ("… to book a table")
        for w in ws[j:j + _HEAD_WINDOW + 1]:
            if w in judged or (got and not vague and (w in stop or w in frame)):
                break
            if w in generic and not got:
                vague = True
            elif content(w):
                got = [w] if vague else [*got, w]
                if len(got) == 2:
                    break
        out.extend(got)
        i = j
    return tuple(dict.fromkeys(out))


def _han_heads(text: str, generic: frozenset[str]) -> tuple[str, ...]:
    """Chinese: the two characters after the evaluative word (的 skipped), unless generic."""
    from vouched.text import normalize

    t = normalize(text)
    out: list[str] = []
    for raw in sorted(_EVALUATIVE["zh"].split(), key=len, reverse=True):
        start = 0
        while (at := t.find(raw, start)) >= 0:
            head = t[at + len(raw):].lstrip("的 ")[:2]
            if not (len(head) == 2 and all(_HAN.match(c) for c in head) and head not in generic):
                head = t[max(0, at - 2):at]  # "哪家酒店最受欢迎": the head before the judgement
            if len(head) == 2 and all(_HAN.match(c) for c in head) and head not in generic:
                out.append(head)
            start = at + len(raw)
    return tuple(dict.fromkeys(out))
