"""Results are returned, not left behind: no `last_*` attribute on an object shared across requests."""

from __future__ import annotations

import ast
from pathlib import Path

import vouched
from vouched.answer import Assistant
from vouched.answer.events import DoneEvent
from vouched.engine import Engine
from vouched.types import SearchFilters


def _last(obj) -> list[str]:
    return sorted(k for k in vars(obj) if k.startswith("last_"))


def test_no_last_attributes_on_the_shared_objects(site_config):
    eng = Engine(site_config)
    a = Assistant(site_config, engine=eng)
    answered = a.ask("Which database did the Tessera Health search run on?")
    refused = a.ask("What's the weather in Paris today?")
    result = eng.retriever.search("Tessera Health database", filters=SearchFilters(), query_lang="en")
    eng.store.dense_search(eng.embedder.embed_queries(["Tessera Health"])[0], SearchFilters(), 3)
    eng.store.keyword_search(["tessera"], SearchFilters(), 3)
    for obj in (a, a.pipeline, a.pipeline.scoring, eng, eng.store, eng.retriever, eng.embedder,
                getattr(eng.embedder, "inner", eng.embedder)):
        assert _last(obj) == [], type(obj).__name__
    # what used to be left behind comes back with the result
    assert answered.trace is not None and answered.trace.route == "retrieval" and answered.trace.source_ids
    assert refused.trace is not None and refused.trace.layer == "L2" and refused.trace.id == refused.trace_id
    assert result.times.embed_ms >= 0 and result.dense_plan in ("exact", "ann", "ann+exact", "none")
    assert result.keyword_plan in ("fts5", "index")


def test_each_answer_carries_its_own_trace(site_config):
    a = Assistant(site_config)
    first = list(a.stream("Which database did the Tessera Health search run on?"))
    second = list(a.stream("What's the weather in Paris today?"))
    t1, t2 = first[-1].trace, second[-1].trace
    assert isinstance(first[-1], DoneEvent) and t1 is not t2
    assert t1.question.startswith("Which database") and t2.question.startswith("What's the weather")
    # the trace is never sent with the event
    from vouched.answer.events import event_to_dict

    assert "trace" not in event_to_dict(first[-1]) and "trace" not in a.ask("hello").to_dict()


def _frozen(cls: ast.ClassDef) -> bool:
    return any(isinstance(d, ast.Call) and any(k.arg == "frozen" and getattr(k.value, "value", False) is True
                                               for k in d.keywords) for d in cls.decorator_list)


def _last_writes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every ``x.last_…`` assigned, ``last_…`` declared in a class body (a frozen
    dataclass's fields excepted: values, not state left behind), or ``setattr(x, "last_…", …)``."""
    out = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.ClassDef) and not _frozen(node):  # a frozen value's field is data, not state
            out += [(b.lineno, b.target.id) for b in node.body
                    if isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name) and b.target.id.startswith("last_")]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
              and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
              and str(node.args[1].value).startswith("last_")):
            out.append((node.lineno, str(node.args[1].value)))
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and sub.attr.startswith("last_"):
                    out.append((sub.lineno, sub.attr))
    return out


def test_no_module_of_vouched_leaves_a_last_attribute():
    """Results are returned: no object anywhere in vouched/ keeps a `last_*` value (a test
    double records its calls explicitly: `ScriptedProvider.requests`)."""
    root = Path(vouched.__file__).parent
    found = [f"{path.relative_to(root.parent)}:{line} {name}"
             for path in sorted(root.rglob("*.py"))
             for line, name in _last_writes(ast.parse(path.read_text("utf-8"), str(path)))]
    assert found == []


def test_the_last_attribute_check_can_fail():
    src = """
@dataclass(frozen=True)
class Value:
    last_position: int

class A:
    last_seen: int
    def f(self):
        self.last_times = {}
        self.last_n += 1
        setattr(self, "last_plan", None)
        self.lasting = 1
"""
    assert sorted(n for _, n in _last_writes(ast.parse(src))) == ["last_n", "last_plan", "last_seen", "last_times"]
