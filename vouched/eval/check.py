"""Live check of a deployed assistant: `vouched check --url URL GOLDEN.jsonl`.

The command to run after each corpus import. It sends the must-refuse cases of a golden set
(``expect`` ``refuse_pattern`` or ``refuse_no_evidence``) to a running service over HTTP —
``POST /v1/ask``, the Server-Sent Events endpoint (`vouched.server.app`) — and reports every
case that was not refused before the generator.

Each case ends in one status (`classify`, a pure function of the stream's frames):

    refused        outcome ``refused`` at layer L1 or L2 (or one of the pre-retrieval refusals
                   without a layer: unsupported language, clarify) and no tokens used:
                   stopped before any model call, as the design promises
    late_refusal   refused, but only after the generator ran (the model's NO_ANSWER: layer
                   none, category no_answer) or with tokens used: with a paid provider the
                   case cost money
    escaped        the reader got something other than a refusal: an answer, a records
                   summary, a held or truncated answer (text may have been released), or the
                   spend notice (the case passed L1 and L2; only the cap, the key's budget or
                   the spend store's outage stopped it)
    error          no verdict: an HTTP error, an ``error`` event, a stream without ``done``

Why the check never counts toward the spend cap: a must-refuse case is refused at L1 or L2,
before the spend reservation. A case that reached the generator is reported, because that
promise failed for it.

Requests are paced (`Pacer`: at most ``rate`` starts per second) with at most
``concurrency`` in flight. A 429 pauses every worker for the ``Retry-After`` the service
sent, then the case is retried; the service's own per-address limits (``[rate_limit]``,
default 10 a minute) therefore slow a long check down rather than fail it.

What is sent: ``question``, ``previous`` (``{question, answer}``) and ``tenant`` as the golden
case has them. ``lang`` is not sent by default: in a golden file it is the case's breakdown
language, and the pipeline detects the reader's language as it does for the chat page (which
sends none) and for `vouched eval`; with ``send_lang`` it is sent when the service serves
that language (read from ``GET /v1/config``). ``as_of`` has no place in the API: such cases
are checked as of today, and the report says how many there were.

Exit codes: 0 every must-refuse case refused before any model call; 1 a case escaped or
was refused only after the generator ran; 2 bad input (golden file, options); 3 the
service could not be checked (unreachable, not an SSE endpoint, a case without a verdict).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Sequence
from urllib.parse import urlsplit

from vouched.errors import EXIT_INPUT, EXIT_NO, EXIT_OK, EXIT_UNCHECKED, CheckError, InputError  # drawn in vouched.errors


__all__ = [
    "CHECK_EXIT_BAD_INPUT",
    "CHECK_EXIT_ESCAPED",
    "CHECK_EXIT_OK",
    "CHECK_EXIT_UNCHECKED",
    "PRE_MODEL_CATEGORIES",
    "CaseResult",
    "CheckError",
    "Pacer",
    "SSEParser",
    "ask_url",
    "check_cases",
    "check_command",
    "check_exit_code",
    "check_options",
    "classify",
    "must_refuse_cases",
    "next_slot",
    "print_check",
    "request_body",
    "summarize_check",
]

# From the one table (vouched.errors): 7, not 3 (3 is an ingest error everywhere).
CHECK_EXIT_OK, CHECK_EXIT_ESCAPED, CHECK_EXIT_BAD_INPUT, CHECK_EXIT_UNCHECKED = EXIT_OK, EXIT_NO, EXIT_INPUT, EXIT_UNCHECKED
MUST_REFUSE = ("refuse_pattern", "refuse_no_evidence")
PRE_MODEL_LAYERS = frozenset({"L1", "L2"})
# Refusals without a layer that the pipeline makes before retrieval (vouched.answer.pipeline):
# a question in a language the deployment does not serve, a question too vague to search.
# Any other refusal without a layer — the model's NO_ANSWER (category no_answer) or one this
# list does not know — counts as made after the generator ran.
PRE_MODEL_CATEGORIES = frozenset({"unsupported_language", "clarify"})
Status = Literal["refused", "late_refusal", "escaped", "error"]
MAX_RETRY_AFTER_S = 120.0  # longer waits than this are the service saying "not today": an error
RETRIES_429 = 5




# -- what is sent (pure) ---------------------------------------------------------------------------
def ask_url(url: str) -> str:
    """The POST /v1/ask URL for a base URL (``https://host/prefix``) or for that URL itself."""
    u = url.strip()
    parts = urlsplit(u)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CheckError(f"--url {url!r} is not an http(s) URL: give the service's base URL, e.g. https://example.org")
    if parts.query or parts.fragment:
        raise CheckError(f"--url {url!r}: drop the query string and fragment")
    base = u.rstrip("/")
    return base if base.endswith("/v1/ask") else base + "/v1/ask"


def must_refuse_cases(cases: Iterable[Any]) -> list[Any]:
    """The golden cases whose expected outcome is a refusal (pattern or no evidence)."""
    return [c for c in cases if c.expect.kind in MUST_REFUSE]


def request_body(case: Any, served_langs: Sequence[str] | None = None) -> dict[str, Any]:
    """The POST /v1/ask body for a golden case. ``lang`` only when ``served_langs`` is given and holds it."""
    body: dict[str, Any] = {"question": case.question}
    if case.previous is not None:
        body["previous"] = {"question": case.previous.question, "answer": case.previous.answer}
    if case.tenant:
        body["tenant"] = case.tenant
    if served_langs is not None and case.lang and case.lang in served_langs:
        body["lang"] = case.lang
    return body


# -- pacing (pure core) -----------------------------------------------------------------------------
def next_slot(next_free: float | None, now: float, interval: float) -> tuple[float, float]:
    """(start, next_free'): the earliest start at or after ``now`` that keeps starts ``interval`` apart."""
    start = now if next_free is None else max(now, next_free)
    return start, start + interval


class Pacer:
    """At most ``rate`` request starts per second, shared by every worker; `defer` pauses them all."""

    def __init__(self, rate: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Any] = asyncio.sleep, on_defer: Callable[[float], None] = lambda s: None) -> None:
        if not (rate > 0 and math.isfinite(rate)):
            raise CheckError(f"--rate must be a positive number of requests per second, got {rate}")
        self.interval = 1.0 / rate
        self._clock, self._sleep, self._on_defer = clock, sleep, on_defer
        self._next: float | None = None

    async def wait(self) -> None:
        now = self._clock()
        start, self._next = next_slot(self._next, now, self.interval)  # no await in between: atomic
        if start > now:
            await self._sleep(start - now)

    def defer(self, seconds: float) -> None:
        """No request starts within ``seconds`` from now (the service said Retry-After)."""
        self._on_defer(seconds)
        until = self._clock() + seconds
        self._next = until if self._next is None else max(self._next, until)


# -- reading the stream (pure) ----------------------------------------------------------------------
class SSEParser:
    """Server-Sent Events, line by line (the WHATWG rules vouched's frames need): `feed` a line
    without its ending, get ``(event, data)`` when a blank line ends a frame. ``data`` is the
    JSON the service wrote, or the raw text when it is not JSON."""

    def __init__(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, line: str) -> tuple[str, Any] | None:
        line = line.rstrip("\r")
        if line == "":
            if not self._data:
                self._event = None
                return None
            raw, event = "\n".join(self._data), self._event or "message"
            self._event, self._data = None, []
            try:
                return event, json.loads(raw)
            except json.JSONDecodeError:
                return event, raw
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None


# -- the verdict (pure) -------------------------------------------------------------------------------
@dataclass(frozen=True)
class CaseResult:
    id: str
    question: str
    expect: str  # refuse_pattern | refuse_no_evidence
    expected_category: str | None
    status: Status
    outcome: str | None = None
    layer: str | None = None
    category: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    model_called: bool = False  # tokens used, a model answered, or a refusal after generation (see classify)
    trace_id: str | None = None
    http_status: int | None = None
    detail: str = ""  # escaped: the first released text; error: what went wrong


def _tokens(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    values = (usage.get("input_tokens"), usage.get("output_tokens"))
    return sum(int(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0)


def _base(case: Any) -> dict[str, Any]:
    return {"id": case.id, "question": case.question, "expect": case.expect.kind, "expected_category": case.expect.category}


def error_result(case: Any, detail: str, http_status: int | None = None) -> CaseResult:
    return CaseResult(**_base(case), status="error", http_status=http_status, detail=detail)


def classify(case: Any, frames: Sequence[tuple[str, Any]], http_status: int = 200) -> CaseResult:
    """The status of one must-refuse case from the ``(event, data)`` frames its stream carried."""
    base = _base(case)
    error = next((d for e, d in frames if e == "error"), None)
    done = next((d for e, d in frames if e == "done" and isinstance(d, dict)), None)
    if error is not None:
        err = error.get("error", {}) if isinstance(error, dict) else {}
        return CaseResult(**base, status="error", http_status=http_status,
                          detail=f"error event: {err.get('type', '?')}: {err.get('message', error)}")
    if done is None:
        return CaseResult(**base, status="error", http_status=http_status, detail="the stream ended without a done event")
    outcome, layer, category = done.get("outcome"), done.get("layer"), done.get("category")
    usage = done.get("usage") if isinstance(done.get("usage"), dict) else {}
    tokens = _tokens(usage)
    # A refusal after generation (the NO_ANSWER token, layer none) carries no usage and no
    # provider name: a model call cannot be ruled out, so it counts as one.
    generated = outcome in ("answered", "held", "truncated") and usage.get("provider") not in (None, "extractive")
    before_model = layer in PRE_MODEL_LAYERS or (layer is None and category in PRE_MODEL_CATEGORIES)
    reached = tokens > 0 or generated or (outcome == "refused" and not before_model)
    said = " ".join(d.get("text", "") for e, d in frames if e in ("sentence", "notice") and isinstance(d, dict)).strip()
    common = dict(outcome=outcome, layer=layer, category=category, usage=usage, model_called=reached,
                  trace_id=done.get("trace_id"), http_status=http_status)
    if outcome == "refused":
        if reached:
            why = f"{tokens} tokens used" if tokens else f"refused at layer {layer or 'none'} ({category}), after the generator ran"
            return CaseResult(**base, status="late_refusal", **common, detail=why)
        return CaseResult(**base, status="refused", **common)
    if outcome == "limited":
        gate = {"key_limit": "the API key's own monthly budget", "spend_unavailable": "the spend store's outage (fail closed)"
                }.get(category or "", "the monthly spend cap")
        said = f"passed L1 and L2; only {gate} stopped it" + (f": {said}" if said else "")
    return CaseResult(**base, status="escaped", **common, detail=said[:300] or f"outcome {outcome}")


def summarize_check(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The figures: counts by status and layer, the failing ids, and per group (category or kind)."""
    by_status = Counter(r.status for r in results)
    groups: dict[str, Counter] = {}
    for r in results:
        g = r.expected_category or ("no_evidence" if r.expect == "refuse_no_evidence" else "pattern")
        groups.setdefault(g, Counter())[r.status] += 1
        groups[g]["cases"] += 1
    return {
        "cases": len(results),
        "refused": by_status["refused"],
        "refused_by": dict(sorted(Counter(r.layer or r.category or "none" for r in results if r.status == "refused").items())),
        "escaped": [r.id for r in results if r.status == "escaped"],
        "late_refusals": [r.id for r in results if r.status == "late_refusal"],
        "model_called": [r.id for r in results if r.model_called],
        "errors": [r.id for r in results if r.status == "error"],
        "by_group": {g: {k: c[k] for k in ("cases", "refused", "late_refusal", "escaped", "error")} for g, c in sorted(groups.items())},
    }


def check_exit_code(results: Sequence[CaseResult]) -> int:
    statuses = {r.status for r in results}
    if statuses & {"escaped", "late_refusal"}:
        return CHECK_EXIT_ESCAPED
    if "error" in statuses or not results:
        return CHECK_EXIT_UNCHECKED
    return CHECK_EXIT_OK


# -- talking to the service ----------------------------------------------------------------------------
def check_options(rate: float, concurrency: int, timeout: float) -> None:
    if not (rate > 0 and math.isfinite(rate)):
        raise CheckError(f"--rate must be a positive number of requests per second, got {rate}")
    if concurrency < 1:
        raise CheckError(f"--concurrency must be at least 1, got {concurrency}")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise CheckError(f"--timeout must be a positive number of seconds, got {timeout}")


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value is not None else 1.0
    except ValueError:
        return 1.0  # an HTTP date: wait a little and ask again


async def _ask_once(client: Any, url: str, case: Any, body: dict) -> tuple[CaseResult | None, float | None]:
    """(result, None), or (None, seconds) when the service said 429 Retry-After."""
    import httpx

    try:
        async with client.stream("POST", url, json=body) as resp:
            status = resp.status_code
            if status == 429:
                await resp.aread()
                return None, _retry_after(resp.headers.get("retry-after"))
            if status in (404, 405):
                raise CheckError(f"{url} answered {status}: no POST /v1/ask there. Give the base URL of a running `vouched serve`")
            if 300 <= status < 400:
                raise CheckError(f"{url} redirects ({status}) to {resp.headers.get('location')!r}: pass that URL to --url")
            ctype = resp.headers.get("content-type", "")
            if status != 200:
                raw = (await resp.aread()).decode("utf-8", "replace")
                try:
                    err = json.loads(raw)["error"]
                    msg = f"{err.get('type')}: {err.get('message')}"
                except (ValueError, KeyError, TypeError):
                    msg = raw.strip()[:200] or "(empty body)"
                return error_result(case, f"HTTP {status}: {msg}", status), None
            if not ctype.startswith("text/event-stream"):
                raise CheckError(f"{url} answered 200 with {ctype or 'no content type'}, not text/event-stream: "
                                 "it is not a vouched /v1/ask endpoint")
            parser, frames = SSEParser(), []
            async for line in resp.aiter_lines():
                frame = parser.feed(line)
                if frame is not None:
                    frames.append(frame)
                    if frame[0] in ("done", "error"):
                        break
            frame = parser.feed("")  # a last frame the server did not end with a blank line
            if frame is not None:
                frames.append(frame)
            return classify(case, frames, status), None
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol) as exc:
        raise CheckError(f"cannot reach {url}: {exc or type(exc).__name__}") from None
    except httpx.TimeoutException:
        return error_result(case, "timed out waiting for the answer (raise --timeout?)"), None
    except (httpx.HTTPError, httpx.StreamError) as exc:
        return error_result(case, f"{type(exc).__name__}: {exc}"), None


async def _ask(client: Any, url: str, case: Any, body: dict, pacer: Pacer) -> CaseResult:
    for _ in range(RETRIES_429 + 1):
        await pacer.wait()
        result, wait = await _ask_once(client, url, case, body)
        if result is not None:
            return result
        if wait > MAX_RETRY_AFTER_S:
            return error_result(case, f"rate limited by the service for {wait:.0f}s (limit per address): run later", 429)
        pacer.defer(wait)
    return error_result(case, f"still rate limited after {RETRIES_429} retries", 429)


async def _served_langs(client: Any, url: str) -> list[str]:
    import httpx

    conf = url[: -len("/v1/ask")] + "/v1/config"
    try:
        resp = await client.get(conf)
    except httpx.HTTPError as exc:
        raise CheckError(f"cannot reach {conf}: {exc or type(exc).__name__}") from None
    try:
        langs = resp.json()["languages"]
    except (ValueError, KeyError, TypeError):
        langs = None
    if not isinstance(langs, list):
        raise CheckError(f"{conf} answered {resp.status_code} without a `languages` list: "
                         "--send-lang needs GET /v1/config (drop --send-lang to let the service detect the language)") from None
    return [str(x) for x in langs]


async def check_cases(url: str, cases: Sequence[Any], *, rate: float = 2.0, concurrency: int = 2, timeout: float = 60.0,
                      send_lang: bool = False, transport: Any = None,
                      on_result: Callable[[CaseResult], None] = lambda r: None,
                      on_wait: Callable[[float], None] = lambda s: None) -> list[CaseResult]:
    """Send each case to POST /v1/ask, paced and bounded; results in the order of ``cases``.

    Raises CheckError when the service cannot be checked at all (the first such failure
    stops every worker). ``transport`` is an httpx transport (tests pass a MockTransport).
    """
    import httpx

    from vouched import __version__

    check_options(rate, concurrency, timeout)
    target = ask_url(url)
    pacer = Pacer(rate, on_defer=on_wait)
    headers = {"Accept": "text/event-stream", "User-Agent": f"vouched-check/{__version__}"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    results: list[CaseResult | None] = [None] * len(cases)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(cases)):
        queue.put_nowait(i)
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)), headers=headers,
                                 limits=limits, transport=transport, follow_redirects=False) as client:
        served = await _served_langs(client, target) if send_lang else None

        async def worker() -> None:
            while not queue.empty():
                i = queue.get_nowait()
                results[i] = await _ask(client, target, cases[i], request_body(cases[i], served), pacer)
                on_result(results[i])

        tasks = [asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(cases)) or 1)]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for t in done:
            if not t.cancelled() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
    return [r for r in results if r is not None]


# -- showing it -----------------------------------------------------------------------------------------
_STYLE = {"refused": "green", "late_refusal": "yellow", "escaped": "bold red", "error": "magenta"}


def print_check(url: str, results: Sequence[CaseResult], summary: dict, console: Any, *, show_all: bool = False,
                as_of_cases: int = 0, seconds: float = 0.0) -> None:
    from rich.table import Table
    from rich.text import Text

    con = console
    layers = ", ".join(f"{k} {v}" for k, v in summary["refused_by"].items())
    con.print(f"[bold]live check[/] of {url}: {summary['cases']} must-refuse cases in {seconds:.1f}s; "
              f"refused before any model call: {summary['refused']}" + (f" ({layers})" if layers else ""), highlight=False)
    t = Table(title="by group", title_justify="left")
    for col in ("group", "cases", "refused", "late refusal", "escaped", "error"):
        t.add_column(col, justify="left" if col == "group" else "right")
    for g, c in summary["by_group"].items():
        bad = c["escaped"] or c["late_refusal"] or c["error"]
        t.add_row(Text(g, style="red" if bad else ""), str(c["cases"]), str(c["refused"]), str(c["late_refusal"] or ""),
                  str(c["escaped"] or ""), str(c["error"] or ""))
    con.print(t)
    rows = [r for r in results if show_all or r.status != "refused"]
    if rows:
        d = Table(title="every case" if show_all else "cases not refused before the model", title_justify="left")
        for col in ("case", "expected", "status", "got"):
            d.add_column(col, overflow="fold")
        d.add_column("question / what was said", overflow="fold", ratio=1, min_width=30)
        for r in rows:
            expected = r.expected_category or r.expect.replace("refuse_", "")
            got = " · ".join(x for x in (r.outcome, r.layer, r.category) if x)
            tokens = _tokens(r.usage)
            said = f"\n[dim]{_esc(_clip(r.detail, 120))}[/]" if r.detail else ""
            d.add_row(Text(r.id), expected, Text(r.status, style=_STYLE[r.status]), got + (f" · {tokens} tokens" if tokens else ""),
                      f"{_esc(_clip(r.question, 70))}{said}")
        con.print(d)
    if as_of_cases:
        con.print(f"[dim]{as_of_cases} case(s) carry `as_of`, which the API does not take: checked as of today[/]")
    if summary["model_called"]:
        con.print(f"[yellow]{len(summary['model_called'])} case(s) reached the model, or a refusal after generation that may "
                  f"have (these count toward the spend cap): {', '.join(summary['model_called'])}[/]", highlight=False)
    if summary["escaped"]:
        con.print(f"[bold red]ESCAPED {len(summary['escaped'])}:[/] {', '.join(summary['escaped'])}", highlight=False)
    if summary["late_refusals"]:
        con.print(f"[bold yellow]REFUSED ONLY AFTER THE GENERATOR RAN {len(summary['late_refusals'])}:[/] "
                  f"{', '.join(summary['late_refusals'])}", highlight=False)
    if summary["errors"]:
        con.print(f"[magenta]NOT CHECKED {len(summary['errors'])}:[/] {', '.join(summary['errors'])}", highlight=False)
    if not (summary["escaped"] or summary["late_refusals"] or summary["errors"]):
        con.print("[bold green]every must-refuse case was refused before any model call[/]")


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _esc(s: str) -> str:
    from rich.markup import escape

    return escape(s)


# -- the command -------------------------------------------------------------------------------------------
def check_command(url: str, golden_path: Path, *, rate: float = 2.0, concurrency: int = 2, timeout: float = 60.0,
                  as_json: bool = False, show_all: bool = False, send_lang: bool = False, progress: bool = True,
                  transport: Any = None, console: Any = None) -> int:
    """`vouched check --url URL GOLDEN.jsonl`: print the table (or JSON) and return the exit code.

    Returns 0 (every case refused before any model call), 1 (a case escaped) or 7 (a case got
    no verdict). What cannot be used raises InputError / GoldenInputError (exit 2); a service
    that cannot be checked at all raises CheckError (exit 7): the CLI maps both with the one
    table, vouched.errors.EXIT_CODES.
    """
    from rich.console import Console

    from vouched.eval.golden import GoldenInputError, load_golden

    con = console or Console()
    err = Console(stderr=True)
    try:
        target = ask_url(url)
        check_options(rate, concurrency, timeout)
    except CheckError as exc:  # a bad --url, --rate, --concurrency or --timeout: what was given
        raise InputError(str(exc)) from exc
    try:
        cases = must_refuse_cases(load_golden(Path(golden_path)))
    except OSError as exc:
        raise GoldenInputError(f"{golden_path}: {exc}") from exc
    if not cases:
        raise GoldenInputError(f"{golden_path} has no must-refuse case (expect refuse_pattern or refuse_no_evidence)")
    t0 = time.perf_counter()
    results = _run_with_progress(target, cases, rate, concurrency, timeout, send_lang, transport, progress and not as_json, err)
    seconds = time.perf_counter() - t0
    summary = summarize_check(results)
    code = check_exit_code(results)
    as_of_cases = sum(1 for c in cases if getattr(c, "as_of", None))
    if as_json:
        print(json.dumps({"url": target, "golden": str(golden_path), **summary, "as_of_not_sent": as_of_cases,
                          "rate": rate, "concurrency": concurrency, "seconds": round(seconds, 3), "exit_code": code,
                          "results": [asdict(r) for r in results]}, ensure_ascii=False, indent=2))
    else:
        print_check(target, results, summary, con, show_all=show_all, as_of_cases=as_of_cases, seconds=seconds)
    return code


def _run_with_progress(target, cases, rate, concurrency, timeout, send_lang, transport, show, err) -> list[CaseResult]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True, disable=not show) as bar:
        task = bar.add_task("checking", total=len(cases))
        escaped = 0

        def on_result(r: CaseResult) -> None:
            nonlocal escaped
            escaped += r.status in ("escaped", "late_refusal")
            bar.update(task, advance=1, description=f"checking ({escaped} not refused)" if escaped else "checking")

        def on_wait(s: float) -> None:
            bar.update(task, description=f"rate limited by the service: waiting {s:.0f}s")

        return asyncio.run(check_cases(target, cases, rate=rate, concurrency=concurrency, timeout=timeout,
                                       send_lang=send_lang, transport=transport, on_result=on_result, on_wait=on_wait))
