"""Injection scan speed against an earlier revision, both in this process, runs interleaved.

    .venv/bin/python benchmarks/injection_ab.py [--rev 2557278] [--texts 1500] [--rounds 5]

On a shared, busy machine texts/s figures move with the load; the ratio of two
implementations measured side by side (process CPU time, best of the rounds, rounds
alternating between them) moves much less. ``--rev`` names the git revision whose
``vouched/guard/injection.py`` and ``vouched/guard/decode.py`` are the baseline (default: the
one before the prefilter rewrite); the packs and the rest of vouched are today's, so only
the scan itself differs. Texts: an even sample of the SciFact, SQuAD 2.0 and XQuAD texts
under ``--bench-dir``. Prints both rates and the speed-up; checks first that both
implementations flag the same texts.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from vouched.bench.injection import corpus_texts, reference_ms  # noqa: E402
from vouched.guard import injection as new  # noqa: E402


def _old_modules(rev: str, where: Path):
    def show(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True,
                              capture_output=True, text=True).stdout

    (where / "old_decode.py").write_text(show("vouched/guard/decode.py"), "utf-8")
    src = show("vouched/guard/injection.py").replace("from vouched.guard.decode import", "from old_decode import")
    (where / "old_injection.py").write_text(src, "utf-8")
    sys.path.insert(0, str(where))
    return importlib.import_module("old_injection")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="2557278")
    ap.add_argument("--texts", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bench-dir", type=Path, default=ROOT / ".." / "shared" / "benchmarks")
    args = ap.parse_args(argv)
    texts = [t for _, t in corpus_texts(args.bench_dir)]
    if not texts:
        print(f"no corpus texts under {args.bench_dir}")
        return 2
    texts = texts[:: max(1, len(texts) // args.texts)][: args.texts]
    with tempfile.TemporaryDirectory() as tmp:
        old = _old_modules(args.rev, Path(tmp))
        differ = [i for i, t in enumerate(texts) if bool(old.scan_injection(t)) != bool(new.scan_injection(t))]
        best = {"old": float("inf"), "new": float("inf")}
        for _ in range(args.rounds):
            for name, mod in (("old", old), ("new", new)):
                t0 = time.process_time()
                for t in texts:
                    mod.inspect_text(t)
                best[name] = min(best[name], time.process_time() - t0)
    n = len(texts)
    print(f"{n} texts, {args.rounds} rounds interleaved, process CPU time, best round")
    print(f"baseline {args.rev}: {n / best['old']:.0f} texts/s")
    print(f"current          : {n / best['new']:.0f} texts/s")
    print(f"speed-up         : {best['old'] / best['new']:.2f}x")
    print(f"texts flagged differently: {len(differ)}")
    print(f"reference workload (sum(range(10**7)), best of 3): {reference_ms():.0f} ms")
    return 0 if not differ else 1


if __name__ == "__main__":
    raise SystemExit(main())
