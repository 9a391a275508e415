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
