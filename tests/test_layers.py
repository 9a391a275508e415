"""The rooms and their floors (docs/architecture.md): a room imports only from lower floors.

Every import counts, the lazy ones inside functions too: a lazy import that runs back up is
still a cycle, only a later one. A new top-level room must be given a floor here and in
docs/architecture.md.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "vouched"

# floor -> rooms. A room is a subpackage (vouched/answer/) or a top-level module (vouched/engine.py);
# "vouched" is the package's own __init__.
FLOORS: dict[int, tuple[str, ...]] = {
    0: ("errors", "types"),
    1: ("vouched", "text", "config", "pg", "llm"),
    2: ("guard", "embed", "store", "spend"),
    3: ("retrieve", "ingest", "trace"),
    4: ("engine",),
    5: ("answer",),
    6: ("server", "eval"),
    7: ("bench",),
    8: ("cli",),
    9: ("docs",),
}
FLOOR = {room: floor for floor, rooms in FLOORS.items() for room in rooms}

# (file, room) pairs allowed to import a room on a higher floor, each named with its reason.
# path_walk measures the question's path from `vouched ask`, so it runs the command in
# process (vouched.cli); no module imports path_walk (test below), so no cycle can run.
DRIVES_THE_CLI = {("vouched/bench/path_walk.py", "cli")}


def _room_of_file(path: Path) -> str:
    rel = path.relative_to(ROOT)
    if len(rel.parts) == 1:
        return "vouched" if rel.stem == "__init__" else rel.stem
    return rel.parts[0]


def _room_of_module(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] != "vouched":
        return None
    return parts[1] if len(parts) > 1 else "vouched"


def imports() -> list[tuple[str, str, str, int]]:
    """(room, imported room, file, line) for every import of another room, at any depth."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        me = _room_of_file(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + ([f"{node.module}.{a.name}" for a in node.names] if node.module == "vouched" else [])
            else:
                continue
            for name in names:
                room = _room_of_module(name)
                if room is not None and room != me:
                    out.append((me, room, str(path.relative_to(ROOT.parent)), node.lineno))
    return out


def test_every_room_has_a_floor():
    rooms = {_room_of_file(p) for p in ROOT.rglob("*.py")}
    missing = sorted(rooms - set(FLOOR))
    assert not missing, f"give these rooms a floor in tests/test_layers.py and docs/architecture.md: {missing}"


def test_no_import_runs_up_or_sideways():
    bad = [f"{file}:{line}: {me} (floor {FLOOR.get(me)}) imports {room} (floor {FLOOR.get(room)})"
           for me, room, file, line in imports()
           if room in FLOOR and me in FLOOR and FLOOR[room] >= FLOOR[me] and (file, room) not in DRIVES_THE_CLI]
    assert not bad, "imports must go down a floor:\n" + "\n".join(bad)


def test_nothing_imports_a_script_that_drives_the_cli():
    scripts = {file.removesuffix(".py").replace("/", ".") for file, _ in DRIVES_THE_CLI}
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            bad += [f"{path.relative_to(ROOT.parent)}:{node.lineno} imports {n}" for n in names if n in scripts]
    assert not bad, "a script allowed to import vouched.cli must stay a leaf:\n" + "\n".join(bad)


def test_the_table_in_the_docs_is_this_table():
    doc = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for floor, rooms in FLOORS.items():
        for room in rooms:
            assert f"| {floor} | `{room}` |" in doc, f"docs/architecture.md lacks the row | {floor} | `{room}` |"
