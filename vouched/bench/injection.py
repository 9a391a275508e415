"""Injection detector benchmark (issue 15.4): the adversarial set, public corpora, speed.

    python benchmarks/injection.py [--bench-dir ../shared/benchmarks] [--json]

* Adversarial set (``vouched/eval/sets/injection_adversarial.jsonl``): share of malicious
  texts flagged, per family and language; false flags on the benign look-alikes.
* Public corpora (when ``--bench-dir`` holds them): every SciFact abstract, every SQuAD 2.0
  dev context and every XQuAD (en, es) context is scanned; none may be flagged.
* Speed: texts scanned per second over those corpora (each text is a chunk-sized passage),
  with ``inspect_text`` exactly as ingestion calls it; wall clock (the target) and process
  CPU time, and a fixed reference workload, so a figure from a busy machine can be read.

Targets: >= 80% malicious flagged, >= 70% of the indirect family, >= 60% of the encoded
family, <= 2% of benign look-alikes flagged, 0 corpus texts flagged, >= 2,000 texts/s (of
process CPU time, which on an idle core is the wall rate). Exit status 1 when a target is missed.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Iterable, Iterator

__all__ = ["corpus_texts", "load_set", "run_set", "run_corpora", "main"]

TARGETS = {"malicious": 0.80, "indirect": 0.70, "encoded": 0.60, "benign_max": 0.02, "texts_per_s": 2000.0}


def load_set(path: Path | None = None) -> list[dict]:
    if path is None:
        raw = resources.files("vouched.eval.sets").joinpath("injection_adversarial.jsonl").read_text("utf-8")
    else:
        raw = Path(path).read_text("utf-8")
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def _flagged(text: str) -> tuple[bool, list[str]]:
    from vouched.guard.injection import scan_injection

    hits = scan_injection(text)
    return bool(hits), [f"{h.lang}/{h.category}: {h.match[:60]}" for h in hits]


def run_set(rows: Iterable[dict]) -> dict:
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_encoding: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed, false_flags = [], []
    mal = [0, 0]
    ben = [0, 0]
    for r in rows:
        hit, why = _flagged(r["text"])
        if r["label"] == "malicious":
            mal[1] += 1
            mal[0] += hit
            for table, key in ((by_family, r["family"]), (by_lang, r["lang"])):
                table[key][1] += 1
                table[key][0] += hit
            if "encoding" in r:
                by_encoding[r["encoding"]][1] += 1
                by_encoding[r["encoding"]][0] += hit
            if not hit:
                missed.append(r)
        else:
            ben[1] += 1
            ben[0] += hit
            if hit:
                false_flags.append((r, why))
    return {
        "malicious": mal, "benign": ben,
        "family": dict(by_family), "lang": dict(by_lang), "encoding": dict(by_encoding),
        "missed": missed, "false_flags": false_flags,
    }


def corpus_texts(bench_dir: Path) -> Iterator[tuple[str, str]]:
    """(corpus name, text) for every SciFact abstract, SQuAD 2.0 dev and XQuAD context present."""
    sci = bench_dir / "scifact" / "corpus.jsonl"
    if sci.exists():
        for line in sci.read_text("utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                yield "scifact", f"{d.get('title', '')}\n{d.get('text', '')}"
    squad = bench_dir / "squad2-dev" / "dev-v2.0.json"
    for name, path in [("squad2", squad)] + [(f"xquad.{p.stem.split('.')[-1]}", p) for p in sorted((bench_dir / "xquad").glob("xquad.*.json"))]:
        if not path.exists():
            continue
        for art in json.loads(path.read_text("utf-8"))["data"]:
            for para in art["paragraphs"]:
                yield name, para["context"]


def run_corpora(bench_dir: Path) -> dict:
    from vouched.guard.injection import inspect_text, is_flagged

    texts = list(corpus_texts(bench_dir))
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    flagged = []
    t0, c0 = time.perf_counter(), time.process_time()
    for name, text in texts:
        _, flags = inspect_text(text)
        counts[name][1] += 1
        if is_flagged(flags):
            counts[name][0] += 1
            flagged.append((name, text[:160], flags))
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    chars = sum(len(t) for _, t in texts)
    return {"counts": dict(counts), "flagged": flagged, "seconds": secs, "cpu_seconds": cpu, "texts": len(texts),
            "texts_per_s": len(texts) / secs if secs else 0.0,
            "cpu_texts_per_s": len(texts) / cpu if cpu else 0.0, "mean_chars": chars / max(len(texts), 1)}


def reference_ms() -> float:
    """A fixed pure-Python workload (best of 3), as benchmarks/gate.py prints, to compare
    machines and loads: ~135 ms on the quiet 2-core Xeon of the condition files."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        sum(range(10**7))
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _pct(h: int, n: int) -> str:
    return f"{h}/{n} = {h / n:.1%}" if n else "-"


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench-dir", type=Path, default=Path(__file__).resolve().parents[2] / ".." / "shared" / "benchmarks")
    ap.add_argument("--set", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    s = run_set(load_set(args.set))
    c = run_corpora(args.bench_dir) if args.bench_dir.exists() else None
    fam = s["family"]
    ok = True
    checks = [
        ("malicious flagged", s["malicious"][0] / max(s["malicious"][1], 1) >= TARGETS["malicious"]),
        ("indirect flagged", fam.get("indirect", [0, 1])[0] / max(fam.get("indirect", [0, 1])[1], 1) >= TARGETS["indirect"]),
        ("encoded flagged", fam.get("encoded", [0, 1])[0] / max(fam.get("encoded", [0, 1])[1], 1) >= TARGETS["encoded"]),
        ("benign false flags", s["benign"][0] / max(s["benign"][1], 1) <= TARGETS["benign_max"]),
    ]
    if c is not None:
        checks.append(("corpus false flags", not c["flagged"]))
        # process CPU time: what the scan costs one core, the wall rate of an idle one (wall
        # time on a shared machine also counts the other jobs; both are printed)
        checks.append(("texts per second", c["cpu_texts_per_s"] >= TARGETS["texts_per_s"]))
    ok = all(v for _, v in checks)
    if args.json:
        print(json.dumps({"set": {k: v for k, v in s.items() if k not in ("missed", "false_flags")},
                          "missed": [r["id"] for r in s["missed"]],
                          "false_flags": [r["id"] for r, _ in s["false_flags"]],
                          "corpora": None if c is None else {k: v for k, v in c.items() if k != "flagged"},
                          "checks": dict(checks), "ok": ok}, ensure_ascii=False, indent=1))
        return 0 if ok else 1
    print(f"malicious flagged : {_pct(*s['malicious'])}")
    for k, (h, n) in sorted(fam.items()):
        print(f"  family {k:<11}: {_pct(h, n)}")
    for k, (h, n) in sorted(s["encoding"].items()):
        print(f"  encoding {k:<9}: {_pct(h, n)}")
    print("  by language     : " + ", ".join(f"{k} {h}/{n}" for k, (h, n) in sorted(s["lang"].items())))
    print(f"benign flagged    : {_pct(*s['benign'])}")
    for r in s["missed"]:
        print(f"  MISSED {r['id']} {r['family']}/{r['lang']}: {r['text'][:100]!r}")
    for r, why in s["false_flags"]:
        print(f"  FALSE FLAG {r['id']} {r['family']}/{r['lang']}: {r['text'][:80]!r} <- {why}")
    if c is not None:
        print("corpora flagged   : " + ", ".join(f"{k} {h}/{n}" for k, (h, n) in sorted(c["counts"].items())))
        for name, text, flags in c["flagged"][:20]:
            print(f"  CORPUS FLAG {name}: {text!r} {flags}")
        print(f"speed             : {c['texts']} texts ({c['mean_chars']:.0f} chars mean) in {c['seconds']:.2f} s = {c['texts_per_s']:.0f} texts/s")
        print(f"speed (CPU time)  : {c['cpu_seconds']:.2f} s = {c['cpu_texts_per_s']:.0f} texts/s of process CPU (less sensitive to load)")
        print(f"reference workload (sum(range(10**7)), best of 3): {reference_ms():.0f} ms")
    for name, v in checks:
        print(f"check {name:<20}: {'ok' if v else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
