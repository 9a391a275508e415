"""Site kinds: which L1 categories and fixed texts are in force (`[site] kind`).

    person        a portfolio: every category; texts point to the contact form.
    organisation  a support centre: speculation, meta, task in force; its prices (and
                  availability, hiring, private) refused only when listed in `site.refuse`.
    docs          a manual with no person behind it: meta and task only (and what
                  `site.refuse` lists).

Default: "person" when `[subject] name` is set, else "docs" (a folder of pages with no named
subject is most often documentation; an organisation says so).

The filter is by category *name*: a category listed in `ONLY_FOR` is in force only for the
kinds named there; every other category — meta, task, and any category a pattern pack adds
later (an action-request family, say) — is in force everywhere. A deployment's own
`guard.extra_patterns` always stay in force, whatever their category: the deployment wrote
them for this site.

For organisation and docs, the fixed texts of `texts.toml` here replace the built-in ones
(no "contact form", no "working together"); a deployment's `guard.texts` still wins.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from typing import Iterable, Literal, Mapping, Sequence

SiteKind = Literal["person", "organisation", "docs"]
KINDS: tuple[str, ...] = ("person", "organisation", "docs")

# Category → the kinds it is in force for. Anything not listed: every kind.
ONLY_FOR: Mapping[str, frozenset[str]] = {
    "fees": frozenset({"person"}),
    "availability": frozenset({"person"}),
    "hiring": frozenset({"person"}),
    "private": frozenset({"person"}),
    "speculation": frozenset({"person", "organisation"}),
}


def infer_kind(subject_name: str) -> str:
    return "person" if subject_name.strip() else "docs"


def categories_off(kind: str, refuse: Iterable[str] = ()) -> frozenset[str]:
    """The L1 categories NOT in force for `kind` (minus those the deployment asks to refuse)."""
    if kind not in KINDS:
        raise ValueError(f"unknown site kind {kind!r}; choose from {KINDS}")
    keep = set(refuse)
    return frozenset(c for c, kinds in ONLY_FOR.items() if kind not in kinds and c not in keep)


def packs_for_kind(packs, kind: str, refuse: Iterable[str] = (),
                   extra_patterns: Mapping[str, Mapping[str, Sequence[str]]] | None = None):
    """`packs` with the refusal rules of the categories off for `kind` left out (index rebuilt).

    A rule the deployment wrote (`extra_patterns`, by language, category and pattern text)
    is kept. Overview topics and follow-up words are untouched."""
    from vouched.guard.packs._index import LiteralIndex

    off = categories_off(kind, refuse)
    if not off:
        return packs
    own = {(lang, cat, str(p)) for lang, cats in (extra_patterns or {}).items() for cat, pats in cats.items() for p in pats}
    rules = tuple(r for r in packs.rules if r.group not in off or (r.lang, r.group, r.source) in own)
    if len(rules) == len(packs.rules):
        return packs
    return replace(packs, rules=rules, index=LiteralIndex.build([r.literals for r in rules]))


@lru_cache(maxsize=None)
def _neutral() -> Mapping[str, Mapping[str, str]]:
    raw = resources.files("vouched.guard.kinds").joinpath("texts.toml").read_text("utf-8")
    return tomllib.loads(raw)


def kind_text(key: str, lang: str, kind: str) -> str | None:
    """The text for `key` in `lang` that `kind` uses instead of the built-in one, or None."""
    if kind == "person":
        return None
    return _neutral().get(lang, {}).get(key)


def texts_for_kind(kind: str, overrides: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, dict[str, str]] | None:
    """The `overrides` argument of `guard.texts.fixed_text` for a site of `kind`: the kind's
    texts, with the deployment's own `guard.texts` on top."""
    base = {} if kind == "person" else {lang: dict(t) for lang, t in _neutral().items()}
    for lang, texts in (overrides or {}).items():
        base.setdefault(lang, {}).update(texts)
    return base or None
