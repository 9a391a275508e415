"""Arrays a PostgreSQL corpus version keeps beside its rows, for the indexes a search process
holds in memory (the keyword index: `keyword_blobs`; the dense graph: `dense_blobs`).

Each table is (version_id, name, part, data bytea), STORAGE EXTERNAL (the arrays do not
compress: pglz would only cost CPU). A value is split into parts of at most PART_BYTES (a bytea
value is at most 1 GB) and written inside the version's own transaction, so a visible version
either has all its arrays or none. Reading fills one preallocated buffer part by part, so a
reader holds the array once plus one part, not the whole result set and then a joined copy.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

PART_BYTES = 256 << 20  # one bytea value: well under PostgreSQL's 1 GB
TABLES = ("keyword_blobs", "dense_blobs")


def write(conn, table: str, vid: int, blobs: Mapping[str, bytes | np.ndarray]) -> None:
    """Store each named array (or bytes) as rows of `table` for version `vid`."""
    assert table in TABLES, table
    with conn.cursor() as cur:
        for name, a in blobs.items():
            data = memoryview(a if isinstance(a, bytes) else np.ascontiguousarray(a)).cast("B")
            for part, at in enumerate(range(0, max(len(data), 1), PART_BYTES)):
                cur.execute(f"INSERT INTO {table} (version_id, name, part, data) VALUES (%s, %s, %s, %b)",
                            (vid, name, part, data[at : at + PART_BYTES]))


def read(conn, table: str, vid: int, names: Iterable[str] | None = None) -> dict[str, bytearray]:
    """Version `vid`'s arrays in `table` (those in `names`, or all), each as one buffer; {} if it has none."""
    assert table in TABLES, table
    sizes: dict[str, list[int]] = {}
    for name, part, size in conn.execute(f"SELECT name, part, octet_length(data) FROM {table} WHERE version_id = %s "
                                         "ORDER BY name, part", (vid,)):
        sizes.setdefault(name, []).append(size)
    want = set(sizes) if names is None else set(names) & set(sizes)
    out: dict[str, bytearray] = {}
    for name in sorted(want):
        buf = bytearray(sum(sizes[name]))
        at = 0
        for part, size in enumerate(sizes[name]):
            (data,) = conn.execute(f"SELECT data FROM {table} WHERE version_id = %s AND name = %s AND part = %s",
                                   (vid, name, part), binary=True).fetchone()
            if len(data) != size:
                raise ValueError(f"{table} of version {vid}: part {part} of {name!r} changed while it was read")
            buf[at : at + size] = data
            at += size
            del data
        out[name] = buf
    return out
