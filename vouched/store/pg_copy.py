"""PostgreSQL's binary COPY format, written by hand for the store's bulk writes.

psycopg's `Copy.write_row` adapts every value through a Python dumper (arrays and, for the
vector column, a 384-float text literal: ~0.5 ms a row, most of a chunk row's cost). Here
each field is encoded once with `struct`: a vector is its big-endian float32 bytes (numpy,
whole matrix at a time), arrays are the server's array wire format. The stream is written
with `Copy.write` (raw), so it must carry the signature, the rows and the trailer itself.

Format (PostgreSQL docs, "COPY ... Binary Format"): signature `PGCOPY\\n\\377\\r\\n\\0`, int32
flags (0), int32 header-extension length (0); each row an int16 field count, then per field
an int32 byte length (-1: NULL) and the value in the type's binary send format; the trailer
an int16 -1. Pure functions: tests/store/test_pg_copy.py checks them without a server and
round-trips every type through a real PostgreSQL.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Sequence
from datetime import date

import numpy as np

SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
TRAILER = struct.pack(">h", -1)
NULL = struct.pack(">i", -1)

TEXT_OID = 25
INT4_OID = 23

_I2 = struct.Struct(">h").pack
_I4 = struct.Struct(">i").pack
_LEN_I4 = struct.pack(">i", 4)  # the length prefix of any int4 field
_LEN_I8 = struct.pack(">i", 8)
_I8 = struct.Struct(">q").pack
_F8 = struct.Struct(">d").pack
_PG_EPOCH = date(2000, 1, 1).toordinal()  # binary dates are days since 2000-01-01
_TRUE = _I4(1) + b"\x01"
_FALSE = _I4(1) + b"\x00"
_ARRAY_HEAD = struct.Struct(">iiiii").pack  # ndim, has-null flag, element oid, length, lower bound


def row_head(n_fields: int) -> bytes:
    return _I2(n_fields)


def int8(v: int) -> bytes:
    return _LEN_I8 + _I8(v)


def int4(v: int | None) -> bytes:
    return NULL if v is None else _LEN_I4 + _I4(v)


def float8(v: float) -> bytes:
    return _LEN_I8 + _F8(v)


def boolean(v: bool) -> bytes:
    return _TRUE if v else _FALSE


def text(s: str | None) -> bytes:
    if s is None:
        return NULL
    b = s.encode("utf-8")
    return _I4(len(b)) + b


def day(d: date | None) -> bytes:
    return NULL if d is None else _LEN_I4 + _I4(d.toordinal() - _PG_EPOCH)


def jsonb(value) -> bytes:
    """jsonb's binary format: a version byte (1), then the JSON text."""
    b = b"\x01" + json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return _I4(len(b)) + b


def text_array(items: Sequence[str]) -> bytes:
    """A one-dimensional text[] without NULLs (empty: zero dimensions, as the server writes it)."""
    if not items:
        body = struct.pack(">iii", 0, 0, TEXT_OID)
    else:
        enc = [s.encode("utf-8") for s in items]
        body = b"".join([_ARRAY_HEAD(1, 0, TEXT_OID, len(enc), 1), *(_I4(len(e)) + e for e in enc)])
    return _I4(len(body)) + body


def int4_array(items: Sequence[int]) -> bytes:
    """A one-dimensional int4[] without NULLs."""
    if not len(items):
        body = struct.pack(">iii", 0, 0, INT4_OID)
    else:
        pairs = np.empty((len(items), 2), dtype=">i4")  # each element: its length (4), its value
        pairs[:, 0] = 4
        pairs[:, 1] = items
        body = _ARRAY_HEAD(1, 0, INT4_OID, len(items), 1) + pairs.tobytes()
    return _I4(len(body)) + body


def vector_fields(vectors: np.ndarray) -> list[bytes]:
    """Each row of a float32 matrix as a pgvector `vector` field: int16 dim, int16 0, float32 values (big-endian)."""
    n, dim = vectors.shape
    payload = np.ascontiguousarray(vectors, dtype=">f4").view(np.uint8).reshape(n, 4 * dim)
    prefix = _I4(4 + 4 * dim) + struct.pack(">hh", dim, 0)
    return [prefix + payload[i].tobytes() for i in range(n)]


def rows(fields: Iterable[Sequence[bytes]]) -> bytes:
    """Rows of already-encoded fields, as one block of the stream (no signature, no trailer)."""
    return b"".join(_I2(len(f)) + b"".join(f) for f in fields)
