"""An in-memory BM25 index for keyword search over large SQLite corpora.

Why. FTS5 scores every row that contains any query term before it can sort: at 1M chunks a
question whose terms are common ("what", stems like "use") touches hundreds of thousands
of rows and one keyword search took ~500 ms (`vouched bench scale --sizes 1m`). This index
follows bm25s (Lù 2024, see ../shared/STYLE.md): BM25's per-(term, chunk) part is computed
once at ingest and stored as one posting list per term (row positions + float32 weights,
CSC layout); a query sums the posting lists of its terms with one `np.bincount`, masks by
the filters, and takes the top k with `argpartition`. The work per query is proportional to
the postings of the query's terms, in C, with no per-row Python.

Same scores as FTS5. The weights are FTS5's bm25() (k1 = 1.2, b = 0.75, idf = ln((N − n +
0.5)/(n + 0.5)), clamped to 1e-6 when not positive; N counts every chunk of the version,
all tenants, as FTS5's does). Terms are the store's analysed terms (`vouched.text.analyze`,
already normalised, stemmed, Chinese as bigrams), matched whole; Latin letters are folded
as FTS5's `remove_diacritics 2` folds them ("café" = "cafe"); a chunk's length is counted in
FTS5's tokens. One difference: FTS5's tokenizer splits an analysed term at "." "," or "'"
("3.5" becomes the phrase "3 5", scored as a phrase); here such a term matches only itself,
as a word. The agreement with FTS5 is measured by the tests (same
top 10 on a shared corpus) and by `vouched bench scale` (keyword top-10 overlap).

Persistence. One `.kw.npz` file per corpus version beside the SQLite file, named by version
id and content hash like the ANN index, written to a temp file before the version's write
transaction and renamed into place inside it; loaded once per process (a 1M-chunk index
loads in seconds), rebuilt from the `chunks.terms` column when missing.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from vouched.store.ann import replace_with, temp_beside

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # FTS5: "if the IDF is negative or zero, use a small positive value"
SUFFIX = ".kw.npz"
_BATCH = 20_000


@lru_cache(maxsize=200_000)
def fts5_tokens(term: str) -> int:
    """How many tokens FTS5's unicode61 tokenizer (categories L* N* Co M*) makes of `term`:
    a stored term like "3.5" or "o'neil" is two. Document lengths are counted this way, so
    that BM25's length normalisation is FTS5's."""
    if term.isascii():
        n, inside = 0, False
        for c in term:
            if c.isalnum():
                if not inside:
                    n, inside = n + 1, True
            else:
                inside = False
        return n
    n, inside = 0, False
    for c in term:
        cat = unicodedata.category(c)
        if cat[0] in "LNM" or cat == "Co":
            if not inside:
                n, inside = n + 1, True
        else:
            inside = False
    return n


@lru_cache(maxsize=200_000)
def fold(term: str) -> str:
    """A term with Latin diacritics removed, as FTS5's unicode61 `remove_diacritics 2` does."""
    if term.isascii():
        return term
    out = []
    for c in term:
        if ord(c) < 0x80 or not ("\u00c0" <= c <= "\u024f" or "\u1e00" <= c <= "\u1eff"):
            out.append(c)
            continue
        base = unicodedata.normalize("NFD", c)[0]
        out.append(base if base.isascii() else c)
    # a combining mark typed separately after a Latin letter ("e\u0301") goes too
    s = "".join(out)
    if any(unicodedata.combining(c) for c in s):
        kept = []
        for c in s:
            if unicodedata.combining(c) and kept and kept[-1].isascii() and kept[-1].isalpha():
                continue
            kept.append(c)
        s = "".join(kept)
    return s


def sum_postings(parts: Sequence[tuple[np.ndarray, np.ndarray]], n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows ascending, summed weights) over posting slices (rows ascending within each, the
    term's weights already times its idf), of an index of `n_rows` rows. Shared by this index
    and PostgreSQL's (vouched.store.pg_keyword). Every weight is > 0, so a matching row's sum is too."""
    if len(parts) == 1:
        return parts[0][0].astype(np.int64), parts[0][1]
    rows = np.concatenate([r for r, _ in parts])
    w = np.concatenate([x for _, x in parts])
    if len(rows) * 16 < n_rows:  # few postings: a sort-based sum beats an n-row array
        uniq, inv = np.unique(rows, return_inverse=True)
        return uniq.astype(np.int64), np.bincount(inv, weights=w)
    dense = np.bincount(rows, weights=w, minlength=n_rows)
    hit = np.flatnonzero(dense)
    return hit, dense[hit]


class KeywordIndex:
    """BM25 posting lists over one corpus version; rows are positions in rowid order."""

    def __init__(self, vocab: dict[str, int], indptr: np.ndarray, rows: np.ndarray, weights: np.ndarray,
                 idf: np.ndarray, n_rows: int) -> None:
        self.vocab = vocab
        self.indptr = indptr  # (V + 1,) int64: postings of term t are [indptr[t], indptr[t+1])
        self.rows = rows  # int32 row positions, sorted within each term
        self.weights = weights  # float32 BM25 tf part, length-normalised
        self.idf = idf  # float32 per term
        self.n_rows = n_rows

    @property
    def size(self) -> int:
        return self.n_rows

    # -- build ----------------------------------------------------------------------------
    @classmethod
    def build(cls, docs: Iterable[str], n_rows: int | None = None,
              progress: Callable[[int], None] | None = None) -> "KeywordIndex":
        """Index `docs` (each a space-separated string of analysed terms), in order."""
        raw: dict[str, int] = {}  # term as stored -> raw id
        to_folded: list[int] = []  # raw id -> folded id
        raw_ntok: list[int] = []  # raw id -> FTS5 tokens in it
        folded: dict[str, int] = {}
        pair_keys: list[np.ndarray] = []
        pair_tf: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        row0 = 0
        batch: list[str] = []

        def flush() -> None:
            nonlocal row0
            if not batch:
                return
            toks_per_doc = [d.split() for d in batch]
            lens = np.fromiter((len(t) for t in toks_per_doc), dtype=np.int64, count=len(batch))
            flat = [t for ts in toks_per_doc for t in ts]
            for t in set(flat).difference(raw):
                raw[t] = len(raw)
                to_folded.append(folded.setdefault(fold(t), len(folded)))
                raw_ntok.append(fts5_tokens(t))
            ids = np.fromiter(map(raw.__getitem__, flat), dtype=np.int64, count=len(flat))
            fmap = np.asarray(to_folded, dtype=np.int64)
            term = fmap[ids] if len(ids) else ids
            doc = np.repeat(np.arange(row0, row0 + len(batch), dtype=np.int64), lens)
            keys, tf = np.unique((term << 32) | doc, return_counts=True)  # sorted by term, then row
            pair_keys.append(keys)
            pair_tf.append(tf.astype(np.float32))
            # FTS5's length of each row: its stored terms counted as unicode61 tokens
            ntok = np.asarray(raw_ntok, dtype=np.float64)[ids] if len(ids) else np.zeros(0)
            lengths.append(np.bincount(doc - row0, weights=ntok, minlength=len(batch)))
            row0 += len(batch)
            if progress:
                progress(len(batch))
            batch.clear()

        for d in docs:
            batch.append(d)
            if len(batch) >= _BATCH:
                flush()
        flush()
        n = row0 if n_rows is None else n_rows
        if n != row0:
            raise ValueError(f"KeywordIndex.build: {row0} documents given, {n} expected")
        vocab = folded
        v = len(vocab)
        keys = np.concatenate(pair_keys) if pair_keys else np.zeros(0, dtype=np.int64)
        tf = np.concatenate(pair_tf) if pair_tf else np.zeros(0, dtype=np.float32)
        # batches are each sorted by (term, row) and rows grow across batches: a stable sort on
        # the term alone gives (term, row) order overall
        term = (keys >> 32).astype(np.int64)
        order = np.argsort(term, kind="stable")
        term = term[order]
        row = (keys[order] & 0xFFFFFFFF).astype(np.int32)
        tf = tf[order]
        del keys, order
        dl = np.concatenate(lengths).astype(np.float32) if lengths else np.zeros(0, dtype=np.float32)
        avgdl = float(dl.mean()) if n and dl.sum() > 0 else 1.0
        norm = K1 * (1.0 - B + B * dl / np.float32(avgdl))
        weights = (tf * np.float32(K1 + 1.0) / (tf + norm[row])).astype(np.float32)
        df = np.bincount(term, minlength=v).astype(np.float64)
        idf = np.log((n - df + 0.5) / (df + 0.5))
        idf = np.where(idf > 0, idf, IDF_FLOOR).astype(np.float32)
        indptr = np.zeros(v + 1, dtype=np.int64)
        np.cumsum(df.astype(np.int64), out=indptr[1:])
        return cls(vocab, indptr, row, weights, idf, n)

    # -- search ---------------------------------------------------------------------------
    def scores(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(rows, scores) of every row holding at least one of `terms`; rows ascending."""
        tids = sorted({t for t in (self.vocab.get(fold(x)) for x in dict.fromkeys(terms) if x) if t is not None})
        if not tids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        parts = []
        for t in tids:
            a, b = int(self.indptr[t]), int(self.indptr[t + 1])
            parts.append((self.rows[a:b], self.weights[a:b] * self.idf[t]))
        rows, sc = sum_postings(parts, self.n_rows)
        return rows, sc.astype(np.float32, copy=False)

    def search(self, terms: Sequence[str], allowed: np.ndarray | None, limit: int) -> list[tuple[int, float]]:
        """The `limit` best rows (row, score) among `allowed` (a bool mask; None: all), best first."""
        if limit <= 0:
            return []
        rows, sc = self.scores(terms)
        if allowed is not None and len(rows):
            keep = allowed[rows]
            rows, sc = rows[keep], sc[keep]
        if not len(rows):
            return []
        k = min(limit, len(rows))
        top = np.argpartition(-sc, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        # best first; ties by row (insertion order), which is deterministic
        top = top[np.lexsort((rows[top], -sc[top]))]
        return [(int(rows[i]), float(sc[i])) for i in top]

    # -- files ----------------------------------------------------------------------------
    def write_temp(self, beside: Path) -> Path:
        """Write to a temp file in `beside`'s folder (renamed into place by the caller)."""
        return temp_beside(beside, ".kw.tmp", lambda tmp: self._write(Path(tmp)))

    def save(self, path: Path) -> None:
        """Write atomically: a temp file in the same folder, then rename over `path`."""
        replace_with(self.write_temp(path), path)

    def _write(self, path: Path) -> None:
        terms = sorted(self.vocab, key=self.vocab.__getitem__)
        blob = "\n".join(terms).encode("utf-8")
        with open(path, "wb") as fh:
            np.savez(fh, indptr=self.indptr, rows=self.rows, weights=self.weights, idf=self.idf,
                     vocab=np.frombuffer(blob, dtype=np.uint8), n_rows=np.array([self.n_rows], dtype=np.int64),
                     format=np.array([1], dtype=np.int64))

    @classmethod
    def load(cls, path: Path) -> "KeywordIndex":
        with np.load(path, allow_pickle=False) as z:
            if int(z["format"][0]) != 1:
                raise ValueError(f"{path}: unknown keyword index format {int(z['format'][0])}")
            blob = z["vocab"].tobytes().decode("utf-8")
            terms = blob.split("\n") if blob else []
            idx = cls({t: i for i, t in enumerate(terms)}, z["indptr"], z["rows"], z["weights"], z["idf"],
                      int(z["n_rows"][0]))
        if len(idx.indptr) != len(terms) + 1:
            raise ValueError(f"{path}: {len(terms)} terms but {len(idx.indptr) - 1} posting lists")
        return idx
