"""The one error tree: every class drawn in vouched.errors, under its real parent, with its real
exit code and HTTP status; the two tables (exit codes, HTTP map) cover every branch on purpose."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import vouched.errors as errors
from vouched.errors import EXIT_CODES, IngestError, VouchedError, exit_code
from vouched.server.errors import HTTP_MAP, error_body, error_status

_ROW = re.compile(r"^(?P<indent>[\s│]*)[├└]── (?P<name>\w+)(?:\s+(?P<exit>\d)\b)?(?:\s+(?P<http>\d{3})\b)?")


_WALK = r"""
import importlib, inspect, json, pkgutil, vouched
from vouched.errors import VouchedError
for m in pkgutil.walk_packages(vouched.__path__, "vouched."):
    parent, _, leaf = m.name.rpartition(".")
    shadowed = getattr(importlib.import_module(parent), leaf, None)
    if shadowed is not None and not inspect.ismodule(shadowed):
        continue  # a data folder named like a function its package exports (text/stopwords)
    try:
        importlib.import_module(m.name)
    except ModuleNotFoundError:
        pass  # an optional extra (psycopg, redis, ray, faiss...) not installed here
def walk(c):
    for s in c.__subclasses__():
        yield s
        yield from walk(s)
mine = [c for c in walk(Exception) if c.__module__.split(".")[0] == "vouched"]
print(json.dumps([[c.__module__, c.__name__, issubclass(c, VouchedError)] for c in mine]))
"""


def _every_exception_class() -> list[tuple[str, str, bool]]:
    """(module, name, in the tree) for every Exception subclass any vouched module defines.

    Imported in a child process: importing every module here would leave state behind (a data
    folder shadowing a function of the same name, say) for the tests that run after this file.
    """
    out = subprocess.run([sys.executable, "-c", _WALK], capture_output=True, text=True, timeout=120, check=True)
    return [tuple(row) for row in json.loads(out.stdout)]


def _drawing() -> dict[str, tuple[str, int | None, int | None]]:
    """name -> (drawn parent, drawn exit code or None, drawn HTTP status or None)."""
    lines = (errors.__doc__ or "").splitlines()
    stack: list[tuple[int, str]] = [(-1, "VouchedError")]
    drawn: dict[str, tuple[str, int | None, int | None]] = {}
    for line in lines:
        m = _ROW.match(line)
        if not m:
            continue
        depth = len(m.group("indent"))
        while stack[-1][0] >= depth:
            stack.pop()
        name = m.group("name")
        assert name not in drawn, f"{name} is drawn twice"
        drawn[name] = (stack[-1][1], int(m["exit"]) if m["exit"] else None, int(m["http"]) if m["http"] else None)
        stack.append((depth, name))
    return drawn


@pytest.fixture(scope="module")
def found() -> list[tuple[str, str, bool]]:
    return _every_exception_class()


@pytest.fixture(scope="module")
def tree(found) -> list[type]:
    """Every class of the tree (a leaf may live in its subpackage, drawn under its parent here)."""
    import importlib

    classes = {getattr(importlib.import_module(mod), name) for mod, name, inside in found if inside}
    return sorted(classes - {VouchedError}, key=lambda c: c.__name__)


def _parent(cls: type) -> type:
    return next(b for b in cls.__bases__ if issubclass(b, VouchedError))


def test_the_drawing_parses_and_names_real_classes():
    drawn = _drawing()
    assert len(drawn) >= 20
    for name, (parent, _, _) in drawn.items():
        assert parent == "VouchedError" or parent in drawn, f"{name} is drawn under {parent}, which is not drawn"


def test_every_class_is_drawn_under_its_real_parent(tree):
    drawn = _drawing()
    for cls in tree:
        assert cls.__name__ in drawn, f"draw {cls.__module__}.{cls.__name__} in vouched/errors.py's docstring"
        parent = _parent(cls).__name__
        assert drawn[cls.__name__][0] == parent, f"{cls.__name__} is drawn under {drawn[cls.__name__][0]}, derives from {parent}"


def test_every_exception_class_is_drawn(found):
    drawn = _drawing()
    missing = [f"{mod}.{name}" for mod, name, inside in found if inside and name not in drawn | {"VouchedError": 0}]
    assert not missing, f"draw these in vouched/errors.py's docstring (under their parent): {missing}"


def test_no_error_class_outside_the_tree(found):
    """Every Exception subclass vouched defines derives from VouchedError (none of plain Exception)."""
    stray = [f"{mod}.{name}" for mod, name, inside in found if not inside]
    assert not stray, stray


def test_the_drawn_exit_codes_and_statuses_are_the_tables(tree):
    drawn = _drawing()
    for cls in tree:
        _, code, status = drawn[cls.__name__]
        if code is not None:
            assert exit_code(_make(cls)) == code, cls
        if status is not None:
            assert error_status(_make(cls))[0] == status, cls


def _make(cls: type) -> BaseException:
    for kwargs in ({}, {"param": None}, {"retry_after_s": 1.0, "limit": "minute"}):
        try:
            return cls("message", **kwargs)
        except TypeError:
            continue
    raise AssertionError(f"cannot build {cls}")


def test_every_branch_has_a_deliberate_row_in_both_tables(tree):
    """A class directly under the root must not fall through to the root's row unnoticed."""
    for cls in [c for c in tree if _parent(c) is VouchedError]:
        assert cls in EXIT_CODES, f"{cls.__name__}: no exit code"
        assert cls in HTTP_MAP, f"{cls.__name__}: no HTTP status"


def test_nearest_ancestor_wins(tree):
    for cls in tree:
        nearest = next(c for c in cls.__mro__ if c in HTTP_MAP)
        assert error_status(_make(cls)) == HTTP_MAP[nearest][:2]
        nearest = next(c for c in cls.__mro__ if c in EXIT_CODES)
        assert exit_code(_make(cls)) == EXIT_CODES[nearest]


def test_exit_code_3_means_one_thing(tree):
    threes = [c for c in [VouchedError, *tree] if exit_code(_make(c)) == 3]
    assert threes and all(issubclass(c, IngestError) for c in threes), threes
    from vouched.eval import calibrate, check, golden, suggested

    outcome_codes = {check.CHECK_EXIT_OK, check.CHECK_EXIT_ESCAPED, check.CHECK_EXIT_BAD_INPUT,
                     check.CHECK_EXIT_UNCHECKED, calibrate.CALIBRATE_EXIT_NONE, suggested.CALIBRATE_EXIT_SUGGESTED,
                     golden.GOLDEN_EXIT_FAIL, golden.GOLDEN_EXIT_BAD_INPUT}
    assert 3 not in outcome_codes


def test_unknown_errors_are_500_and_exit_1():
    assert error_status(KeyError("x")) == (500, "internal_error") and exit_code(KeyError("x")) == 1


def test_input_error_is_a_400_that_says_what_to_change():
    from vouched.answer.analysis import check_input

    with pytest.raises(errors.InputError) as e:
        check_input("   ", max_bytes=100)
    assert error_status(e.value) == (400, "invalid_request")
    assert error_body(e.value)["error"]["message"] == str(e.value)


def test_5xx_bodies_never_carry_the_detail():
    body = error_body(errors.PgUnavailable("no connection to postgresql://secret@db:5432"))
    assert body["error"]["type"] == "store_unavailable" and "secret" not in body["error"]["message"]


def test_old_import_paths_are_the_same_classes():
    from vouched.answer.analysis import InputError
    from vouched.bench.verify import BenchInputError as B1
    from vouched.eval.datasets import BenchInputError as B2
    from vouched.llm.errors import ProviderError
    from vouched.pg import MigrationError, PgUnavailable
    from vouched.server.errors import RateLimited
    from vouched.server.streaming import ClientGone
    from vouched.trace.store import TraceNotFound

    assert B1 is B2 is errors.BenchInputError and InputError is errors.InputError
    assert ProviderError is errors.ProviderError and RateLimited is errors.RateLimited
    assert (MigrationError, PgUnavailable, ClientGone, TraceNotFound) == (
        errors.MigrationError, errors.PgUnavailable, errors.ClientGone, errors.TraceNotFound)
