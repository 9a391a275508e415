"""Sentence-gate (L4 + L5) cost per sentence over a long, multilingual, scripted stream.

    .venv/bin/python benchmarks/gate.py [--sentences 2400] [--runs 15] [--seed 7]

Builds ``--sentences`` sentences in ten languages (markers, years, counts, decimals,
thousands separators, Persian/Arabic digits, URLs; every one of them supported by the
sources it cites, so the gate never stops), cuts them into random chunks of 1-8
characters, and times ``SentenceGate.feed`` over every chunk plus ``finish()`` — the
gate's whole cost, construction (source value sets) included. Chunking is done before
the clock starts.

Two ways of feeding it, both printed:

* per language (the target): one long stream per language, each through a gate built
  with that language — what the pipeline does (``SentenceGate(sources, lang)`` with the
  answer's language);
* mixed: one stream of all ten languages through one gate with ``lang=None``, so L5 has
  to find the scripts of every sentence itself (informational; no answer mixes ten
  languages);
* early stop: the per-language streams through ``SentenceGate(sources, lang,
  early_stop=True)``, as the pipeline builds it — each completed word that may hold a
  value or a name is also checked against all the sources (informational: the target is
  the per-language figure).

Prints the machine (with its load average and a fixed reference workload, so figures from
different machines can be compared), the number of runs, and wall-clock µs per sentence
(mean, p95, min over runs), plus the process's CPU time per sentence — on a shared,
loaded machine wall time includes time spent waiting for a CPU.
Exits 0 when the mean is under the target (50 µs per sentence), 1 when it is not, and 2
when the gate's verdicts are wrong (a sentence held back, or the wrong count) — a fast
gate that refuses good text is not a pass.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import statistics
import sys
import time

from vouched.guard.gate import SentenceGate

TARGET_US = 50.0

SOURCES = {
    1: "Vouched was started in 2023 by a team of 4 engineers and serves 12,000 readers.",
    2: "Revenue grew 18 % in 2024, to 3.5 million euros; the 2nd office opened in Lisbon.",
    3: "La empresa tiene 1.250 clientes y un margen de 0,52 desde 2019. https://ejemplo.es/informe",
    4: "این پروژه در سال ۱۴۰۲ با ۱۲٬۰۰۰ کاربر آغاز شد و ۳۵ نفر در آن کار می‌کنند.",
    5: "该项目于2021年启动，目前有250名用户和12个合作伙伴。",
    6: "Das Team hat 42 Mitglieder und wurde 2016 in Berlin gegründet; Kontakt: info@beispiel.de",
    7: "Компания основана в 2015 году и насчитывает 300 сотрудников.",
    8: "परियोजना 2020 में शुरू हुई और इसमें 75 लोग काम करते हैं।",
    9: "تأسست الشركة عام ٢٠١٨ ولديها ٤٥ موظفا.",
    10: "L'entreprise compte 64 salariés et a été fondée en 2012 à Lyon.",
    11: "A empresa tem 90 funcionários e foi fundada em 2010 no Porto.",
}

TEMPLATES = [
    ("en", "Vouched was started in {y} by a team of {n} engineers [1]."),
    ("en", "It now serves {k} readers across several countries and sectors [1]."),
    ("en", "Revenue grew {p}% in 2024 to {m} million euros, says the annual report [2]."),
    ("en", "In short: the second office opened in Lisbon.[2]"),
    ("en", "Here is what the sources say."),
    ("es", "La empresa tiene {c} clientes y un margen de {d} desde 2019 [3]."),
    ("es", "El informe completo está en https://ejemplo.es/informe/ para consulta [3]."),
    ("fa", "این پروژه در سال ۱۴۰۲ با ۱۲٬۰۰۰ کاربر آغاز شد [۴]."),
    ("fa", "در این پروژه ۳۵ نفر مشغول به کار هستند و تیم در حال رشد است [۴]."),
    ("zh", "该项目于2021年启动，目前有250名用户[5]。"),
    ("zh", "该项目目前有12个合作伙伴，并且还在继续扩展合作范围[5]。"),
    ("de", "Das Team hat 42 Mitglieder und wurde 2016 in Berlin gegründet [6]."),
    ("de", "Anfragen gehen an info@beispiel.de, wie die Seite angibt [6]."),
    ("ru", "Компания основана в 2015 году и насчитывает 300 сотрудников [7]."),
    ("hi", "परियोजना 2020 में शुरू हुई और इसमें 75 लोग काम करते हैं [8]।"),
    ("ar", "تأسست الشركة عام ٢٠١٨ ولديها ٤٥ موظفا حسب المصدر [9]."),
    ("fr", "L'entreprise compte 64 salariés et a été fondée en 2012 à Lyon [10]."),
    ("pt", "A empresa tem 90 funcionários e foi fundada em 2010 no Porto [11]."),
    ("en", "Both offices report {k} readers and {p}% growth in total [1][2]."),
]

FILL = {
    "y": ["2023"],
    "n": ["4", "four"],
    "k": ["12,000", "12.000", "12000"],
    "p": ["18", "18 "],
    "m": ["3.5", "3,5"],
    "c": ["1.250", "1,250"],
    "d": ["0,52", "0.52"],
}


def build_stream(n: int, rng: random.Random) -> str:
    """``n`` sentences drawn from the templates, joined by spaces and the odd newline."""
    parts = []
    for i in range(n):
        _, template = TEMPLATES[rng.randrange(len(TEMPLATES))]
        sentence = template.format(**{k: rng.choice(v) for k, v in FILL.items()})
        parts.append(sentence)
        parts.append("\n\n" if i % 25 == 24 else " ")
    return "".join(parts)


def chunk(text: str, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        k = rng.randint(1, 8)
        out.append(text[i : i + k])
        i += k
    return out


def run_once(chunks: list[str], lang: str | None = None, early: bool = False) -> tuple[float, float, list]:
    """(wall seconds, CPU seconds of this process, verdicts) for one pass over the stream."""
    c0, t0 = time.process_time(), time.perf_counter()
    gate = SentenceGate(SOURCES, lang, early_stop=True) if early else SentenceGate(SOURCES, lang)
    verdicts = []
    for c in chunks:
        verdicts += gate.feed(c)
    verdicts += gate.finish()
    return time.perf_counter() - t0, time.process_time() - c0, verdicts


def build_language_stream(lang: str, n: int, rng: random.Random) -> str:
    """``n`` sentences of one language's templates."""
    templates = [t for code, t in TEMPLATES if code == lang]
    parts = []
    for i in range(n):
        parts.append(rng.choice(templates).format(**{k: rng.choice(v) for k, v in FILL.items()}))
        parts.append("\n\n" if i % 25 == 24 else " ")
    return "".join(parts)


def run_per_language(streams: dict[str, str], rng: random.Random, early: bool = False) -> tuple[float, float, list, int]:
    """One pass over every language's stream, each through a gate built with its language."""
    wall = cpu = 0.0
    verdicts: list = []
    for lang, stream in streams.items():
        w, c, v = run_once(chunk(stream, rng), lang, early)
        wall, cpu = wall + w, cpu + c
        verdicts += v
    return wall, cpu, verdicts, sum(1 for _ in verdicts)


def reference_ms() -> float:
    """A fixed pure-Python workload (best of 3), to compare machines: ~100 ms is typical."""
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        sum(range(10**7))
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def machine() -> str:
    load = ""
    if hasattr(os, "getloadavg"):
        load = ", load average %.2f %.2f %.2f" % os.getloadavg()
    cpu = platform.processor() or platform.machine()
    return (
        f"{platform.node()} — {platform.platform()}, {cpu}, {os.cpu_count()} CPUs{load}; "
        f"Python {platform.python_version()} ({platform.python_implementation()})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=2400)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    if args.sentences < 2000 or args.runs < 1:
        ap.error("--sentences must be at least 2000 and --runs at least 1")
    rng = random.Random(args.seed)
    langs = sorted({code for code, _ in TEMPLATES})
    per_lang_n = args.sentences // len(langs)
    streams = {lang: build_language_stream(lang, per_lang_n, rng) for lang in langs}
    expected = per_lang_n * len(langs)
    mixed = build_stream(args.sentences, rng)
    figures: dict[str, tuple[list[float], list[float]]] = {
        "per language": ([], []), "mixed": ([], []), "early stop": ([], [])}
    for _ in range(args.runs):
        for mode in figures:
            if mode != "mixed":
                seconds, cpu, verdicts, _n = run_per_language(streams, rng, early=mode == "early stop")
                want = expected
            else:
                seconds, cpu, verdicts = run_once(chunk(mixed, rng))
                want = args.sentences
            bad = [v for v in verdicts if not v.ok]
            if bad or len(verdicts) != want:
                print(f"WRONG ({mode}): {len(verdicts)} verdicts for {want} sentences; "
                      f"first held back: {bad[0] if bad else None}")
                return 2
            figures[mode][0].append(seconds / want * 1e6)
            figures[mode][1].append(cpu / want * 1e6)
    print(f"machine: {machine()}")
    print(f"reference workload (sum(range(10**7)), best of 3): {reference_ms():.0f} ms")
    print(f"streams: {expected} sentences in {len(langs)} languages ({per_lang_n} each, one gate per "
          f"language) and {args.sentences} mixed (one gate, lang=None); chunks of 1-8 characters; "
          f"{args.runs} runs (seed {args.seed})")
    for mode, (wall, cpu) in figures.items():
        ordered = sorted(wall)
        p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
        print(f"{mode:>12}: gate cost per sentence: mean {statistics.fmean(wall):.1f} µs, p95 {p95:.1f} µs, "
              f"min {ordered[0]:.1f} µs; process CPU mean {statistics.fmean(cpu):.1f} µs, min {min(cpu):.1f} µs")
    mean = statistics.fmean(figures["per language"][0])
    print("early stop: the per-language streams through SentenceGate(..., early_stop=True), as the "
          "pipeline builds it (each completed word holding a candidate character is also checked "
          "against all the sources)")
    print(f"target: per-language mean < {TARGET_US:.0f} µs per sentence (wall); "
          "on a loaded machine compare the CPU figure too")
    ok = mean < TARGET_US
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
