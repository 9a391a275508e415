"""The portfolio site on the hashing stand-in embedder, ingested once for all server tests.

API tests talk to the app in-process (httpx.ASGITransport); the disconnect, header and
browser tests start a real uvicorn server on a free 127.0.0.1 port, with the settings
`vouched serve` uses.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.helpers import hashing_config_text

from vouched.config import Config, load_config
from vouched.engine import Engine

ROOT = Path(__file__).resolve().parents[2]

ADMIN_KEY = "vk_testadmin_operator-key-for-the-server-tests"  # an operator's key (its hash is in the site's [server.auth])
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}

SUGGESTED = """
[server]
suggested_questions = { en = ["Which database did the Tessera Health search run on?", "Which languages does she speak?"], fa = ["لیلا دکترایش را از کدام دانشگاه گرفت؟"] }

[[server.auth.keys]]
id = "testadmin"
name = "the server tests' operator"
hash = "sha256:38104c415db344370f124cf00df3e16639d244d16739e6b9e0321b05915a888c"
admin = true

[rate_limit]
enabled = false
"""


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Config:
    dst = tmp_path_factory.mktemp("server") / "portfolio"
    shutil.copytree(ROOT / "examples/portfolio", dst, ignore=shutil.ignore_patterns(".vouched"))
    toml = dst / "vouched.toml"
    text = toml.read_text(encoding="utf-8")
    # hashing-embedder cosines live on another scale than E5's (as tests/answer/conftest.py)
    text = hashing_config_text(text)
    text = text.split("\n[server]")[0]  # the example's own [server] block is replaced by SUGGESTED
    toml.write_text(text + SUGGESTED, encoding="utf-8")
    cfg = load_config(toml)
    Engine(cfg).ingest()
    return cfg


def with_settings(cfg: Config, **sections) -> Config:
    """A copy of `cfg` with some fields of its sections replaced: with_settings(cfg, server={...})."""
    update = {name: getattr(cfg, name).model_copy(update=fields) for name, fields in sections.items()}
    return cfg.model_copy(update=update)


def asgi_client(app, peer: str = "203.0.113.7") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(peer, 40000)), base_url="http://vouched.test")


def parse_sse(text: str) -> list[tuple[str | None, object]]:
    """[(event, data)] from an SSE body; data is parsed JSON, or the raw string ([DONE])."""
    frames = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        if data:
            raw = "\n".join(data)
            try:
                frames.append((event, json.loads(raw)))
            except json.JSONDecodeError:
                frames.append((event, raw))
    return frames


class RecordingSpend:
    """A SpendGate that allows every call and records what was settled."""

    def __init__(self) -> None:
        self.reserved: list[dict] = []
        self.settled: list[dict] = []

    def reserve(self, *, model: str, prompt_bytes: int, max_output_tokens: int):
        from vouched.spend import Reservation

        self.reserved.append({"model": model, "prompt_bytes": prompt_bytes, "max_output_tokens": max_output_tokens})
        return Reservation(id=f"r{len(self.reserved)}", amount=0.0)

    def settle(self, reservation, *, model: str, input_tokens: int, output_tokens: int) -> None:
        self.settled.append({"id": reservation.id, "model": model, "input_tokens": input_tokens, "output_tokens": output_tokens})


def scripted_assistant(cfg: Config, provider, spend=None):
    """An Assistant answering with `provider` (a ScriptedProvider) through the whole pipeline."""
    from vouched.answer import Assistant

    cfg = with_settings(cfg, answer={"provider": "openai", "model": provider.model})
    return Assistant(cfg, engine=Engine(cfg), provider=provider, spend=spend)


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def running(app):
    """Serve `app` with uvicorn (the `vouched serve` settings) in a thread; yields the base URL."""
    import uvicorn

    from vouched.server.cli import uvicorn_config

    sock = free_socket()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture
def anyio_backend():
    return "asyncio"
