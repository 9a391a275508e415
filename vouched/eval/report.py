"""The golden-set reports: the terminal tables (rich) and one self-contained HTML file (inline
CSS and SVG, no script, no fetch).

It holds the figures as tables (overall, per language, per category, follow-ups), two plots
drawn by hand as SVG — the best-evidence distribution of answerable vs must-refuse cases with
the threshold, and per-language bars — and every failing case with its answer and its trace.
"""

from __future__ import annotations

import json
import math
from html import escape
from pathlib import Path
from typing import Mapping, Sequence

from vouched.eval.golden import RECALL_K

__all__ = ["print_summary", "render_html", "row", "svg_bars", "svg_histogram", "write_html_report"]

COLORS = {"answerable": "#2f7d32", "must refuse": "#c62828", "no-evidence set": "#c62828", "pattern set": "#ef6c00"}
SERIES_COLORS = ("#1565c0", "#2f7d32", "#ef6c00", "#6a1b9a")

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0 1em}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f5f5f5}
.pass{color:#2f7d32;font-weight:600}.fail{color:#c62828;font-weight:600}
.case{border:1px solid #e0a0a0;border-radius:4px;padding:.5em 1em;margin:.8em 0;background:#fffafa}
.case dl{display:grid;grid-template-columns:10em 1fr;gap:2px 1em;margin:.3em 0}.case dt{color:#666}
pre{background:#f7f7f7;padding:.6em;overflow:auto;max-height:28em;font-size:12px}
.meta{color:#555}svg{background:#fff;border:1px solid #eee}
"""


def fmt(v: float | None, pct: bool = False, compact: bool = False) -> str:
    """A figure for a table; ``None`` (nothing to divide by) is "–". Compact: "1" and "0"
    only when exact, else ".857" — never a rounded "1.00" for a set that is not perfect."""
    if v is None:
        return "–"
    if pct:
        return "100%" if v == 1 else f"{min(v * 100, 99.9):.1f}%"
    if compact:
        return "1" if v == 1 else "0" if v == 0 else f"{min(v, 0.999):.3f}".lstrip("0")
    return f"{v:.3f}" if v == 1 or v < 0.9995 else "0.999"


COLUMNS = ("cases", "passed", "L1 P", "L1 R", "no-ev P", "no-ev R", "false refusals", "records routed",
           f"recall@{RECALL_K}", "abst. P", "abst. R", "false answers", "citations")
SHORT_COLUMNS = ("n", "ok", "L1 P", "L1 R", "NE P", "NE R", "F.ref", "rec", f"R@{RECALL_K}", "ab P", "ab R", "FAR", "cite")
LEGEND = ("n cases · ok passed · L1 P/R pattern-refusal precision/recall · NE P/R no-evidence refusal precision/recall · "
          f"F.ref false refusals · rec records routed · R@{RECALL_K} recall@{RECALL_K} · ab P/R abstention precision/recall · "
          "FAR false-answer rate · cite citation validity · – nothing to measure")


def row(fig: dict, compact: bool = False) -> list[str]:
    """One table row of figures (shared by the terminal and the HTML report)."""
    p, ne, a = fig["refusal"]["pattern"], fig["refusal"]["no_evidence"], fig["abstention"]
    fr, rr = fig["false_refusals"], fig["records_routed"]
    f = lambda v: fmt(v, compact=compact)  # noqa: E731
    return [str(fig["cases"]), str(fig["passed"]), f(p["precision"]), f(p["recall"]), f(ne["precision"]),
            f(ne["recall"]), f"{fr['count']}/{fr['of']}", f"{rr['routed']}/{rr['of']}", f(fig[f"recall@{RECALL_K}"]),
            f(a["precision"]), f(a["recall"]), f(a["false_answer_rate"]), fmt(fig["citation_validity"], pct=True)]


def print_summary(summary: dict, report, console=None) -> None:
    """The terminal view: tables per language, category and follow-ups, failing cases, gates."""
    from rich.console import Console
    from rich.table import Table

    con = console or Console()
    if console is None and not con.is_terminal:
        con = Console(width=max(con.width, 140))  # piped to a file or CI log: no need to wrap at 80
    m = report.meta
    con.print(f"[bold]{m.get('golden', 'golden set')}[/bold]: {summary['cases']} cases, {summary['passed']} passed  "
              f"(threshold {m['threshold']}, {m['embedding_model']}, {m['provider']}, {m['seconds']} s)")
    for n in m.get("notes", []):
        con.print(f"[yellow]warning:[/yellow] {n}")
    for title, rows in (("all", {"all": summary}), ("by language", summary["by_language"]),
                        ("by category", summary["by_category"]), ("follow-ups", {"follow-ups": summary["followups"]})):
        t = Table(title=title, title_justify="left")
        t.add_column("", no_wrap=True)
        for c in SHORT_COLUMNS:
            t.add_column(c, justify="right", no_wrap=True)
        for name, fig in rows.items():
            t.add_row(name, *row(fig, compact=True))
        con.print(t)
    con.print(f"[dim]{LEGEND}[/]")
    failing = [r for r in report.results if not r.passed]
    if failing:
        t = Table(title=f"failing cases ({len(failing)})", title_justify="left", show_lines=True)
        for c in ("id", "lang", "expected", "question", "why"):
            t.add_column(c, overflow="fold")
        for r in failing:
            e = r.case.expect
            extra = [f"evidence {r.evidence:.3f} / threshold {fmt(r.threshold)}"] if r.evidence is not None else []
            if r.failure_class:
                extra.append(f"stage: {r.failure_class}")
            t.add_row(r.case.id, r.lang, e.kind + (f" · {e.category}" if e.category else ""), r.case.question,
                      "\n".join(r.failures) + (f"\n[dim]{' · '.join(extra)}[/]" if extra else ""))
        con.print(t)
    g = summary["gates"]
    checks = [("refusal sets perfect", g["refusal_sets_perfect"]), ("citation validity 100%", g["citations_valid"]),
              ("no case raised", g["no_errors"])]
    for name, ok in checks:
        con.print(("[green]PASS[/green] " if ok else "[bold red]FAIL[/bold red] ") + name)


def _num(v) -> str:
    if v is None:
        return "–"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def svg_histogram(groups: Mapping[str, Sequence[float]], threshold: float | None = None, *,
                  width: int = 720, height: int = 260, bin_width: float = 0.01) -> str:
    """Overlaid histograms of scores in [0, 1], one colour per group, with the threshold line.

    The x axis starts at the lowest score (rounded down to a bin) so that the region where
    answerable and must-refuse scores meet is readable; the y axis counts cases per bin.
    """
    values = [v for vs in groups.values() for v in vs]
    if not values:
        return '<p class="meta">No case reached retrieval: no evidence scores to plot.</p>'
    lo_candidates = values + ([threshold] if threshold else [])
    lo = math.floor(min(lo_candidates) / bin_width) * bin_width
    hi = 1.0 + bin_width
    nbins = max(1, round((hi - lo) / bin_width))
    counts = {g: [0] * nbins for g in groups}
    for g, vs in groups.items():
        for v in vs:
            counts[g][min(nbins - 1, max(0, int((v - lo) / bin_width + 1e-9)))] += 1  # 1e-9: 0.83 is bin [0.83, 0.84)
    top = max(max(c) for c in counts.values()) or 1
    ml, mr, mt, mb = 40, 10, 44, 36
    pw, ph = width - ml - mr, height - mt - mb
    x = lambda v: ml + (v - lo) / (hi - lo) * pw  # noqa: E731
    y = lambda n: mt + ph - n / top * ph  # noqa: E731
    bw = pw / nbins
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="best evidence per case">']
    for n in range(top + 1):
        if top <= 10 or n % math.ceil(top / 5) == 0:
            parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{y(n):.1f}" y2="{y(n):.1f}" stroke="#eee"/>'
                         f'<text x="{ml - 6}" y="{y(n) + 4:.1f}" font-size="10" text-anchor="end">{n}</text>')
    k = len(groups)
    for gi, (g, cs) in enumerate(counts.items()):
        color = COLORS.get(g, SERIES_COLORS[gi % len(SERIES_COLORS)])
        for b, c in enumerate(cs):
            if c:
                bx = ml + b * bw + gi * bw / k
                parts.append(f'<rect x="{bx:.1f}" y="{y(c):.1f}" width="{max(bw / k - 1, 1):.1f}" height="{ph + mt - y(c):.1f}" '
                             f'fill="{color}" fill-opacity="0.8"><title>{escape(g)}: {c} case(s) in '
                             f'[{lo + b * bin_width:.2f}, {lo + (b + 1) * bin_width:.2f})</title></rect>')
    step = 0.05 if hi - lo > 0.2 else 0.02
    t = math.ceil(lo / step) * step
    while t <= 1.0 + 1e-9:
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{mt + ph}" y2="{mt + ph + 4}" stroke="#333"/>'
                     f'<text x="{x(t):.1f}" y="{mt + ph + 16}" font-size="10" text-anchor="middle">{t:.2f}</text>')
        t += step
    parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{mt + ph}" y2="{mt + ph}" stroke="#333"/>')
    parts.append(f'<text x="{ml + pw / 2}" y="{height - 4}" font-size="11" text-anchor="middle">best bounded evidence</text>')
    if threshold:
        parts.append(f'<line x1="{x(threshold):.1f}" x2="{x(threshold):.1f}" y1="{mt - 12}" y2="{mt + ph}" stroke="#000" '
                     f'stroke-dasharray="4 3"/><text x="{x(threshold) + 4:.1f}" y="{mt - 4}" font-size="11">'
                     f'threshold {threshold:.3f}</text>')
    lx = ml + 8
    for gi, g in enumerate(groups):
        color = COLORS.get(g, SERIES_COLORS[gi % len(SERIES_COLORS)])
        label = f"{g} ({len(groups[g])})"
        parts.append(f'<rect x="{lx}" y="6" width="10" height="10" fill="{color}"/>'
                     f'<text x="{lx + 14}" y="15" font-size="11">{escape(label)}</text>')
        lx += 30 + 7 * len(label)
    parts.append("</svg>")
    return "".join(parts)


def svg_bars(categories: Sequence[str], series: Mapping[str, Sequence[float | None]], *,
             width: int = 720, height: int = 240) -> str:
    """Grouped bars in [0, 1]: one group per category, one bar per series; None draws no bar."""
    if not categories:
        return ""
    ml, mr, mt, mb = 40, 10, 28, 30
    pw, ph = width - ml - mr, height - mt - mb
    gw = pw / len(categories)
    k = max(1, len(series))
    bw = gw * 0.8 / k
    y = lambda v: mt + ph - v * ph  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="figures per language">']
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#eee"/>'
                     f'<text x="{ml - 6}" y="{y(t) + 4:.1f}" font-size="10" text-anchor="end">{t:.2f}</text>')
    for ci, cat in enumerate(categories):
        gx = ml + ci * gw + gw * 0.1
        for si, (name, vals) in enumerate(series.items()):
            v = vals[ci]
            if v is None:
                continue
            color = SERIES_COLORS[si % len(SERIES_COLORS)]
            parts.append(f'<rect x="{gx + si * bw:.1f}" y="{y(v):.1f}" width="{max(bw - 1, 1):.1f}" height="{ph + mt - y(v):.1f}" '
                         f'fill="{color}"><title>{escape(cat)} · {escape(name)}: {v:.3f}</title></rect>')
        parts.append(f'<text x="{ml + ci * gw + gw / 2:.1f}" y="{mt + ph + 16}" font-size="11" text-anchor="middle">{escape(cat)}</text>')
    lx = ml + 8
    for si, name in enumerate(series):
        parts.append(f'<rect x="{lx}" y="6" width="10" height="10" fill="{SERIES_COLORS[si % len(SERIES_COLORS)]}"/>'
                     f'<text x="{lx + 14}" y="15" font-size="11">{escape(name)}</text>')
        lx += 30 + 7 * len(name)
    parts.append("</svg>")
    return "".join(parts)


def _table(rows: Mapping[str, dict]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in ("", *COLUMNS))
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in (name, *row(fig))) + "</tr>" for name, fig in rows.items())
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _case_html(r) -> str:
    c, e = r.case, r.case.expect
    expected = e.kind + (f" · {e.category}" if e.category else "")
    got = r.outcome + (f" ({r.layer or 'model'} · {r.category})" if r.category else "") + (f", route {r.route}" if r.route else "")
    rows = [("question", c.question), ("language", r.lang), ("expected", expected), ("got", got)]
    if c.previous:
        rows.append(("previous", f"{c.previous.question}\n→ {c.previous.answer}" if c.previous.answer else c.previous.question))
    if c.tenant or c.as_of:
        rows.append(("tenant / as of", f"{c.tenant or '(default)'} / {c.as_of or '(today)'}"))
    rows.append(("why it failed", "\n".join(r.failures)))
    if r.failure_class:
        rows.append(("failing stage", r.failure_class))
    if r.evidence is not None:
        rows.append(("evidence", f"{r.evidence:.4f} (threshold {_num(r.threshold)})"))
    if e.relevant:
        rows.append(("relevant", ", ".join(e.relevant)))
    if r.retrieved_doc_ids:
        rows.append(("retrieved docs", ", ".join(r.retrieved_doc_ids)))
    if r.cited_ids:
        rows.append(("cited", ", ".join(r.cited_ids)))
    if r.text:
        rows.append(("answer", r.text))
    dl = "".join(f"<dt>{escape(k)}</dt><dd style='white-space:pre-wrap'>{escape(v)}</dd>" for k, v in rows)
    trace = escape(json.dumps(r.trace, ensure_ascii=False, indent=2, default=str))
    return (f'<div class="case" id="case-{escape(c.id)}"><b>{escape(c.id)}</b><dl>{dl}</dl>'
            f"<details><summary>trace</summary><pre>{trace}</pre></details></div>")


def render_html(report, summary: dict) -> str:
    """The report as one HTML string (pure: no file access)."""
    m, g = report.meta, summary["gates"]
    results = report.results
    answerable = [r.evidence for r in results if r.evidence is not None and r.case.expect.kind == "answer"]
    no_ev = [r.evidence for r in results if r.evidence is not None and r.case.expect.kind == "refuse_no_evidence"]
    pattern = [r.evidence for r in results if r.evidence is not None and r.case.expect.kind == "refuse_pattern"]
    groups = {"answerable": answerable, "no-evidence set": no_ev}
    if pattern:
        groups["pattern set"] = pattern  # escaped L1 cases that reached retrieval
    langs = list(summary["by_language"])
    by = summary["by_language"]
    series = {
        "cases passed": [by[x]["passed"] / by[x]["cases"] for x in langs],
        "abstention recall": [by[x]["abstention"]["recall"] for x in langs],
        f"recall@{RECALL_K}": [by[x][f"recall@{RECALL_K}"] for x in langs],
        "false-refusal rate": [by[x]["false_refusals"]["rate"] for x in langs],
    }
    status = lambda ok: '<span class="pass">PASS</span>' if ok else '<span class="fail">FAIL</span>'  # noqa: E731
    failing = [r for r in results if not r.passed]
    notes = "".join(f"<li>{escape(n)}</li>" for n in m.get("notes", []))
    head = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        f"<title>vouched golden set — {escape(str(m.get('golden', '')))}</title><style>{_CSS}</style></head><body>",
        f"<h1>Golden set: {escape(str(m.get('golden', '')))}</h1>",
        f"<p class=meta>{summary['cases']} cases, {summary['passed']} passed · threshold {_num(m.get('threshold'))} · "
        f"embedding {escape(str(m.get('embedding_model')))} · generator {escape(str(m.get('provider')))} · "
        f"corpus {escape(str(m.get('corpus_version') or '')[:12])} · {escape(str(m.get('date')))} · {m.get('seconds')} s</p>",
        f"<ul>{notes}</ul>" if notes else "",
        "<p>" + " · ".join([f"{status(g['refusal_sets_perfect'])} refusal sets perfect",
                            f"{status(g['citations_valid'])} citation validity 100%",
                            f"{status(g['no_errors'])} no case raised"]) + "</p>",
    ]
    body = [
        "<h2>Figures</h2>", _table({"all": summary}),
        "<h3>By language</h3>", _table(summary["by_language"]),
        "<h3>By category</h3>", _table(summary["by_category"]),
        "<h3>Follow-ups</h3>", _table({"follow-ups": summary["followups"]}),
        "<h2>Best evidence: answerable vs must-refuse</h2>",
        "<p class=meta>Cases that reached retrieval; pattern-set cases appear only when L1 let them through.</p>",
        svg_histogram(groups, m.get("threshold") or None),
        "<h2>Per language</h2>", svg_bars(langs, series),
        f"<h2>Failing cases ({len(failing)})</h2>",
        *(_case_html(r) for r in failing),
        "<h2>Summary (JSON)</h2><details><summary>show</summary><pre>",
        escape(json.dumps(summary, ensure_ascii=False, indent=2)), "</pre></details></body></html>",
    ]
    return "".join(head + body)


def write_html_report(report, summary: dict, out_dir: Path) -> Path:
    """Write ``report.html`` into ``out_dir`` (created if needed); returns its path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "report.html"
    path.write_text(render_html(report, summary), encoding="utf-8")
    return path
