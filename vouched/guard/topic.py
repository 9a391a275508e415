"""The topic of published work (``packs/topic.toml``): a pattern match that names what the
subject's talk, article or book is about does not refuse (issue 15, round 9).

``exempt(text, start, end, category)`` says whether a pattern match at ``text[start:end]``
(the matching text L1 reads) lies in such a topic: after a ``lead`` frame (a publication word,
then a topic word: "her talk on …", "su artículo sobre …"), starting no more than 8 words after
the frame, in the same sentence; or before a ``tail`` frame, for languages that put the topic
first ("… पर उनका लेख", "关于…的演讲"). Only the categories listed in the file are exempted:
private data, task and action requests are refused wherever they stand.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources

__all__ = ["exempt", "frames", "near_frames", "ZONE_WORDS", "NEAR_WORDS"]

ZONE_WORDS = 8
NEAR_WORDS = 4  # a `near` frame (the subject's advice, what she has written about) reaches this far, in one clause
# what ends a clause for a `near` frame: a colon or dash, a comma (not before a subordinate clause: "о том, как …",
# "in ihrem Blog, um …"), or a conjunction that can join a second request
_CLAUSE = re.compile(r"[,،](?!\s*(?:как|что|чтобы|где|когда|почему|que|dass|ob|um|si|whether|که|कि)(?!\w))|[:;、，：—–]|\s-\s|(?<!\w)(?:and|or|but|also|plus|then|y|e|pero|tambien|und|oder|aber|auch|et|ou|mais|aussi|"
                     r"и|или|а|но|также|و|او|أو|لكن|ثم|یا|اما|ولی|همچنین|और|या|लेकिन|तथा)(?!\w)|和|并且|而且|还有|另外|顺便|以及")
_BREAK = re.compile(r"[.?!;。？！；؟؛।]")


@lru_cache(maxsize=1)
def _load() -> tuple[frozenset[str], dict[str, tuple[re.Pattern[str], ...]], dict]:
    """The file read once: (categories, compiled frames by kind — lead, near, tail —, examples by language)."""
    from vouched.guard.packs import PLACEHOLDER, _prepare  # as the packs read their patterns (letters folded)

    raw = tomllib.loads(resources.files("vouched.guard.packs").joinpath("topic.toml").read_text("utf-8"))
    cats = frozenset(raw.pop("categories"))
    kinds: dict[str, list[re.Pattern[str]]] = {"lead": [], "near": [], "tail": []}
    examples = {}
    for lang, spec in raw.items():
        for kind, out in kinds.items():
            out += [re.compile(_prepare(p, {"S": PLACEHOLDER}, f"topic.toml [{lang}] {kind}")) for p in spec.get(kind, ())]
        examples[lang] = (tuple(spec.get("yes", ())), tuple(spec.get("no", ())))
    return cats, {kind: tuple(out) for kind, out in kinds.items()}, examples


def frames() -> tuple[frozenset[str], tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...], dict]:
    """(categories, lead frames, tail frames, the file's examples by language)."""
    cats, kinds, examples = _load()
    return cats, kinds["lead"], kinds["tail"], examples


def near_frames() -> tuple[re.Pattern[str], ...]:
    """The ``near`` lead frames of every language: the subject's advice ("what does she recommend
    for …", "что она советует для …", "有什么建议" is a tail frame) and what she has written about
    ("has she published anything on …"). Wider words than a publication's, so a narrower reach:
    the match starts at most ``NEAR_WORDS`` words after the frame, with no clause break between
    ("what does she recommend for startups, and can we hire her?" is still refused)."""
    return _load()[1]["near"]


def _leads_to(rx: re.Pattern[str], text: str, start: int, end: int, words: int, one_clause: bool) -> bool:
    """A frame of ``rx`` ends at most ``words`` words before ``start``, in the same sentence (and clause)."""
    for f in rx.finditer(text, 0, end):
        if f.start() > start:
            break
        gap = text[f.end():start]
        if _BREAK.search(gap) is None and not (one_clause and _CLAUSE.search(gap)) and len(gap.split()) <= words:
            return True
    return False


def exempt(text: str, start: int, end: int, category: str) -> bool:
    cats, kinds, _ = _load()
    if category not in cats:
        return False
    if any(_leads_to(rx, text, start, end, NEAR_WORDS, True) for rx in kinds["near"]):
        return True
    if any(_leads_to(rx, text, start, end, ZONE_WORDS, False) for rx in kinds["lead"]):
        return True
    after = text[end:]
    return any(rx.match(after) for rx in kinds["tail"])
