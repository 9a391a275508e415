"""A real Redis for the spend tests: Debian's `redis-server` on a free loopback port,
without persistence unless asked (`persistent=True`: appendonly, fsync always), stopped when
the session ends. Missing is a failure, not a skip."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

INSTALL = "apt-get update && apt-get install -y redis-server"


def redis_binary() -> str:
    found = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)
    if found is None:
        pytest.fail(f"redis-server is not installed; the Redis backend tests need a real one. Install Debian's "
                    f"package: `{INSTALL}`", pytrace=False)
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """One redis-server process; `kill()` is SIGKILL, as a crash would be."""

    def __init__(self, workdir: Path, *, persistent: bool = False) -> None:
        self.workdir = workdir
        self.persistent = persistent
        self.port = 0
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 15.0, *, port: int | None = None) -> "RedisServer":
        """Start on a free port (or on `port`: a restart after `kill`, same data directory)."""
        binary = redis_binary()
        durability = (["--save", "", "--appendonly", "yes", "--appendfsync", "always"] if self.persistent
                      else ["--save", "", "--appendonly", "no"])
        for _ in range(3 if port is None else 1):  # the free port can be taken between the probe and the bind
            self.port = port or _free_port()
            self.proc = subprocess.Popen(
                [binary, "--port", str(self.port), "--bind", "127.0.0.1", *durability,
                 "--dir", str(self.workdir), "--daemonize", "no", "--loglevel", "warning"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if self._wait_ready(timeout_s):
                return self
            self.stop()
        raise RuntimeError(f"redis-server did not start on 127.0.0.1 (last port {self.port})")

    def restart(self) -> "RedisServer":
        return self.start(port=self.port)

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def _wait_ready(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()
        self.proc = None


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def own_redis(tmp_path):
    """A private server for a test that kills it."""
    server = RedisServer(tmp_path).start()
    yield server
    server.stop()


class PostgresServer:
    """A private PostgreSQL (`vouched.store.pgserver.local_postgres`) that a test may kill.

    `kill()` is SIGKILL to the postmaster and every backend at once, as the OOM killer or a
    lost machine would do it (no shutdown checkpoint; the restart runs crash recovery);
    `restart()` starts it again on the same port and data directory. The session's shared
    server (`postgres_dsn`) is never killed: tests that kill use one of these."""

    SETTINGS = ("fsync=off", "full_page_writes=off", "max_connections=200")

    def __init__(self) -> None:
        self._ctx = None
        self.pg = None

    @property
    def dsn(self) -> str:
        return self.pg.dsn

    def start(self) -> "PostgresServer":
        from vouched.store.pgserver import local_postgres

        # Unlike the session's server, a commit is durable against a crash of PostgreSQL
        # (synchronous_commit on; fsync stays off: the machine does not crash, only the server).
        self._ctx = local_postgres(settings=self.SETTINGS)
        self.pg = self._ctx.__enter__()
        self._opts = " ".join([f"-p {self.pg.port}", "-c listen_addresses=127.0.0.1",
                               f"-k {self.pg.data_dir.parent / 'sock'}", *(f"-c {s}" for s in self.SETTINGS)])
        return self

    def _postmaster(self) -> int | None:
        try:
            pid = int((self.pg.data_dir / "postmaster.pid").read_text().split()[0])
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError, IndexError):
            return None

    @staticmethod
    def _children(pid: int) -> list[int]:
        out = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry))
        return out

    def kill(self) -> None:
        pid = self._postmaster()
        if pid is None:
            return
        procs = [pid, *self._children(pid)]
        for p in procs:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() and "Z" != _state(p) for p in procs):
            time.sleep(0.02)

    def restart(self) -> "PostgresServer":
        from vouched.store.pgserver import _prefix

        cmd = [*_prefix(), str(self.pg.bin_dir / "pg_ctl"), "-D", str(self.pg.data_dir), "-o", self._opts,
               "-l", str(self.pg.data_dir.parent / "server.log"), "-w", "-t", "60", "start"]
        for _ in range(20):  # the killed backends may hold the shared memory for a moment
            if subprocess.run(cmd, capture_output=True).returncode == 0:
                return self
            time.sleep(0.2)
        raise RuntimeError(f"PostgreSQL did not restart: {(self.pg.data_dir.parent / 'server.log').read_text()[-1500:]}")

    def stop(self) -> None:
        if self._ctx is not None:
            if self._postmaster() is None:  # killed and never restarted: start it so that it stops cleanly
                try:
                    self.restart()
                except RuntimeError:
                    pass
            self._ctx.__exit__(None, None, None)
            self._ctx = None


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "X"
