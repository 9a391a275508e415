"""Showing a calibration: the decision in words, the two distributions as text and as an SVG picture.

Part of vouched.eval.calibrate (which re-exports every name here).
"""

from __future__ import annotations

import math
from typing import Any, Sequence
from xml.sax.saxutils import escape

from vouched.eval.calibrate_choice import RARE_CUTS, Calibration, ThresholdChoice, allowed_losses


# -- showing it ------------------------------------------------------------------------------------
def _fmt_t(t: float | None) -> str:
    return "none" if t is None else (f"{t:.4f}" if round(t, 4) == t else repr(t))


def histogram(values: Sequence[float], lo: float, width: float, bins: int) -> list[int]:
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int((v - lo) / width + 1e-9)))] += 1
    return counts


def _bins(cal: Calibration, width: float = 0.05) -> tuple[float, int]:
    vals = [s.evidence for s in cal.scored if s.evidence is not None]
    lo = math.floor(min(vals, default=0.0) / width) * width
    return lo, max(1, math.ceil((1.0 - lo) / width - 1e-9))


def shown_threshold(c: ThresholdChoice) -> float | None:
    """The line drawn and the verdicts printed: the choice, else the lowest safe threshold,
    else the best threshold within the allowed loss."""
    if c.value is not None or c.closest is None:
        return c.value
    return c.closest.safe_value if c.closest.safe_value is not None else c.closest.budget_value


def decision_lines(cal: Calibration) -> list[str]:
    c = cal.choice
    allowed = allowed_losses(c.max_loss, c.answerable_total)
    if c.value is not None:
        line = (f"threshold {_fmt_t(c.value)}: stops {c.refused_stopped}/{c.refused_total} must-refuse cases, "
                f"loses {c.answerable_lost}/{c.answerable_total} answerable ({c.loss:.1%}; allowed {c.max_loss:.1%} = {allowed})")
        ref = cal.scores("must_refuse")
        kept = [s.evidence for s in cal.scores("answerable") if s.evidence >= c.value]
        if ref and kept:
            line += f"; margin {kept[0] - ref[-1].evidence:.4f} between the highest must-refuse and the lowest kept answerable score"
        return [line, *_rare_cut_lines(cal)]
    k = c.closest
    assert k is not None
    lines = [f"NO SAFE THRESHOLD within {c.max_loss:.1%} answerable loss (at most {allowed} of {c.answerable_total}):"]
    if k.safe_value is None:
        lines.append("  a must-refuse case scores 1.0: no threshold (at most 1.0) stops it")
    else:
        lines.append(f"  the lowest threshold that stops every must-refuse case, {_fmt_t(k.safe_value)}, loses "
                     f"{k.safe_lost}/{c.answerable_total} answerable ({k.safe_lost / max(1, c.answerable_total):.1%})")
    lines.append(f"  the best threshold within the allowed loss, {_fmt_t(k.budget_value)}, lets {k.let_through}/"
                 f"{c.refused_total} must-refuse case(s) through")
    return lines + _rare_cut_lines(cal)


def _rare_cut_lines(cal: Calibration) -> list[str]:
    if cal.rare_cut is None:
        return []
    lo, hi = cal.rare_cut_range or (cal.rare_cut, cal.rare_cut)
    refused = [s.case.id for s in cal.scored if s.uncovered]
    return [f"rare-word cut {cal.rare_cut} (L2 coverage; learnt with the threshold): cuts {lo}–{hi} of "
            f"{', '.join(map(str, RARE_CUTS))} decide every case alike (its margin); L2 coverage refuses "
            f"{len(refused)} case(s) at it" + (f": {', '.join(refused[:8])}" + (", …" if len(refused) > 8 else "") if refused else "")]


def print_calibration(cal: Calibration, console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    con = console or Console()
    t = shown_threshold(cal.choice)
    ans, ref = cal.scores("answerable"), cal.scores("must_refuse")
    con.print(f"[bold]calibration[/]: embedding model {cal.embedding_model}, corpus version {(cal.corpus_version or '?')[:12]}; "
              f"{len(ans)} answerable, {len(ref)} must-refuse scored (best bounded evidence, retrieval only)", highlight=False)
    if cal.left_out:
        con.print(f"[dim]{cal.left_out} golden case(s) of other kinds left out (pattern refusals, records)[/]")
    for w in cal.warnings:
        con.print(f"[yellow]warning:[/] {w}", highlight=False)
    lo, n = _bins(cal)
    ha, hr = histogram([s.evidence for s in ans], lo, 0.05, n), histogram([s.evidence for s in ref], lo, 0.05, n)
    h = Table(title="distributions (bins of 0.05)", title_justify="left")
    for col in ("evidence", "answerable", "", "must-refuse", ""):
        h.add_column(col)
    t_bin = None if t is None else min(n - 1, max(0, int((t - lo) / 0.05 + 1e-9)))
    i = 0
    while i < n:
        run_end = i
        while run_end < n and not ha[run_end] and not hr[run_end] and run_end != t_bin:
            run_end += 1
        if run_end - i >= 3:  # a long run of empty bins is one row
            h.add_row(f"{lo + i * 0.05:.2f}–{lo + run_end * 0.05:.2f}", "", Text("·"), "", Text("·"))
            i = run_end
            continue
        a0 = lo + i * 0.05
        h.add_row(f"{a0:.2f}–{a0 + 0.05:.2f}" + (" ◀ threshold" if i == t_bin else ""), str(ha[i] or ""),
                  Text("█" * ha[i], style="blue"), str(hr[i] or ""), Text("█" * hr[i], style="red"))
        i += 1
    con.print(h)
    for label, rows, title in (("answerable", ans, "answerable (lowest first)"), ("must_refuse", ref, "must-refuse (highest last)")):
        tab = Table(title=title, title_justify="left")
        for col in ("evidence", "run", "case", "at the threshold", "question"):
            tab.add_column(col, overflow="fold")
        for s in rows:
            passes = t is not None and s.evidence >= t
            verdict = ("kept" if passes else "LOST") if label == "answerable" else ("LETS THROUGH" if passes else "stopped")
            style = "red" if verdict in ("LOST", "LETS THROUGH") else "green"
            q = s.case.question
            tab.add_row(f"{s.evidence:.4f}", s.run, Text(s.case.id), Text(verdict if t is not None else "", style=style),
                        Text(q if len(q) <= 60 else q[:59] + "…"))
        con.print(tab)
    for s in cal.skipped:
        con.print(f"[dim]skipped {s.case.id} ({s.case.label}): {s.skipped}[/]", highlight=False)
    for line in decision_lines(cal):
        con.print(Text(line, style="bold green" if cal.choice.value is not None else "bold red"))


def calibration_svg(cal: Calibration, width: int = 760) -> str:
    """Both distributions as one SVG: answerable bars above the axis, must-refuse below, one
    tick per case (hover: id and score), and the threshold as a vertical line."""
    lo, n = _bins(cal)
    bw = 0.05
    ans, ref = cal.scores("answerable"), cal.scores("must_refuse")
    ha, hr = histogram([s.evidence for s in ans], lo, bw, n), histogram([s.evidence for s in ref], lo, bw, n)
    left, right, top, mid_h = 60, 20, 70, 130
    plot_w = width - left - right
    axis_y = top + mid_h
    height = axis_y + mid_h + 70
    peak = max([*ha, *hr, 1])
    x = lambda v: left + (v - lo) / (n * bw) * plot_w  # noqa: E731
    bar_h = lambda c: (mid_h - 20) * c / peak  # noqa: E731
    c = cal.choice
    t = shown_threshold(c)
    title = f"L2 calibration — {cal.embedding_model}, corpus {(cal.corpus_version or '?')[:12]}"
    sub = decision_lines(cal)[0].split("; margin")[0]
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
         'font-family="sans-serif" font-size="12">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="{left}" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
         f'<text x="{left}" y="42" fill="{"#1a7f37" if c.value is not None else "#c62828"}">{escape(sub)}</text>']
    for i in range(n):
        x0, x1 = x(lo + i * bw) + 1, x(lo + (i + 1) * bw) - 1
        for count, sign, colour, label in ((ha[i], -1, "#3b6fd4", "answerable"), (hr[i], 1, "#d64545", "must-refuse")):
            if count:
                hgt = bar_h(count)
                y = axis_y - hgt if sign < 0 else axis_y
                o.append(f'<rect x="{x0:.1f}" y="{y:.1f}" width="{x1 - x0:.1f}" height="{hgt:.1f}" fill="{colour}" '
                         f'fill-opacity="0.35"><title>{label}: {count} in {lo + i * bw:.2f}–{lo + (i + 1) * bw:.2f}</title></rect>')
    for rows, sign, colour in ((ans, -1, "#3b6fd4"), (ref, 1, "#d64545")):
        for s in rows:
            xs = x(s.evidence)
            y0, y1 = (axis_y - 14, axis_y - 2) if sign < 0 else (axis_y + 2, axis_y + 14)
            o.append(f'<line x1="{xs:.1f}" y1="{y0}" x2="{xs:.1f}" y2="{y1}" stroke="{colour}" stroke-width="2">'
                     f'<title>{escape(s.case.id)}: {s.evidence:.4f}</title></line>')
    o.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="black"/>')
    for i in range(n + 1):
        v = lo + i * bw
        o.append(f'<line x1="{x(v):.1f}" y1="{axis_y}" x2="{x(v):.1f}" y2="{axis_y + 4}" stroke="black"/>')
        if i % 2 == 0 or n <= 10:
            o.append(f'<text x="{x(v):.1f}" y="{height - 38}" text-anchor="middle">{v:.2f}</text>')
    o.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 14}" text-anchor="middle">best bounded evidence score</text>')
    o.append(f'<text x="{left + 4}" y="{top + 12}" fill="#3b6fd4">answerable ({len(ans)})</text>')
    o.append(f'<text x="{left + 4}" y="{axis_y + mid_h - 4}" fill="#d64545">must refuse ({len(ref)})</text>')
    if t is not None:
        style = "" if c.value is not None else ' stroke-dasharray="6 4"'
        o.append(f'<line x1="{x(t):.1f}" y1="{top - 6}" x2="{x(t):.1f}" y2="{axis_y + mid_h}" stroke="black" stroke-width="1.5"{style}/>')
        if c.value is not None:
            label = f"threshold {_fmt_t(t)}"
        elif c.closest is not None and c.closest.safe_value is not None:
            label = f"lowest safe threshold {_fmt_t(t)}: loses more than allowed"
        else:
            label = f"best within the allowed loss {_fmt_t(t)}: lets must-refuse cases through"
        o.append(f'<text x="{x(t) + 4:.1f}" y="{top + 4}">{escape(label)}</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"
