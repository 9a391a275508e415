from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.llm.errors import ProviderProtocolError
from vouched.llm.sse import SSEDecoder, SSEEvent


def decode(*parts: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = [e for part in parts for e in decoder.feed(part)]
    return events + decoder.close()


def test_fields_comments_and_dispatch() -> None:
    stream = b": ping\n\nevent: message_start\ndata: {\"a\": 1}\nid: 7\nretry: 100\nunknown: x\n\ndata:no-space\n\n"
    assert decode(stream) == [
        SSEEvent(data='{"a": 1}', event="message_start", id="7"),
        SSEEvent(data="no-space", event="message", id="7"),
    ]


def test_multiple_data_lines_join_with_newline_and_only_one_space_is_stripped() -> None:
    assert decode(b"data:  two spaces\ndata: second\n\n") == [SSEEvent(data=" two spaces\nsecond")]


def test_crlf_cr_and_lf_line_ends() -> None:
    assert decode(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n") == [SSEEvent("a"), SSEEvent("b"), SSEEvent("c")]


def test_crlf_split_between_reads_is_one_line_end() -> None:
    assert decode(b"data: a\r", b"\n", b"\r", b"\ndata: b\n\n") == [SSEEvent("a"), SSEEvent("b")]


def test_bom_is_dropped_even_when_split() -> None:
    assert decode(b"\xef", b"\xbb\xbfdata: x\n\n") == [SSEEvent("x")]


def test_event_without_data_dispatches_nothing() -> None:
    assert decode(b"event: ping\n\ndata: x\n\n") == [SSEEvent("x")]


def test_end_of_stream() -> None:
    assert decode(b"data: [DONE]\n") == [SSEEvent("[DONE]")]  # last blank line missing: whole line kept
    assert decode(b'data: {"cut mid') == []  # a line cut short is dropped


def test_a_runaway_line_is_refused() -> None:
    decoder = SSEDecoder()
    with pytest.raises(ProviderProtocolError):
        for _ in range(5):
            decoder.feed(b"x" * (1024 * 1024))


TEXT = st.text(alphabet=st.sampled_from(list("abc ۱۲۳سلامنوبت‌دهی{}\":😀中文")), max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    datas=st.lists(TEXT, min_size=1, max_size=6),
    eol=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
)
def test_any_split_gives_the_same_events(datas: list[str], eol: bytes, cuts: list[int]) -> None:
    wire = b"".join(b"data: " + d.encode() + eol + b": keepalive" + eol + eol for d in datas)
    points = sorted({c % (len(wire) + 1) for c in cuts})
    parts = [wire[a:b] for a, b in zip([0, *points], [*points, len(wire)])]
    assert [e.data for e in decode(*parts)] == datas
