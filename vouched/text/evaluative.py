"""Evaluative questions: "the best restaurant in Lisboa", «بهترین رستوران», "最好的餐厅" (pure).

An evaluative question asks the sources to rank or judge something: its *heads* (what is
ranked) are anchors of kind ``head`` (vouched.text.anchors), and L2 coverage requires each in a
passage of the question's language (vouched.answer.coverage): a corpus that never mentions a
restaurant cannot know the best one, however close its topic. See docs/coverage.md,
"Evaluative questions".
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from vouched.text.words import _lang_key, stopwords, words
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


def evaluative_heads(text: str, lang: str, *, skip: Iterable[str] = (), frame: Iterable[str] = (),
                     normalized: str | None = None) -> tuple[str, ...]:
    """The words an evaluative question asks to rank ("What is the best restaurant in Lisboa?"
    → ("restaurant",)); () when the question judges nothing. ``skip``: words already anchors
    (names, codes) or exempt; ``frame``: the question-frame words of the language. Pure; per
    language, from small lexicons (``_EVALUATIVE``). ``normalized``: ``normalize(text)`` when
    the caller has it (read instead of normalising again)."""
    key = _lang_key(lang) or ""
    entries, generic = _evaluative(key)
    if not entries:
        return ()
    if key == "zh":
        return _han_heads(text, frozenset(_GENERIC_HEADS["zh"].split()), normalized)
    ws = words(text) if normalized is None else words(normalized, normalized=True)
    stop = stopwords(key) | stopwords("en")
    frame = frozenset(frame)
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


def _han_heads(text: str, generic: frozenset[str], normalized: str | None = None) -> tuple[str, ...]:
    """Chinese: the two characters after the evaluative word (的 skipped), unless generic."""
    from vouched.text import normalize

    t = normalize(text) if normalized is None else normalized
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
