"""Ingest progress: an ETA from the first advance on, and plain lines without a terminal."""

from hypothesis import given
from hypothesis import strategies as st

from vouched.ingest.progress import LineProgress, clock, eta_seconds


def test_eta_known_from_the_first_advance():
    assert eta_seconds(0.0, 0, 100) is None and eta_seconds(5.0, 0, 100) is None and eta_seconds(5.0, 3, None) is None
    assert eta_seconds(40.0, 10, 100) == 360.0  # one slow batch is enough: no 30 s window needed
    assert eta_seconds(40.0, 100, 100) == 0.0
    assert clock(None) == "-:--:--" and clock(3725.4) == "1:02:05" and clock(59.6) == "0:01:00"


@given(elapsed=st.floats(0.001, 1e6), done=st.integers(1, 10_000), extra=st.integers(0, 10_000))
def test_eta_is_the_average_rate(elapsed, done, extra):
    eta = eta_seconds(elapsed, done, done + extra)
    assert eta is not None and eta >= 0
    assert abs(eta - elapsed / done * extra) <= 1e-6 * max(1.0, eta)


def test_line_progress_prints_every_period_and_at_the_end():
    t = [0.0]
    lines: list[str] = []
    p = LineProgress(write=lines.append, every_s=10.0, now=lambda: t[0])
    p.start("embedding", 100)
    for _ in range(99):
        t[0] += 1.0
        p.advance("embedding")
    assert len(lines) == 10  # at 1 s, then every 10 s
    assert lines[0] == "embedding: 1/100 (1%), elapsed 0:00:01, eta 0:01:39"
    t[0] += 1.0
    p.advance("embedding")
    assert lines[-1] == "embedding: 100/100 (100%), elapsed 0:01:40, eta 0:00:00"
