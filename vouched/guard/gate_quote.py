"""An unmarked sentence that quotes a source is attributed to it (the gate's ``missing_marker`` rule).

Why. Models that follow the prompt still now and then answer with one sentence copied from a
source and no marker ("You can track up to 20 parcels at once by entering one tracking number
per line."): ``missing_marker`` held four such answers in five of the real-model run's false
holds (benchmarks/real-model/round4). Holding a sentence the reader could find, word for word,
in a source shown to them protects no one; releasing an unmarked sentence on trust would break
the promise. So the gate looks for the source the sentence *quotes* and, when there is one,
cites it on the model's behalf: the sentence is then checked by every other rule against
exactly that source, as if the model had written the marker, and the reader gets that source.

What counts as a quote — stricter than anything a cited sentence has to meet (a cited sentence
needs its values and names in its sources; a quote needs every word):

* every word of the sentence (``vouched.text.words``: normalised, case- and digit-folded
  tokens; Han as bigrams) appears in the source, **in order**, in one span;
* the span may hold a few source words the sentence leaves out — at most one per
  ``_WORDS_PER_SKIP`` words of the sentence ("The primary on-call engineer acknowledges …"
  quoted as "The primary on-call acknowledges …") — and only content words: never a stop word,
  a digit, or a word that limits or reverses a statement (``_KEEP``: not, never, unless,
  except, only, without … in the ten languages), so a quote cannot drop the "not" of
  "is not available";
* nothing is added: a sentence with one word the span lacks is not a quote;
* at least ``_MIN_WORDS`` words: "5." repeats a source's value but quotes nothing.

When several sources hold such a span, the lowest-numbered is cited (the pipeline numbers
sources best first). Pure, cached per source text; it runs only on sentences the gate would
otherwise hold, so the released path pays nothing for it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Iterable

from vouched.text.words import stopwords, words

_WORDS_PER_SKIP = 8  # a sentence of n words may leave out n // 8 source words
_MIN_WORDS = 4  # "5." or "In 2019." repeats a source's words but quotes nothing
# Words a quote may never leave out: negation, limits, exceptions and conditions. Normalised
# as `words` normalises (lower case; Persian/Arabic letters folded by `normalize`).
_KEEP_WORDS = """
not no never none nor neither without unless except only nobody nothing cannot can't don't doesn't isn't aren't wasn't weren't won't
no nunca jamás jamas ningún ningun ninguna nada sin salvo excepto solo sólo tampoco ni
não nao nunca nenhum nenhuma nada sem salvo exceto apenas só so nem
ne pas jamais aucun aucune rien sans sauf seulement uniquement ni non
nicht nie niemals kein keine keinen keiner ohne außer ausser nur weder noch
не нет никогда ни без кроме только нельзя
نه نمی نیست هیچ بدون جز فقط مگر هرگز
لا لم لن ليس ليست غير بدون إلا الا فقط أبدا ابدا
नहीं न कभी बिना केवल सिर्फ़ सिर्फ मत
不 没 没有 无 非 未 别 仅 只 除
"""


@lru_cache(maxsize=1)
def _keep() -> frozenset[str]:
    out: set[str] = set()
    for w in _KEEP_WORDS.split():
        out.update(words(w))
    return frozenset(out)


@lru_cache(maxsize=512)
def _source_words(text: str) -> tuple[tuple[str, ...], dict[str, tuple[int, ...]]]:
    toks = tuple(words(text))
    where: dict[str, list[int]] = {}
    for i, t in enumerate(toks):
        where.setdefault(t, []).append(i)
    return toks, {t: tuple(p) for t, p in where.items()}


def _skippable(tok: str, stop: frozenset[str], keep: frozenset[str]) -> bool:
    return tok not in stop and tok not in keep and not any(c.isdigit() for c in tok) and not any(
        tok.startswith(p) for p in ("نمی", "نمي"))  # a Persian negated verb


def _matches_from(sent: list[str], src: tuple[str, ...], start: int, budget: int,
                  stop: frozenset[str], keep: frozenset[str]) -> bool:
    """Whether ``sent`` (whose first word is ``src[start]``) follows in ``src`` from
    ``start`` with at most ``budget`` skippable source words left out."""
    j = start + 1
    for tok in sent[1:]:
        skipped = 0
        while j < len(src) and src[j] != tok:
            if skipped == budget or not _skippable(src[j], stop, keep):
                return False
            skipped += 1
            j += 1
        if j == len(src):
            return False
        budget -= skipped
        j += 1
    return True


def is_quote(sentence: str, source: str) -> bool:
    """Whether ``sentence`` (markers already stripped) quotes ``source``, as the module says."""
    sent = words(sentence)
    if len(sent) < _MIN_WORDS:
        return False
    src, where = _source_words(source)
    starts = where.get(sent[0])
    if not starts:
        return False
    budget = len(sent) // _WORDS_PER_SKIP
    stop = stopwords(None)  # every language's: a quote in any of them drops no stop word
    keep = _keep()
    # Greedy per start is exact here: a sentence word equal to a skippable source word is
    # matched, never skipped, which can only leave more budget for later.
    return any(_matches_from(sent, src, p, budget, stop, keep) for p in starts)


def quoted_source(sentence: str, numbers: Iterable[int], text_of: Callable[[int], str]) -> int | None:
    """The lowest-numbered source ``sentence`` quotes, or None."""
    for n in sorted(numbers):
        if is_quote(sentence, text_of(n)):
            return n
    return None
