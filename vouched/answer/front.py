"""The front of the path: one frozen `Question`, built once, and a pure `route` over it.

    check_input → language → L1 (whole question, then part by part) → small talk
    → unserved language → records overview → clarify → partial | retrieval

Nothing here touches the store, a model or the clock: `route` is a pure function of the
`Question` and the deployment's `Rules`, so `eval/calibrate.py` sees exactly what the
pipeline sees (`answer/pipeline.py` dispatches on the `Route`; the trace records it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from vouched.guard.packs import Packs
from vouched.text.anchors import Anchors

RouteKind = Literal["refusal", "smalltalk", "unsupported_language", "records", "clarify", "partial", "retrieval"]


@dataclass(frozen=True)
class Previous:
    """The previous turn of a conversation."""

    question: str
    answer: str = ""


@dataclass(frozen=True)
class Rules:
    """What the front needs from the deployment (built once per pipeline from its config)."""

    packs: Packs
    subject_names: tuple[str, ...] = ()
    pronoun: str = "they"
    languages: tuple[str, ...] = ("en",)
    default_language: str = "en"
    partial_answers: bool = True
    clarify_min_content_words: int = 2
    max_question_bytes: int = 4096

    @classmethod
    def from_config(cls, config, packs: Packs) -> "Rules":
        s = config.subject
        return cls(packs=packs, subject_names=tuple(n for n in (s.name, *s.aliases) if n), pronoun=s.pronoun,
                   languages=tuple(config.languages), default_language=config.default_language,
                   partial_answers=config.guard.partial_answers,
                   clarify_min_content_words=config.guard.clarify_min_content_words,
                   max_question_bytes=config.server.max_question_bytes)


@dataclass(frozen=True)
class Question:
    """One question as every check on the path reads it (computed once, here)."""

    raw: str  # as given
    text: str  # stripped and checked (answer.analysis.check_input)
    normalized: str  # vouched.text.normalize(text)
    matching: tuple[str, ...]  # the L1/route matching forms (guard.packs.subject_texts): name → placeholder first
    lang: str
    lang_given: bool  # the caller named the language (no unserved-language check then)
    content_words: tuple[str, ...]
    anchors: Anchors  # the question's own anchors, no rare words (L2 coverage re-derives them with document frequencies)
    previous: Previous | None
    followup: str | None  # why it reads as a follow-up of `previous` (answer.followup), "ordinal", or None
    runs: tuple[tuple[str, str], ...]  # the texts L2 scores it as: ("question", …), ("joined", …), ("ordinal", …)
    parts: tuple[str, ...]  # answer.parts.split_question (one part when partial answers are off)
    about_subject: bool = False  # names the subject or uses their pronoun (guard.route.mentions_subject)

    @property
    def run_texts(self) -> dict[str, str]:
        return dict(self.runs)

    @property
    def match_text(self) -> str:
        """``guard.packs.matching_text(text)``: the question as every pattern check compares it
        (the last of ``matching``, which is the same text with the subject's name replaced first)."""
        return self.matching[-1]


@dataclass(frozen=True)
class Route:
    """Where the question goes, and why."""

    kind: RouteKind
    category: str | None = None  # the L1 category, the small-talk kind, or the clarify reason
    topic: str | None = None  # the records topic
    foreign: str | None = None  # the unserved language or script
    parts: tuple[str, ...] = ()  # partial: the parts to score
    refused_parts: tuple[tuple[str, str], ...] = ()  # partial: (part, L1 category)


def scoring_runs(text: str, previous: Previous | None, lang: str, rules: Rules,
                 anchors: Anchors | None = None, *, matching: str | None = None,
                 normalized: str | None = None) -> tuple[dict[str, str], str | None]:
    """The texts L2 scores ``text`` as, and why it reads as a follow-up (None: not one).

    Only a question that reads as a follow-up (or an ordinal: "the third one") is also
    scored joined to the previous turn (guard.threshold.scoring_queries). ``anchors``,
    ``matching``, ``normalized``: the question's own when the caller has them (a `Question`)."""
    from vouched.answer.followup import followup_reason
    from vouched.guard.route import is_ordinal, resolve_ordinal
    from vouched.guard.threshold import scoring_queries
    from vouched.text.anchors import question_anchors

    if previous is None:
        return {"question": text}, None
    item = resolve_ordinal(text, previous.answer, matching=matching)
    ordinal = item is not None or is_ordinal(text, matching=matching)
    reason = "ordinal" if ordinal else None
    if not ordinal:
        own = anchors if anchors is not None else question_anchors(text, lang, exempt_names=rules.subject_names)
        reason = followup_reason(text, own, packs=rules.packs, matching=matching, normalized=normalized)
        if reason is None:
            return {"question": text}, None
    return scoring_queries(text, previous.question, previous.answer, item, ordinal), reason


def build_question(raw: str, rules: Rules, previous: Previous | None = None, lang: str | None = None) -> Question:
    """The `Question` for ``raw``; raises InputError when it is empty or too long."""
    from vouched.answer.analysis import check_input
    from vouched.answer.parts import split_question
    from vouched.guard.packs import matching_text, subject_texts
    from vouched.guard.route import mentions_subject
    from vouched.text import content_words, detect_language, normalize
    from vouched.text.anchors import question_anchors

    text = check_input(raw, max_bytes=rules.max_question_bytes)
    chosen = lang or detect_language(text, rules.languages, rules.default_language)
    # Normalised once: every later check on the whole question reads these forms.
    normalized = normalize(text)
    anchors = question_anchors(text, chosen, exempt_names=rules.subject_names, normalized=normalized)
    match = matching_text(normalized, normalized=True)
    matching = subject_texts(text, rules.subject_names, matching=match)
    about = mentions_subject(text, rules.subject_names, rules.pronoun, texts=matching)
    parts = tuple(split_question(text)) if rules.partial_answers else (text,)
    runs, followup = scoring_runs(text, previous, chosen, rules, anchors, matching=match, normalized=normalized)
    return Question(
        raw=raw, text=text, normalized=normalized, matching=matching, lang=chosen, lang_given=lang is not None,
        content_words=tuple(content_words(normalized, chosen, normalized=True)), anchors=anchors, previous=previous,
        followup=followup, runs=tuple(runs.items()), parts=parts, about_subject=about,
    )


def route(q: Question, rules: Rules) -> Route:
    """Where ``q`` goes (pure): the first of the front's checks that takes it, else retrieval."""
    from vouched.answer.analysis import clarification, smalltalk, unsupported_language
    from vouched.guard.refusal import match_refusal
    from vouched.guard.route import match_overview

    prev_q = q.previous.question if q.previous else None
    l1 = dict(packs=rules.packs, subject_names=rules.subject_names, pronoun=rules.pronoun)
    m = match_refusal(q.text, previous_question=prev_q, texts=q.matching, **l1)
    parts = list(q.parts)
    refused: list[tuple[str, str]] = []
    if m is not None and len(parts) > 1:
        # A part that matches is refused as L1 would; the others may still be answered.
        matches = [match_refusal(p, **l1) for p in parts]
        if any(pm is None for pm in matches) and any(pm is not None for pm in matches):
            refused = [(p, pm.category) for p, pm in zip(parts, matches) if pm is not None]
            parts = [p for p, pm in zip(parts, matches) if pm is None]
            m = None
    if m is not None:
        return Route("refusal", category=m.category)
    if not refused:
        kind = smalltalk(q.text, rules.subject_names, normalized=q.normalized)
        if kind is not None:
            return Route("smalltalk", category=kind)
        if not q.lang_given:
            foreign = unsupported_language(q.text, rules.languages, normalized=q.normalized)
            if foreign is not None:
                return Route("unsupported_language", foreign=foreign)
        ov = match_overview(q.text, subject_names=rules.subject_names, pronoun=rules.pronoun,
                            previous_question=prev_q, texts=q.matching)
        if ov is not None:
            return Route("records", topic=ov.topic)
        if len(parts) == 1:
            why = clarification(q.text, has_previous=q.previous is not None,
                                min_content_words=rules.clarify_min_content_words, lang=q.lang,
                                content=q.content_words, matching=q.match_text)
            if why is not None:
                return Route("clarify", category=why)
    if len(parts) > 1 or refused:
        return Route("partial", parts=tuple(parts), refused_parts=tuple(refused))
    return Route("retrieval")


def skip_reason(r: Route) -> str | None:
    """Why calibration does not score a question as one L2 decision (None: it does)."""
    return {
        "refusal": f"L1 refuses it ({r.category})",
        "records": "the records route answers it",
        "smalltalk": f"small talk ({r.category})",
        "unsupported_language": f"a language the deployment does not serve ({r.foreign})",
        "clarify": f"asked to clarify ({r.category})",
    }.get(r.kind)
