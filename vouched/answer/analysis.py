"""Query analysis: what a message is before it is treated as a question (pure functions).

Runs first on the path, before L1, and decides nothing about the site's content:

* ``check_input`` — empty or over-long input is an error the caller sees (``InputError``),
  never a refusal: the reader typed nothing, or pasted a document.
* ``smalltalk`` — a whole message that is only a greeting or a thanks ("hi", "thanks a
  lot!", «سلام», «ممنون», "谢谢") gets a fixed reply, with no retrieval and no model.
  Only whole messages: "hi, what does she do?" is a question. Word lists per language
  in ``vouched/guard/packs/smalltalk.toml``.
* ``unsupported_language`` — a question written in a language the deployment does not
  serve gets the fixed refusal in the default language. Decided conservatively: by
  script first (letters of a script no served language uses — Hangul, kana, Hebrew,
  Greek, Thai, Cyrillic on a site without Russian, ...), then, for Latin and Arabic
  script, only when the language is one vouched knows, the text is long enough
  (``min_words``) and the detector picks an unserved one. A short or mixed question is
  given the benefit of the doubt (it is answered, or refused later on evidence).
* ``clarification`` — a message too short or vague to retrieve on gets a fixed request
  to clarify, with no retrieval: a follow-up with no previous turn ("and the other
  one?", "¿y el segundo?", «و دومی؟»), a message with no content word at all ("what?"),
  or a bare term of fewer than ``min_content_words`` content words and no question
  word ("pricing", "Kubernetes?") — set ``guard.clarify_min_content_words = 1`` on a
  site where one word is enough to know what is meant. Greetings and thanks are not
  clarification cases (``smalltalk`` runs first).
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources
from typing import Literal, Sequence

from vouched.text import LANGS, content_words, normalize

__all__ = [
    "InputError",
    "check_input",
    "clarification",
    "smalltalk",
    "unsupported_language",
]


from vouched.errors import InputError  # noqa: E402  (drawn in the one error tree; re-exported here)


def check_input(question: str, *, max_bytes: int) -> str:
    """The question, stripped; raises ``InputError`` when empty or over ``max_bytes`` UTF-8 bytes."""
    if not isinstance(question, str):
        raise InputError(f"the question must be text, not {type(question).__name__}")
    text = question.strip()
    if not text:
        raise InputError("the question is empty: type a question about the site's content")
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise InputError(
            f"the question is {size} UTF-8 bytes; the limit is {max_bytes} "
            "(ask about one thing at a time, or raise server.max_question_bytes)")
    return text


# --- greetings and thanks ------------------------------------------------------------------

_EDGE = re.compile(r"^[\W_]+|[\W_]+$")  # punctuation, emoji and spaces at either end
_INNER_PUNCT = re.compile(r"[,!.،؛;:¡¿?？！。，]+")


@lru_cache(maxsize=1)
def _smalltalk_lists() -> dict[str, frozenset[str]]:
    raw = resources.files("vouched.guard.packs").joinpath("smalltalk.toml").read_text("utf-8")
    data = tomllib.loads(raw)
    out: dict[str, set[str]] = {"greeting": set(), "thanks": set()}
    for lang, kinds in data.items():
        if lang not in LANGS:
            raise ValueError(f"smalltalk.toml: unknown language {lang!r}")
        for kind, entries in kinds.items():
            if kind not in out:
                raise ValueError(f"smalltalk.toml [{lang}]: unknown kind {kind!r}")
            out[kind].update(_smalltalk_form(e) for e in entries)
    return {k: frozenset(v) for k, v in out.items()}


def _smalltalk_form(text: str, normalized: bool = False) -> str:
    t = _INNER_PUNCT.sub(" ", text if normalized else normalize(text))
    return " ".join(_EDGE.sub("", t).split())


def smalltalk(question: str, subject_names: Sequence[str] = (), *, normalized: str | None = None
              ) -> Literal["greeting", "thanks"] | None:
    """"greeting" or "thanks" when the whole message is one (or both: thanks wins), else None.
    ``normalized``: ``normalize(question)`` when the caller already has it (Question.normalized)."""
    form = _smalltalk_form(question) if normalized is None else _smalltalk_form(normalized, normalized=True)
    if not form or len(form) > 60:
        return None
    for name in subject_names:  # "hi Leila!", "thanks, Leila"
        n = _smalltalk_form(name)
        if n and form.endswith(" " + n):
            form = form[: -len(n) - 1].strip()
    lists = _smalltalk_lists()
    if form in lists["thanks"]:
        return "thanks"
    if form in lists["greeting"]:
        return "greeting"
    # "hello, thanks!" / "hi there thank you": a greeting followed by a thanks.
    for g in lists["greeting"]:
        if form.startswith(g + " ") and form[len(g) + 1:] in lists["thanks"]:
            return "thanks"
    return None


# --- languages the deployment does not serve ----------------------------------------------

_SCRIPT_RUNS = (
    ("latin", re.compile(r"[A-Za-zÀ-ÖØ-öø-ɏḀ-ỿ]+"), ("en", "es", "pt", "fr", "de")),
    ("arabic", re.compile(r"[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]+"), ("fa", "ar")),
    ("cyrillic", re.compile(r"[\u0400-\u052f]+"), ("ru",)),
    ("devanagari", re.compile(r"[\u0900-\u097f]+"), ("hi",)),
    ("han", re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"), ("zh",)),
    # Scripts of languages vouched does not serve at all.
    ("kana", re.compile(r"[\u3040-\u30ff]"), ()),
    ("hangul", re.compile(r"[\uac00-\ud7af\u1100-\u11ff]"), ()),
    ("hebrew", re.compile(r"[\u0590-\u05ff]+"), ()),
    ("greek", re.compile(r"[\u0370-\u03ff]+"), ()),
    ("thai", re.compile(r"[\u0e00-\u0e7f]"), ()),
    ("armenian", re.compile(r"[\u0530-\u058f]+"), ()),
    ("georgian", re.compile(r"[\u10a0-\u10ff]+"), ()),
    ("bengali", re.compile(r"[\u0980-\u09ff]+"), ()),
    ("tamil", re.compile(r"[\u0b80-\u0bff]+"), ()),
)


def _main_script(text: str) -> tuple[str, tuple[str, ...], int]:
    """(script, languages written in it, size) of the script with the most letters."""
    best = ("", (), 0)
    for name, rx, langs in _SCRIPT_RUNS:
        size = sum(len(r) for r in rx.findall(text))
        if name == "kana" and size:
            size += sum(len(r) for r in _SCRIPT_RUNS[4][1].findall(text))  # Japanese mixes kanji in
        if size > best[2]:
            best = (name, langs, size)
    return best


def unsupported_language(question: str, served: Sequence[str], *, min_words: int = 4,
                         normalized: str | None = None) -> str | None:
    """The script or language of ``question`` when the deployment does not serve it, else None.
    ``normalized``: ``normalize(question)`` when the caller already has it (Question.normalized)."""
    served_set = set(served)
    script, langs, size = _main_script(question)
    if not script or size < 2:
        return None  # digits, emoji, punctuation: nothing to decide on
    if not langs:
        return script  # Korean, Japanese, Hebrew, Greek, Thai, ...
    if served_set.isdisjoint(langs):
        return langs[0] if len(langs) == 1 else script
    if len(question.split()) < min_words:
        return None
    from vouched.text import detect_language

    # Among every language vouched knows in that script: is the best one unserved? Names
    # fool the detector ("What article of the Grundgesetz grants …" reads as German), so
    # the function words must agree: more of the unserved language's stop words than of
    # any served language's.
    found = detect_language(question, langs, default="")
    if found and found not in served_set:
        from vouched.text import stopwords, words

        tokens = words(question) if normalized is None else words(normalized, normalized=True)
        hits = {lang: sum(t in stopwords(lang) for t in tokens) for lang in langs}
        if hits[found] > max((hits[lang] for lang in langs if lang in served_set), default=0):
            return found
    return None


# --- clarification --------------------------------------------------------------------------

_QUESTION_WORD = re.compile(
    r"\b(?:what|who|when|where|why|how|which|whose|is|are|does|do|did|can|could|qu[eé]|qui[eé]n|"
    r"cu[aá]ndo|d[oó]nde|c[oó]mo|cu[aá]l|quand|o[uù]|comment|quel|quelle|was|wer|wann|wo|wie|"
    r"welche|quem|onde|qual|quanto)\b", re.IGNORECASE)
_NON_LATIN_QUESTION = re.compile(r"چه|چرا|کی|کجا|چطور|کدام|آیا|ماذا|متى|أين|كيف|هل|что|кто|когда|где|как|какой|"
                                 r"क्या|कब|कहाँ|कैसे|कौन|什么|谁|何时|哪|怎么|为什么|吗")
# Openings that only make sense after a previous turn (on matching text: lower-case,
# accents folded). Deliberately short: "why …" or "how …" open ordinary questions.
_CONNECTIVE = re.compile(
    r"(?:and|what about|how about|also|plus|but|or|same for|and what about|"
    r"y|y que hay de|que hay de|y el|y la|tambien|pero|e|e quanto a|e o|e a|"
    r"et|et pour|et le|et la|aussi|mais|und|und was ist mit|was ist mit|auch|aber|"
    r"و|ماذا عن|а|и|а что насчет|что насчет|那|还有|और)(?:\s|$)")


def clarification(question: str, *, has_previous: bool, min_content_words: int = 2,
                  lang: str | None = None, content: Sequence[str] | None = None,
                  matching: str | None = None) -> str | None:
    """Why ``question`` needs clarifying before retrieval ("followup_without_context",
    "no_content", "too_vague"), or None. ``content``: ``content_words(question, lang)`` and
    ``matching``: ``matching_text(question)`` when the caller already has them
    (answer.front.Question.content_words, .match_text)."""
    from vouched.guard.packs import default_packs, matching_text
    from vouched.guard.route import is_ordinal

    text = (matching_text(question) if matching is None else matching).strip(" ?!.¿¡؟？！。")
    if not text:
        return "no_content"
    size = len(text.split())
    if not has_previous and size <= 4:
        if _CONNECTIVE.match(text) or is_ordinal(question, matching=matching):
            return "followup_without_context"
        packs = default_packs()
        for pack in packs.by_lang.values():
            ana = pack.followup_anaphora
            if ana is not None and ana.fullmatch(text):
                return "followup_without_context"
    if has_previous:
        return None  # the previous turn gives a short or anaphoric question its meaning
    content = content_words(question, lang) if content is None else content
    if not content:
        return "no_content"
    if (len(content) < min_content_words and size <= 2
            and not _QUESTION_WORD.search(question) and not _NON_LATIN_QUESTION.search(question)):
        return "too_vague"
    return None
