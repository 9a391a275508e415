"""A trace for people: what happened to one question, and why it stopped where it did.

``render_trace`` returns rich renderables; ``trace_text`` the same as plain text (tests,
logs). For a held answer the first thing shown after the question is the sentence that was
held, the gate RULE it broke and the OFFENDING VALUE; then the evidence against the
threshold, the sentences with their verdicts, the retrieved passages with their three
scores (and which were given to the model as sources), latency per stage, tokens and cost,
warnings, feedback and the failure class.
"""

from __future__ import annotations

import io
from typing import Any, Iterable, Mapping

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from vouched.trace.failure import FAILURE_CLASSES, classify_failure, doc_id_of

__all__ = ["FAILURE_CLASSES", "RULE_TEXT", "classify_failure", "held_sentence", "render_trace", "trace_text", "traces_table"]

RULE_TEXT = {
    "marker_range": "a source marker points to a source that was not given",
    "missing_marker": "a contentful sentence carries no source marker",
    "unsupported_value": "a number, URL or e-mail is in no source the sentence cites",
    "unsupported_name": "a proper name, code or quoted title is in no source the sentence cites",
    "first_person": "the assistant spoke as the subject (L5)",
    "no_answer": "the generator said NO_ANSWER",
}
STAGE_ORDER = ("l1", "retrieve", "generate_plan", "generate", "total")


def held_sentence(trace: Mapping[str, Any]) -> dict | None:
    """The sentence that stopped the stream: the first one not ok (None when none was held)."""
    return next((s for s in trace.get("sentences") or [] if not s.get("ok")), None)


def _outcome_line(t: Mapping[str, Any]) -> Text:
    out = Text()
    outcome = t.get("outcome") or "abandoned"
    style = {"answered": "green", "records": "green", "refused": "yellow", "held": "bold magenta"}.get(outcome, "red")
    out.append(outcome.upper(), style=style)
    why = " · ".join(x for x in (t.get("layer"), t.get("category")) if x)
    if why:
        out.append(f" ({why})")
    bits = [f"route {t.get('route') or '-'}", f"lang {t.get('lang') or '-'}"]
    if t.get("created_at"):
        bits.insert(0, str(t["created_at"]))
    out.append("   " + " · ".join(bits), style="dim")
    return out


def _held_panel(s: Mapping[str, Any], layer: str | None) -> Panel:
    rule = s.get("rule") or "?"
    body = Table.grid(padding=(0, 2))
    body.add_column(style="bold")
    body.add_column(overflow="fold")
    body.add_row("sentence", Text(s.get("text", "")))
    body.add_row("RULE", Text(f"{rule} — {RULE_TEXT.get(rule, 'gate rule')}"))
    body.add_row("OFFENDING VALUE", Text(repr(s["value"]) if s.get("value") is not None else "(none: the sentence as a whole)"))
    return Panel(body, title=f"held by {layer or 'the gate'}", title_align="left", border_style="magenta")


def _evidence_line(t: Mapping[str, Any]) -> Text | None:
    if not t.get("evidence_run"):
        return None
    ev, th = float(t.get("evidence") or 0.0), float(t.get("threshold") or 0.0)
    passed = ev >= th
    line = Text(f"evidence {ev:.4f} (run {t['evidence_run']}) {'≥' if passed else '<'} threshold {th:.4f} → ")
    line.append("passed L2" if passed else "refused by L2", style="green" if passed else "yellow")
    return line


def _anchors_line(t: Mapping[str, Any]) -> Text | None:
    anchors = t.get("anchors") or []
    if not anchors:
        return None
    found, missing = t.get("anchors_found") or [], t.get("anchors_missing") or []
    line = Text(f"anchors ({len(anchors)}): found {', '.join(found) or '—'}; ")
    line.append(f"missing {', '.join(missing) or '—'}", style="yellow" if missing else "green")
    return line


def _sentences_table(t: Mapping[str, Any]) -> Table | None:
    rows = t.get("sentences") or []
    if not rows:
        return None
    tab = Table(title="sentences", title_justify="left", show_lines=False)
    for col in ("#", "verdict", "rule", "value", "sentence"):
        tab.add_column(col, overflow="fold")
    for i, s in enumerate(rows, 1):
        verdict = Text("released", style="green") if s.get("ok") else Text("HELD", style="bold magenta")
        tab.add_row(str(i), verdict, s.get("rule") or "", "" if s.get("value") is None else str(s["value"]), Text(s.get("text", "")))
    return tab


def _retrieved_table(t: Mapping[str, Any]) -> Table | None:
    rows = t.get("retrieved") or []
    if not rows:
        return None
    given = {sid: n for n, sid in enumerate(t.get("source_ids") or [], 1)}
    tab = Table(title="retrieved (fusion order)", title_justify="left")
    for col, just in (("rank", "right"), ("chunk", "left"), ("doc", "left"), ("dense", "right"), ("keyword", "right"),
                      ("evidence", "right"), ("source", "right")):
        tab.add_column(col, justify=just, overflow="fold")
    best = max((float(r.get("evidence") or 0) for r in rows), default=0.0)
    for r in rows:
        ev = float(r.get("evidence") or 0)
        tab.add_row(str(r.get("rank", "")), Text(r["id"]), Text(r.get("doc_id") or doc_id_of(r["id"])),
                    f"{float(r.get('dense') or 0):.4f}", f"{float(r.get('keyword') or 0):.4f}",
                    Text(f"{ev:.4f}", style="bold" if ev == best else ""), Text(f"[{given[r['id']]}]" if r["id"] in given else ""))
    return tab


def _stages_line(stages: Mapping[str, float]) -> Text | None:
    if not stages:
        return None
    keys = [k for k in STAGE_ORDER if k in stages] + sorted(k for k in stages if k not in STAGE_ORDER)
    return Text("latency  " + " · ".join(f"{k} {float(stages[k]):.1f} ms" for k in keys))


def _usage_line(usage: Mapping[str, Any], prices: Mapping[str, Any] | None) -> Text | None:
    if not usage:
        return None
    i, o = usage.get("input_tokens"), usage.get("output_tokens")
    parts = [f"tokens in {i if i is not None else '-'} · out {o if o is not None else '-'}"]
    who = " ".join(x for x in (usage.get("provider"), usage.get("model")) if x)
    if who:
        parts.append(who)
    cost = usage.get("cost_usd")
    if cost is None and prices and usage.get("model") in prices and i is not None and o is not None:
        from vouched.spend.money import cost_usd

        cost = cost_usd(int(i), int(o), prices[usage["model"]])
    parts.append(f"cost ${cost:.6f}" if cost is not None else "cost -")
    return Text("usage    " + " · ".join(parts))


def _feedback_lines(fb: Iterable[Mapping[str, Any]]) -> list[Text]:
    return [Text(f"feedback {f.get('created_at', '')}: {'useful' if f.get('useful') else 'not useful'}"
                 + (f" — {f['comment']}" if f.get("comment") else "")) for f in fb]


def render_trace(trace: Mapping[str, Any], *, prices: Mapping[str, Any] | None = None) -> RenderableType:
    """One trace (a ``TraceStore.get`` dict or ``asdict(TraceRecord)``) as rich renderables."""
    t = trace
    parts: list[RenderableType] = [
        Text(f"trace {t.get('id', '?')}", style="bold"),
        _outcome_line(t),
        Text.assemble(("question  ", "bold"), str(t.get("question", ""))),
    ]
    if t.get("normalized") and t.get("normalized") != t.get("question"):
        parts.append(Text.assemble(("normalised ", "dim"), str(t["normalized"])))
    held = held_sentence(t)
    if held is not None and t.get("outcome") == "held":
        parts.append(_held_panel(held, t.get("layer")))
    for piece in (_evidence_line(t), _anchors_line(t), _sentences_table(t), _retrieved_table(t)):
        if piece is not None:
            parts.append(piece)
    if t.get("source_ids"):
        parts.append(Text("sources given  " + ", ".join(f"[{n}] {s}" for n, s in enumerate(t["source_ids"], 1))))
    for piece in (_stages_line(t.get("stages_ms") or {}), _usage_line(t.get("usage") or {}, prices)):
        if piece is not None:
            parts.append(piece)
    for w in t.get("warnings") or []:
        parts.append(Text(f"warning  {w}", style="yellow"))
    if t.get("failure_class"):
        parts.append(Text(f"failure class  {t['failure_class']}", style="bold red"))
    parts.extend(_feedback_lines(t.get("feedback") or []))
    return Group(*parts)


def trace_text(trace: Mapping[str, Any], *, width: int = 120, prices: Mapping[str, Any] | None = None) -> str:
    """``render_trace`` as plain text."""
    con = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    con.print(render_trace(trace, prices=prices))
    return con.export_text()


def traces_table(rows: Iterable[Mapping[str, Any]], title: str = "traces") -> Table:
    """The list `vouched traces` prints (rows from ``TraceStore.list``)."""
    tab = Table(title=title, title_justify="left")
    for col in ("id", "when (UTC)", "outcome", "layer · category", "evidence / thr", "ms", "fb", "question"):
        tab.add_column(col, overflow="fold")
    for r in rows:
        why = " · ".join(x for x in (r.get("layer"), r.get("category")) if x)
        ev = f"{r['evidence']:.3f} / {r['threshold']:.3f}" if r.get("evidence") is not None and r.get("route") in ("retrieval", "records_summary") else ""
        fb = r.get("feedback") or {}
        fbt = f"{fb.get('useful', 0)}/{fb.get('count', 0)}" if fb.get("count") else ""
        ms = f"{r['total_ms']:.0f}" if r.get("total_ms") is not None else ""
        q = str(r.get("question", ""))
        tab.add_row(str(r["id"])[:12], str(r.get("created_at", ""))[:19].replace("T", " "), r.get("outcome") or "", Text(why), ev,
                    ms, fbt, Text(q if len(q) <= 70 else q[:69] + "…"))
    return tab

