"""The filter columns of one corpus version's rows, held in memory: what SearchFilters asks of a row.

Both stores keep them beside an in-process index so that a filter is applied inside the index
search, never after its top-k cut: the SQLite store reads them from its file when it loads a
version; the PostgreSQL store writes them with a version's dense graph (dense_blobs) and reads
them back with it. Row i is the index's label i.

Dates are day ordinals; an open start is `NO_DATE_LO`, an open end `NO_DATE_HI` and "never
superseded" `NO_DATE_HI + 1`, so one comparison per column decides a row at every date.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Iterable

import numpy as np

from vouched.types import SearchFilters

NO_DATE_LO = date.min.toordinal()
NO_DATE_HI = date.max.toordinal()

__all__ = ["Allowed", "FilterColumns", "NO_DATE_LO", "NO_DATE_HI"]


def _day(value: date | str | None, missing: int) -> int:
    if not value:
        return missing
    return (date.fromisoformat(value) if isinstance(value, str) else value).toordinal()


@dataclass(frozen=True)
class Allowed:
    """The rows one filter allows: a bool per row, their count, and the mask as a little-endian
    bitmap (faiss `IDSelectorBitmap`; None when every row is allowed)."""

    mask: np.ndarray
    count: int
    bitmap: np.ndarray | None


@dataclass(frozen=True)
class FilterColumns:
    """tenant, language, draft and validity dates of n rows, as arrays (codes for the strings)."""

    tenant: np.ndarray  # int32 codes into `tenants`
    tenants: dict[str, int]
    lang: np.ndarray  # int32 codes into `langs`
    langs: dict[str, int]
    draft: np.ndarray  # bool
    eff_from: np.ndarray  # int64 day ordinals
    eff_to: np.ndarray
    sup_from: np.ndarray
    _allowed: dict = field(default_factory=dict, compare=False, repr=False, kw_only=True)  # filter key -> Allowed

    @staticmethod
    def columns(rows: Iterable[tuple], n: int) -> dict:
        """The fields from (tenant, lang, draft, effective_from, effective_to, superseded_from) rows;
        dates as `date`, ISO text or None."""
        tenants: dict[str, int] = {}
        langs: dict[str, int] = {}
        tenant = np.empty(n, dtype=np.int32)
        lang = np.empty(n, dtype=np.int32)
        draft = np.empty(n, dtype=bool)
        ef, et, sf = (np.empty(n, dtype=np.int64) for _ in range(3))
        i = -1
        for i, r in enumerate(rows):
            tenant[i] = tenants.setdefault(r[0], len(tenants))
            lang[i] = langs.setdefault(r[1], len(langs))
            draft[i] = bool(r[2])
            ef[i] = _day(r[3], NO_DATE_LO)
            et[i] = _day(r[4], NO_DATE_HI)
            sf[i] = _day(r[5], NO_DATE_HI + 1)
        if i + 1 != n:
            raise ValueError(f"filter columns: {i + 1} rows given, {n} expected")
        return dict(tenant=tenant, tenants=tenants, lang=lang, langs=langs, draft=draft,
                    eff_from=ef, eff_to=et, sup_from=sf)

    @classmethod
    def build(cls, rows: Iterable[tuple], n: int) -> "FilterColumns":
        return cls(**cls.columns(rows, n))

    def __len__(self) -> int:
        return len(self.tenant)

    def mask(self, f: SearchFilters) -> np.ndarray:
        """The rows `f` allows (bool, one per row)."""
        code = self.tenants.get(f.tenant)
        if code is None or not len(self):
            return np.zeros(len(self), dtype=bool)
        m = self.tenant == code
        if f.langs is not None:
            codes = [self.langs[x] for x in f.langs if x in self.langs]
            m &= np.isin(self.lang, codes)
        if not f.include_drafts:
            m &= ~self.draft
        if not f.any_time:
            day = (f.as_of or date.today()).toordinal()
            m &= (self.eff_from <= day) & (self.eff_to >= day) & (self.sup_from > day)
        return m

    def allowed(self, f: SearchFilters) -> "Allowed":
        """`mask(f)` with its count and bitmap, kept per filter (tenant, languages, day, drafts):
        a day's questions share a few, so a search pays a dictionary lookup, not n comparisons."""
        key = (f.tenant, f.langs, None if f.any_time else (f.as_of or date.today()), f.include_drafts)
        got = self._allowed.get(key)
        if got is None:
            mask = self.mask(f)
            count = int(np.count_nonzero(mask))
            got = Allowed(mask, count, None if count == len(self) else np.packbits(mask, bitorder="little"))
            if len(self._allowed) >= 64:
                self._allowed.clear()
            self._allowed[key] = got
        return got

    # -- stored with a version (PostgreSQL dense_blobs) ------------------------------------------------
    def to_blobs(self) -> dict[str, bytes]:
        names = {"tenants": sorted(self.tenants, key=self.tenants.__getitem__),
                 "langs": sorted(self.langs, key=self.langs.__getitem__)}
        days = np.stack([self.eff_from, self.eff_to, self.sup_from]).astype(np.int32)  # ordinals < 2**22
        return {"col_names": json.dumps(names, ensure_ascii=False).encode("utf-8"),
                "col_tenant": self.tenant.astype(np.int32).tobytes(), "col_lang": self.lang.astype(np.int32).tobytes(),
                "col_draft": self.draft.astype(np.uint8).tobytes(), "col_days": days.tobytes()}

    BLOBS = ("col_names", "col_tenant", "col_lang", "col_draft", "col_days")

    @classmethod
    def from_blobs(cls, parts: dict[str, bytes], n: int) -> "FilterColumns":
        names = json.loads(bytes(parts["col_names"]).decode("utf-8"))
        tenant = np.frombuffer(parts["col_tenant"], dtype=np.int32)
        lang = np.frombuffer(parts["col_lang"], dtype=np.int32)
        draft = np.frombuffer(parts["col_draft"], dtype=np.uint8).astype(bool)
        days = np.frombuffer(parts["col_days"], dtype=np.int32)
        if not (len(tenant) == len(lang) == len(draft) == n and len(days) == 3 * n):
            raise ValueError(f"filter columns of {len(tenant)}/{len(lang)}/{len(draft)}/{len(days) // 3} rows, {n} expected")
        if n and (tenant.max() >= len(names["tenants"]) or lang.max() >= len(names["langs"]) or min(tenant.min(), lang.min()) < 0):
            raise ValueError("filter columns: a code outside its name list")
        days = days.reshape(3, n).astype(np.int64)
        return cls(tenant, {t: i for i, t in enumerate(names["tenants"])}, lang,
                   {x: i for i, x in enumerate(names["langs"])}, draft, days[0], days[1], days[2])
