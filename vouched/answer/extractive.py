"""The default generator: no model at all — the sources' own sentences, cited.

For each sentence of the prompt's sources it computes a sentence-level score from the
question (dense cosine with the bundled embedder, and keyword coverage of the question's
content words), keeps the best few that clear a floor, and writes them in a readable order
(by source, then by position in the source), each ending with its source marker. Sentences
in the first person are skipped: the site's own "I built…" must not become the assistant's
voice. Its output then passes the same sentence gate as any model's.

When no sentence clears the floor it writes the NO_ANSWER token, which the pipeline turns
into the fixed refusal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from vouched.embed.base import Embedder
from vouched.guard.prompt import NO_ANSWER, PromptSource
from vouched.llm.base import ProviderStream, StreamPiece, Usage
from vouched.retrieve.evidence import clip_cosine, coverage
from vouched.text import analyze, split_sentences, words

MIN_WORDS = 4
TOP_SOURCES = 4  # sentences are taken from the best few passages only
# Sentence score weights: sentence-level dense cosine, keyword coverage, and the rank of the
# passage it comes from (1/rank). Sentence similarity alone favours sentences that repeat the
# question's names; the passage prior keeps the answer in the passage retrieval ranked first.
W_DENSE, W_KEYWORD, W_RANK = 0.55, 0.35, 0.10
MAX_SENTENCE_CHARS = 600
_TRAILING_PUNCT = re.compile(r"([.!?。！？؟।]+[\"'”’»)\]]*)\s*$")
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


@dataclass(frozen=True)
class ScoredSentence:
    source: int
    position: int
    text: str
    score: float
    dense: float
    keyword: float


def add_marker(sentence: str, number: int) -> str:
    """'She built it.' → 'She built it [1].' (the marker before the final punctuation)."""
    s = " ".join(sentence.split())
    m = _TRAILING_PUNCT.search(s)
    if m:
        return f"{s[: m.start()].rstrip()} [{number}]{m.group(1)}"
    return f"{s} [{number}]."


def candidate_sentences(sources: Sequence[PromptSource], lang: str | None) -> list[tuple[int, int, str, str]]:
    """(source number, position, sentence, context): the context is the sentence's section
    heading (or the title), which often carries what the sentence is about ("SEV1")."""
    from vouched.guard.voice import first_person_word

    out = []
    for s in sources:
        context = s.section.split(" > ")[-1] if s.section else s.title
        for pos, sent in enumerate(split_sentences(s.text)):
            sent = _LIST_MARK.sub("", sent).strip()
            if len(words(sent)) < MIN_WORDS or len(sent) > MAX_SENTENCE_CHARS:
                continue
            if sent.endswith(":"):  # a lead-in to a list, not a statement
                continue
            if first_person_word(sent, lang) is not None:
                continue
            out.append((s.number, pos, sent, context))
    return out


def score_sentences(
    question: str, cands: Sequence[tuple[int, int, str, str]], embedder: Embedder | None, lang: str | None
) -> list[ScoredSentence]:
    q_terms = analyze(question, lang, unique=True)
    dense = np.zeros(len(cands), dtype=np.float32)
    if embedder is not None and cands:
        try:
            qv = embedder.embed_queries([question])[0]
            dense = embedder.embed_passages([f"{c[3]}: {c[2]}" if c[3] else c[2] for c in cands]) @ qv
        except Exception:  # embedder down: keyword coverage alone still ranks
            dense = np.zeros(len(cands), dtype=np.float32)
    out = []
    for (num, pos, text, context), d in zip(cands, dense):
        kw = coverage(q_terms, analyze(f"{context} {text}", lang, unique=True), min_matching=1)
        dd = clip_cosine(float(d))
        out.append(ScoredSentence(num, pos, text, W_DENSE * dd + W_KEYWORD * kw + W_RANK / num, dd, kw))
    return out


def choose(scored: Sequence[ScoredSentence], k: int, margin: float = 0.03, floor: float = 0.0) -> list[ScoredSentence]:
    """The best k within `margin` of the best score (and above `floor`), in reading order."""
    if not scored:
        return []
    ranked = sorted(scored, key=lambda s: (-s.score, s.source, s.position))
    best = ranked[0].score
    if best < floor:
        return []
    picked = [s for s in ranked if s.score >= best - margin][:k]
    seen: set[str] = set()
    unique = []
    for s in picked:
        key = " ".join(words(s.text))
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return sorted(unique, key=lambda s: (s.source, s.position))


class ExtractiveGenerator:
    """Writes cited sentences of the sources; costs nothing and reserves nothing."""

    name = "extractive"
    model = "extractive"

    def __init__(self, embedder: Embedder | None, max_sentences: int = 3, floor: float = 0.0) -> None:
        self.embedder = embedder
        self.max_sentences = max_sentences
        self.floor = floor

    def plan(self, question: str, sources: Sequence[PromptSource], lang: str | None) -> list[str]:
        from vouched.answer.answer_type import question_type, satisfies

        top = sorted(sources, key=lambda s: s.number)[:TOP_SOURCES]
        cands = candidate_sentences(top, lang)
        kind = question_type(question)
        if kind is not None:
            # "how long / when / how many" is not answered by a sentence with no figure in it
            cands = [c for c in cands if satisfies(c[2], kind)]
        scored = score_sentences(question, cands, self.embedder, lang)
        picked = choose(scored, self.max_sentences, floor=self.floor)
        if not picked:
            return [NO_ANSWER]
        return [add_marker(s.text, s.source) for s in picked]

    def stream_text(self, sentences: Sequence[str]) -> ProviderStream:
        return stream_of(sentences, name=self.name, model=self.model)


def stream_of(sentences: Sequence[str], *, name: str = "extractive", model: str = "extractive") -> ProviderStream:
    """A ProviderStream that yields the given sentences, then a zero-cost final piece."""

    async def source(_stream: ProviderStream):
        for s in sentences:
            yield StreamPiece(text=s + " ")
        yield StreamPiece(usage=Usage(input_tokens=0, output_tokens=0), finish_reason="stop")

    return ProviderStream(source, provider=name, model=model)
