"""Connection hygiene against a real `vouched serve` process: request-head and body timeouts,
413 for any oversize body (declared or chunked), the connection limit; the service keeps
answering others meanwhile."""

from __future__ import annotations

import socket
import statistics
import time

import httpx
import pytest

from tests.server.tenants import serving, write_site
from vouched.config import load_config
from vouched.engine import Engine

HEAD_TIMEOUT_S = 2.0
BODY_TIMEOUT_S = 2.0
SLOW = 100  # slow-header connections; as many slow-body ones
SLACK_S = 3.0  # scheduling on a loaded 2-core machine


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("connections")
    toml = write_site(root, extra=f"\n[server]\nheader_timeout_s = {HEAD_TIMEOUT_S}\nbody_timeout_s = {BODY_TIMEOUT_S}\n"
                                  "max_connections = 400\nmax_question_bytes = 2000\nmax_history_bytes = 0\n")
    Engine(load_config(toml)).ingest()
    with serving(toml) as (url, _):
        yield url


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=5)
    s.setblocking(False)
    return s


def _closed(s: socket.socket) -> tuple[bool, bytes]:
    """(closed by the server, bytes read so far)."""
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return True, data
            data += chunk
    except BlockingIOError:
        return False, data
    except (ConnectionResetError, BrokenPipeError):
        return True, data


def test_slow_header_and_slow_body_connections_are_closed_while_others_are_served(served):
    url = served
    slow: list[tuple[str, socket.socket, float]] = []
    for i in range(SLOW):
        s = _connect(url)
        s.send(b"POST /v1/ask HTTP/1.1\r\nHost: vouched\r\n")  # a head that never ends
        slow.append(("head", s, time.monotonic()))
    for i in range(SLOW):
        s = _connect(url)
        s.send(b"POST /v1/ask HTTP/1.1\r\nHost: vouched\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"q")
        slow.append(("body", s, time.monotonic()))
    closed_after: dict[int, float] = {}
    replies: dict[int, bytes] = {}
    health: list[float] = []
    start = time.monotonic()
    with httpx.Client(base_url=url, timeout=10) as client:
        while len(closed_after) < len(slow) and time.monotonic() - start < HEAD_TIMEOUT_S + BODY_TIMEOUT_S + 2 * SLACK_S:
            for i, (kind, s, opened) in enumerate(slow):
                if i in closed_after:
                    continue
                done, data = _closed(s)
                replies[i] = replies.get(i, b"") + data
                if done:
                    closed_after[i] = time.monotonic() - opened
                    continue
                try:  # trickle a byte, as a slow client does
                    s.send(b"X" if kind == "head" else b"a")
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    pass
            t = time.monotonic()
            assert client.get("/healthz").status_code == 200
            health.append(time.monotonic() - t)
            time.sleep(0.1)
    for _, s, _ in slow:
        s.close()
    assert len(closed_after) == len(slow), f"{len(slow) - len(closed_after)} slow connections still open"
    head_times = [closed_after[i] for i, (k, _, _) in enumerate(slow) if k == "head"]
    body_times = [closed_after[i] for i, (k, _, _) in enumerate(slow) if k == "body"]
    assert max(head_times) <= HEAD_TIMEOUT_S + SLACK_S and min(head_times) >= HEAD_TIMEOUT_S - 0.1, head_times[:5]
    assert max(body_times) <= BODY_TIMEOUT_S + SLACK_S, max(body_times)
    body_replies = [replies[i] for i, (k, _, _) in enumerate(slow) if k == "body"]
    assert all(r.startswith(b"HTTP/1.1 408") for r in body_replies), body_replies[0][:80]
    assert len(health) >= 5
    print(f"slow connections: head closed after {min(head_times):.2f}–{max(head_times):.2f} s, body after "
          f"{min(body_times):.2f}–{max(body_times):.2f} s; /healthz median {statistics.median(health) * 1000:.1f} ms")


def _complete(reply: bytes) -> bool:
    """Has a whole response with a Content-Length arrived? (Then there is no need to wait for
    the server to close the connection, or for the socket timeout when it keeps it open.)"""
    head, sep, body = reply.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return False


def _raw(url: str, payload: bytes, timeout: float = 10) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):  # the server answered and closed before the body was sent
            pass
        out = b""
        try:
            while not _complete(out):
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    return out


def test_oversize_bodies_are_413_declared_or_chunked(served):
    big = b"x" * (200 * 1024)
    head = b"POST /v1/ask HTTP/1.1\r\nHost: vouched\r\nContent-Type: application/json\r\n"
    declared = _raw(served, head + b"Content-Length: 99999999\r\n\r\n")
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(big), big) for _ in range(6)) + b"0\r\n\r\n"
    chunked = _raw(served, head + b"Transfer-Encoding: chunked\r\n\r\n" + chunks)
    for reply in (declared, chunked):
        assert reply.startswith(b"HTTP/1.1 413"), reply[:120]
        assert b'"payload_too_large"' in reply
    small = httpx.post(served + "/v1/ask", json={"question": "Who inspects the cold room?"}, timeout=30)
    assert small.status_code == 200


def test_a_normal_chunked_body_is_read(served):
    def body():
        yield b'{"question": "Who inspects '
        yield b'the cold room?"}'

    r = httpx.post(served + "/v1/ask", content=body(), headers={"Content-Type": "application/json"}, timeout=30)
    assert r.status_code == 200 and "event: done" in r.text
