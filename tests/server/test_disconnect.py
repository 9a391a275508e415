"""The reader leaves → the upstream stream is closed at once, and only what was received is paid for.

Against a real uvicorn server over TCP: an in-process ASGI transport does not deliver a
client's disconnect the way a server does.
"""

from __future__ import annotations

import json
import socket
import time

from tests.server.conftest import RecordingSpend, running, scripted_assistant
from vouched.llm.scripted import ScriptedProvider
from vouched.server import create_app

Q = "Which database did the Tessera Health search run on?"
FIRST = "The search ran on postgres with pgvector [1]. It used hnsw indexes"  # 16+ chars past the stop
SLOW = [" [1].", " Later", " text", " that", " should", " never", " be", " paid", " for", "."] * 3


def open_stream(url: str, body: dict) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    payload = json.dumps(body).encode()
    sock.sendall(b"POST /v1/ask HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                 b"Accept: text/event-stream\r\nContent-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)
    return sock


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise AssertionError(f"connection closed before {marker!r}: {data!r}")
        data += chunk
    return data


def test_disconnect_closes_the_provider_stream_within_100ms_and_settles_what_was_received(site):
    provider = ScriptedProvider([FIRST, *SLOW], delay=0.25)
    spend = RecordingSpend()
    app = create_app(site, assistant=scripted_assistant(site, provider, spend))
    with running(app) as url:
        sock = open_stream(url, {"question": Q})
        head = read_until(sock, b"event: sentence")
        assert head.startswith(b"HTTP/1.1 200")
        stream = provider.streams[-1]
        assert not provider.cancelled and not stream.closed
        sock.close()
        t_close = time.perf_counter()
        while not provider.cancelled and time.perf_counter() - t_close < 2:
            time.sleep(0.002)
        elapsed_ms = (time.perf_counter() - t_close) * 1000
        # wait for the pipeline's cleanup (settle, then the disconnect and outcome counters) to
        # finish on the server's loop: they run after the provider is closed, in that order
        deadline = time.perf_counter() + 2
        metrics = ""
        while time.perf_counter() < deadline:
            metrics = app.state.metrics.render().decode()
            if spend.settled and 'outcome="abandoned"} 1.0' in metrics and 'endpoint="ask"} 1.0' in metrics:
                break
            time.sleep(0.005)
    print(f"\nprovider stream closed {elapsed_ms:.1f} ms after the client closed the connection")
    assert provider.cancelled and stream.closed and stream.cancelled
    assert elapsed_ms < 100, f"provider stream closed {elapsed_ms:.1f} ms after the disconnect"

    total = sum(len(c.encode()) for c in [FIRST, *SLOW])
    received = stream.received_bytes
    assert len(FIRST.encode()) <= received < total
    assert spend.settled == [{"id": "r1", "model": "scripted", "input_tokens": spend.reserved[0]["prompt_bytes"],
                              "output_tokens": received}]
    assert 'vouched_client_disconnects_total{endpoint="ask"} 1.0' in metrics
    assert 'vouched_answers_total{layer="none",outcome="abandoned"} 1.0' in metrics


def test_disconnect_before_the_first_sentence_also_closes_the_provider(site):
    provider = ScriptedProvider(["The search ran", " on postgres [1].", " More text here, and more."], delay=0.4)
    spend = RecordingSpend()
    app = create_app(site, assistant=scripted_assistant(site, provider, spend))
    with running(app) as url:
        sock = open_stream(url, {"question": Q})
        deadline = time.perf_counter() + 10
        while not provider.streams and time.perf_counter() < deadline:  # the model call has started
            time.sleep(0.005)
        sock.close()
        t_close = time.perf_counter()
        while not provider.cancelled and time.perf_counter() - t_close < 2:
            time.sleep(0.002)
        elapsed_ms = (time.perf_counter() - t_close) * 1000
        while not spend.settled and time.perf_counter() - t_close < 2:
            time.sleep(0.005)
    assert provider.cancelled and elapsed_ms < 100
    assert len(spend.settled) == 1 and spend.settled[0]["output_tokens"] == provider.streams[-1].received_bytes
