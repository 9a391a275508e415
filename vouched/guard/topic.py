"""The topic of published work (``packs/topic.toml``): a pattern match that names what the
subject's talk, article or book is about does not refuse (issue 15, round 9).

``exempt(text, start, end, category)`` says whether a pattern match at ``text[start:end]``
(the matching text L1 reads) lies in such a topic: after a ``lead`` frame (a publication word,
then a topic word: "her talk on …", "su artículo sobre …"), starting no more than 8 words after
the frame, in the same sentence; or before a ``tail`` frame, for languages that put the topic
first ("… पर उनका लेख", "关于…的演讲"). Only the categories listed in the file are exempted:
private data, task and action requests are refused wherever they stand.

For meta, two more rules (round 11): the bare term for a system prompt is a topic when a
``generic`` qualifier stands beside it ("protecting the system prompt of a chatbot") and the
text has no ``block`` word (``generic``); and no frame at all exempts a meta match in a text
with a ``deixis`` word, one that points at this assistant ("your", "here", "你的" …).
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources

from vouched.guard.packs._text import PLACEHOLDER

__all__ = ["attributed", "exempt", "frames", "generic", "GENERIC_BEFORE", "ZONE_WORDS", "NEAR_WORDS"]

ZONE_WORDS = 8
GENERIC_BEFORE = 4  # a `generic` qualifier of a bare "system prompt" ends at most this many words before it, in one clause,
GENERIC_CHARS = 40  # and this many characters (Chinese has no spaces to count)
# a `near` frame (the subject's advice, "what does she recommend for …"; what she has written about, "has she published
# anything on …") has wider words than a publication's, so a narrower reach: this many words, in one clause ("what does she
# recommend for startups, and can we hire her?" is still refused)
NEAR_WORDS = 4
# what ends a clause for a `near` frame: a colon or dash, a comma (not before a subordinate clause: "о том, как …",
# "in ihrem Blog, um …"), or a conjunction that can join a second request (en/es/pt/fr "and/y/e/et/or/ou" not before
# an infinitive or gerund: "how to interview and hire", "entrevistar e contratar" join two verbs of one topic)
_CLAUSE = re.compile(r"[,،](?!\s*(?:как|что|чтобы|где|когда|почему|que|dass|ob|um|si|whether|که|कि)(?!\w))|[:;、，：—–]|\s-\s|(?<!\w)(?:and|or|y|e|et|ou)(?!\w)(?!\s+\w+(?:ar|er|ir|ing)\b)|"
                     r"(?<!\w)(?:but|also|plus|then|pero|tambien|und|oder|aber|auch|mais|aussi|"
                     r"и|или|а|но|также|و|او|أو|لكن|ثم|یا|اما|ولی|همچنین|और|या|लेकिन|तथा)(?!\w)|和|并且|而且|还有|另外|顺便|以及")
# what ends a clause for a `lead` frame (round 14): punctuation only — a comma (not before a subordinate clause, nor
# the Russian "о том, …"), a colon, a semicolon or a dash — so "her article on pricing was great — what does she
# charge?" and "I enjoyed her essay on consulting, so what are her rates?" are requests, while "fixed fees or hourly
# rates" (a conjunction inside one topic) stays a topic. A frame that ends at its own comma ("In her case study about
# X, …") has no comma in its gap.
_LEAD_CLAUSE = re.compile(r"(?<!том)(?<!\sто)[,،](?!\s*(?:как|что|чтобы|где|когда|почему|ли|стоит\s+ли|que|dass|ob|um|si|whether|wie|warum|"
                          r"comment|pourquoi|como|porque|если|که|कि)(?!\w))(?!\s*[¿]?\s*(?:cual|cuales|which|quel|quelle|quels|welche[nrs]?|qual|quais|какой|какую|какая|какие)(?!\w))|[:;、，：—–]|\s-\s")
_PERSONAL = frozenset({"fees", "hiring", "availability"})  # categories whose frames a first/second person undoes
_BREAK = re.compile(r"[.?!;。？！；؟؛।]")


_SINGLE = ("term", "block", "deixis", "person", "subject")  # one pattern per language, searched as one alternation of all languages


@lru_cache(maxsize=1)
def _load() -> tuple[frozenset[str], dict[str, tuple[re.Pattern[str], ...]], dict]:
    """The file read once: (categories, compiled frames by kind — lead, near, tail, generic, generic_after;
    term, block and deixis each as one regex of every language's pattern —, examples by language: (yes, no))."""
    from vouched.guard.packs import PLACEHOLDER, _prepare  # as the packs read their patterns (letters folded)

    raw = tomllib.loads(resources.files("vouched.guard.packs").joinpath("topic.toml").read_text("utf-8"))
    cats = frozenset(raw.pop("categories"))
    kinds: dict[str, list[str]] = {k: [] for k in ("lead", "near", "tail", "generic", "generic_after", "cite", *_SINGLE)}
    examples = {}
    langs: dict[str, list[str]] = {"lead": [], "tail": []}  # the language of each lead and tail frame
    for lang, spec in raw.items():
        for kind, out in kinds.items():
            pats = spec.get(kind, ())
            out += [_prepare(p, {"S": PLACEHOLDER}, f"topic.toml [{lang}] {kind}") for p in ((pats,) if isinstance(pats, str) else pats)]
            if kind in langs:
                langs[kind] += [lang] * (len(out) - len(langs[kind]))
        examples[lang] = (tuple(spec.get("yes", ())), tuple(spec.get("no", ())))
    compiled = {kind: ((re.compile("|".join(f"(?:{p})" for p in pats)),) if kind in _SINGLE else tuple(re.compile(p) for p in pats))
                for kind, pats in kinds.items()}
    # a lead or tail frame is undone by a first or second person of ITS language: the German "du" (you) is the French "du"
    # (of the), and "dans l'étude de cas de l'assureur, quel était le budget du client ?" asks for no price to us (round 18)
    persons = {lang: re.compile(_prepare(spec["person"], {"S": PLACEHOLDER}, f"topic.toml [{lang}] person"))
               for lang, spec in raw.items() if spec.get("person")}
    for kind, of in langs.items():
        compiled[f"{kind}_person"] = tuple(persons.get(lang, compiled["person"][0]) for lang in of)
    # a citation may also follow what it attributes: "… in five years, according to her keynote"
    # (one anchored regex for every language's frames: the same matches as one per frame, one call instead of twenty)
    compiled["cite_tail"] = (re.compile(r"^[\s,]*(?:[^\s.?!;,،。？！]+\s+){0,6}?[\s,]*(?:" + "|".join(f"(?:{p})" for p in kinds["cite"]) + ")"),)
    return cats, compiled, examples


def frames() -> tuple[frozenset[str], tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...], dict]:
    """(categories, lead frames, tail frames, the file's examples by language)."""
    cats, kinds, examples = _load()
    return cats, kinds["lead"], kinds["tail"], examples


def _leads_to(rx: re.Pattern[str], text: str, start: int, end: int, words: int, clause: re.Pattern[str] | None,
              max_chars: int | None = None, person: re.Pattern[str] | None = None) -> bool:
    """A frame of ``rx`` ends at most ``words`` words (and ``max_chars`` characters: Chinese has no
    spaces) before ``start``, in the same sentence (and, with ``clause``, the same clause); with
    ``person``, no first or second person stands between the frame and the end of the sentence."""
    stop = _BREAK.search(text, end)
    sentence_end = stop.start() if stop else len(text)
    for f in rx.finditer(text, 0, end):
        if f.start() > start:
            break
        gap = text[f.end():start]
        # the clause test reads on into the match, so "and" before "hiring" / "e" before "contratar" is seen joining two verbs
        split = clause is not None and any(c.start() < start for c in clause.finditer(text, f.end(), end))
        if person is not None and person.search(text, f.end(), sentence_end) is not None:
            continue  # to the end of the match's sentence: "… quanto ela cobraria da gente?"
        if (_BREAK.search(gap) is None and not split and len(gap.split()) <= words
                and (max_chars is None or len(gap) <= max_chars)):
            return True
    return False


def generic(text: str, start: int, end: int) -> bool:
    """A meta match at ``text[start:end]`` that is nothing but the bare term for a system prompt
    ("system prompt", "prompt de sistema", "системного промпта", "系统提示词" …) names prompts in
    general: a ``generic`` qualifier ends at most ``GENERIC_BEFORE`` words before it in the same
    clause ("protecting …", "a chatbot's …"), or a ``generic_after`` one follows within 3 words
    ("… of a support bot", "… against leaks"), and no ``block`` word stands anywhere in the text
    (a second person, this assistant or site, a verb that asks to show or repeat, "above",
    "verbatim", "hidden" …). Every other meta rule ("your system prompt", "show me the system
    prompt") is untouched: its match is not the bare term."""
    _, kinds, _ = _load()
    term = text[start:end].strip()
    (term_rx,), (block_rx,) = kinds["term"], kinds["block"]
    if term_rx.fullmatch(term) is None or block_rx.search(text):
        return False
    if any(_leads_to(rx, text, start, end, GENERIC_BEFORE, _CLAUSE, max_chars=GENERIC_CHARS) for rx in kinds["generic"]):
        return True
    after = text[end:]
    return any((m := rx.match(after)) is not None and _BREAK.search(after[:m.end()]) is None
               and _CLAUSE.search(after[:m.end()]) is None for rx in kinds["generic_after"])


def exempt(text: str, start: int, end: int, category: str) -> bool:
    cats, kinds, _ = _load()
    if category not in cats:
        return False
    if category == "meta":
        if kinds["deixis"][0].search(text):
            return False  # the text points at this assistant: no topic frame makes its meta match a topic
        if generic(text, start, end):
            return True
    if any(_leads_to(rx, text, start, end, NEAR_WORDS, _CLAUSE) for rx in kinds["near"]):
        return True
    # A publication frame is a topic only for the words that follow it; a first or second person
    # between the frame and the end of the match ("in her article on audits, what would it cost
    # us?", "what are your rates, according to her article?") makes the match a request again.
    # Only for what the visitor would pay or engage: "what would you recommend" is second person by nature.
    personal = category in _PERSONAL
    person = kinds["person"][0] if personal else None
    if any(_leads_to(rx, text, start, end, ZONE_WORDS, _LEAD_CLAUSE, person=own if personal else None)
           for rx, own in zip(kinds["lead"], kinds["lead_person"])):
        return True
    after = text[end:]
    if any((m := rx.match(after)) is not None and (not personal or own.search(text, start, end + m.end()) is None)
           for rx, own in zip(kinds["tail"], kinds["tail_person"])):
        return True
    return _cited(text, start, end, person, kinds)


_OWN_COMMA = re.compile(r"^\s*[,،:]?\s*[¿¡]?")  # a citation's own comma (and a Spanish opening mark after it)


def _cited(text: str, start: int, end: int, person: re.Pattern[str] | None, kinds: dict) -> bool:
    """Round 15: a match attributed to her publication ("according to her article, when should a company hire an
    outside consultant?", "según su charla, ¿cómo será el mercado dentro de cinco años?", "… через пять лет, судя по её
    докладу") is its content. A citation frame reaches across its own comma (a lead frame does not), within
    ``ZONE_WORDS`` words of the same sentence, or follows the match within six words. It is undone by the subject
    inside the match ("according to her article, what does she charge?" asks her price, not the article's) and, for
    what the visitor would pay or engage, by a first or second person in the sentence, as lead frames are."""
    (subject,) = kinds["subject"]
    matched = text[start:end]
    if PLACEHOLDER in matched or subject.search(matched):
        return False
    stop = _BREAK.search(text, end)
    sentence_end = stop.start() if stop else len(text)
    if person is not None:
        sentence_start = max((b.end() for b in _BREAK.finditer(text, 0, start)), default=0)
        if person.search(text, sentence_start, sentence_end) is not None:
            return False
    for rx in kinds["cite"]:
        for f in rx.finditer(text, 0, end):
            if f.start() > start:
                break
            gap = _OWN_COMMA.sub("", text[f.end():start])
            if _BREAK.search(gap) is None and _LEAD_CLAUSE.search(gap) is None and len(gap.split()) <= ZONE_WORDS:
                return True
    after = text[end:sentence_end + 1]
    return any(rx.match(after) is not None for rx in kinds["cite_tail"])


def attributed(text: str) -> bool:
    """Round 15: the whole question is attributed to a publication ("according to her keynote, what will the market
    look like in five years?", "Каким будет рынок через пять лет, судя по её докладу?"): a citation frame, and
    outside it neither the subject (placeholder or pronoun) nor a first or second person. L1 by meaning does not
    read such a question (its classifier has no frames: it saw "in five years" and "market" and said speculation);
    the patterns still do, and L2 answers only from the sources."""
    _, kinds, _ = _load()
    (subject,), (person,) = kinds["subject"], kinds["person"]
    for rx in kinds["cite"]:
        for f in rx.finditer(text):
            rest = text[:f.start()] + " " + text[f.end():]
            if PLACEHOLDER not in rest and subject.search(rest) is None and person.search(rest) is None:
                return True
    return False
