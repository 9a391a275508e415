"""Writing the threshold: rewrite only the ``[threshold]`` table of a vouched.toml, atomically.

Part of vouched.eval.calibrate (which re-exports every name here).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Sequence

from vouched.errors import CalibrationError

# -- writing the config ----------------------------------------------------------------------------
_HEADER = re.compile(r'^[ \t]*\[[ \t]*(?:threshold|"threshold"|\'threshold\')[ \t]*\][ \t]*(?:#.*)?$')
_ANY_HEADER = re.compile(r"^[ \t]*\[")


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def threshold_block(value: float, embedding_model: str, corpus_version: str, comment: Sequence[str] = (),
                    rare_cut: float | None = None) -> list[str]:
    """The body of the [threshold] table (without its header), one string per line."""
    return [*(f"# {c}".rstrip() for c in comment), f"value = {value!r}", f"embedding_model = {_toml_str(embedding_model)}",
            f"corpus_version = {_toml_str(corpus_version)}", *([f"rare_cut = {rare_cut!r}"] if rare_cut is not None else [])]


def rewrite_threshold(text: str, value: float, embedding_model: str, corpus_version: str, comment: Sequence[str] = (),
                      rare_cut: float | None = None) -> str:
    """``text`` with only its [threshold] table replaced (header line kept as written); every
    byte outside the table is kept. A table absent is appended. Pure; raises CalibrationError
    when the threshold is written in a form this cannot replace safely (dotted keys, inline)."""
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _HEADER.match(line.rstrip("\r\n"))), None)
    body = [ln + nl for ln in threshold_block(value, embedding_model, corpus_version, comment, rare_cut)]
    if start is None:
        if "threshold" in tomllib.loads(text):
            raise CalibrationError("the threshold is set with dotted keys or an inline table; move it into a "
                                   "[threshold] table so `vouched calibrate --write` can replace it")
        sep = "" if not text or text.endswith(("\n", "\r")) else nl
        return text + sep + (nl if text.strip() else "") + "[threshold]" + nl + "".join(body)
    end = next((i for i in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
    # What follows the table's last key after a blank line (blank lines, a comment about the
    # next table) belongs to the gap, not to the table: keep it.
    last_key = max((i for i in range(start + 1, end) if lines[i].strip() and not lines[i].lstrip().startswith("#")), default=start)
    keep_from = next((i for i in range(last_key + 1, end) if not lines[i].strip()), end)
    head = lines[start]
    if not head.endswith(("\n", "\r")):
        head += nl
    return "".join(lines[:start]) + head + "".join(body) + "".join(lines[keep_from:])


def write_threshold(config_file: Path, value: float, embedding_model: str, corpus_version: str,
                    comment: Sequence[str] = (), rare_cut: float | None = None) -> None:
    """Rewrite the [threshold] table of a vouched.toml in place (atomically), after checking that
    the new file parses, changes nothing else, and is a valid config."""
    from vouched.config import Config

    p = Path(config_file)
    raw = p.read_bytes()
    text = raw.decode("utf-8")
    new = rewrite_threshold(text, value, embedding_model, corpus_version, comment, rare_cut)
    old_data, new_data = tomllib.loads(text), tomllib.loads(new)
    want = {"value": value, "embedding_model": embedding_model, "corpus_version": corpus_version,
            **({"rare_cut": rare_cut} if rare_cut is not None else {})}
    if {k: v for k, v in old_data.items() if k != "threshold"} != {k: v for k, v in new_data.items() if k != "threshold"} \
            or new_data.get("threshold") != want:
        raise CalibrationError(f"{p}: could not replace the [threshold] table without touching the rest; edit it by hand: "
                               f"value = {value!r}, embedding_model = {embedding_model!r}, corpus_version = {corpus_version!r}")
    Config.model_validate({**new_data, "base_dir": p.resolve().parent})
    tmp = p.with_name(f".{p.name}.calibrate.tmp")
    tmp.write_bytes(new.encode("utf-8"))
    os.chmod(tmp, p.stat().st_mode & 0o7777)
    os.replace(tmp, p)
