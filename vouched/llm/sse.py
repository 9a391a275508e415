"""An incremental Server-Sent Events decoder (WHATWG HTML, "event stream interpretation").

Bytes arrive cut at arbitrary places, inside a line and inside a multi-byte UTF-8
character. Lines are split on the raw bytes first (CR, LF and CRLF are ASCII and never
occur inside a UTF-8 sequence), and only whole lines are decoded, so a Persian letter split
across two network reads is never broken. A CR at the very end of one read may be the
first half of a CRLF; the LF that opens the next read is then skipped.

Comments (`: ping`) and unknown fields are ignored; `event:` names the event; `data:` lines
are joined with "\\n"; a blank line dispatches. At the end of the stream an event whose
lines were all complete is still dispatched (some servers omit the last blank line), but a
line cut in the middle is dropped: it is the sign of a connection that broke.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vouched.llm.errors import ProviderProtocolError

__all__ = ["SSEDecoder", "SSEEvent"]

_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
MAX_LINE_BYTES = 4 * 1024 * 1024  # one event this long is an error, not an answer


@dataclass(frozen=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None


class SSEDecoder:
    """Feed bytes, get whole events. Pure: no I/O, no clock."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._skip_lf = False
        self._at_start = True

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if not chunk:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        self._buf += chunk
        if self._at_start:
            if len(self._buf) < len(_BOM) and _BOM.startswith(bytes(self._buf)):
                return []  # may still be the start of a byte-order mark
            if self._buf.startswith(_BOM):
                del self._buf[: len(_BOM)]
            self._at_start = False
        events: list[SSEEvent] = []
        end = 0
        for match in _EOL.finditer(self._buf):
            event = self._line(bytes(self._buf[end : match.start()]))
            end = match.end()
            if event is not None:
                events.append(event)
        if end and self._buf[end - 1 : end] == b"\r" and end == len(self._buf):
            self._skip_lf = True
        del self._buf[:end]
        if len(self._buf) > MAX_LINE_BYTES:
            raise ProviderProtocolError(f"an event-stream line longer than {MAX_LINE_BYTES} bytes")
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: dispatch a pending event only if no line was cut short."""
        if self._buf or not self._data:
            self._buf.clear()
            self._data.clear()
            return []
        return [e for e in (self._line(b""),) if e is not None]

    @property
    def pending_bytes(self) -> int:
        """Bytes of an unfinished line: non-zero at end of stream means the stream was cut."""
        return len(self._buf)

    def _line(self, raw: bytes) -> SSEEvent | None:
        if not raw:
            return self._dispatch()
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(":"):
            return None  # comment / keep-alive
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._last_id = value
        return None  # "retry" and unknown fields are ignored

    def _dispatch(self) -> SSEEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = SSEEvent(data="\n".join(self._data), event=self._event or "message", id=self._last_id)
        self._data = []
        self._event = ""
        return event
