"""A load run: N concurrent SSE clients against a running `vouched serve` (not part of CI).

    from vouched.server.loadtest import run_load
    run_load("http://127.0.0.1:8000", clients=16, requests_per_client=10,
             question="Which database did the Tessera Health search run on?")

Each client asks its questions one after another on its own connection; all clients run at
once. Time to first sentence is measured from sending the request to reading the first
`event: sentence` frame. Turn rate limits off for the run (`[rate_limit] enabled = false`):
every client comes from 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


async def _one(client, url: str, question: str) -> dict:
    t0 = time.perf_counter()
    first_sentence = first_event = None
    outcome = None
    event = None
    async with client.stream("POST", f"{url.rstrip('/')}/v1/ask", json={"question": question},
                             headers={"Accept": "text/event-stream"}) as response:
        if response.status_code != 200:
            await response.aread()
            return {"status": response.status_code, "seconds": time.perf_counter() - t0}
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
                now = time.perf_counter() - t0
                first_event = first_event if first_event is not None else now
                if event == "sentence" and first_sentence is None:
                    first_sentence = now
            elif line.startswith("data:") and event == "done":
                outcome = json.loads(line[5:]).get("outcome")
    return {"status": 200, "seconds": time.perf_counter() - t0, "first_sentence": first_sentence,
            "first_event": first_event, "outcome": outcome or ("error" if event == "error" else "incomplete")}


async def _run(url: str, clients: int, requests_per_client: int, question: str, timeout: float) -> dict:
    import httpx

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
        async def worker() -> list[dict]:
            out = []
            for _ in range(requests_per_client):
                try:
                    out.append(await _one(client, url, question))
                except httpx.HTTPError as exc:
                    out.append({"status": 0, "error": type(exc).__name__, "seconds": 0.0})
            return out

        t0 = time.perf_counter()
        batches = await asyncio.gather(*(worker() for _ in range(clients)))
        wall = time.perf_counter() - t0
    results = [r for batch in batches for r in batch]
    ok = [r for r in results if r["status"] == 200 and r.get("outcome") not in ("error", "incomplete")]
    ttfs = [r["first_sentence"] * 1000 for r in ok if r.get("first_sentence") is not None]
    ttfe = [r["first_event"] * 1000 for r in ok if r.get("first_event") is not None]
    total = [r["seconds"] * 1000 for r in ok]
    return {
        "url": url, "clients": clients, "requests_per_client": requests_per_client, "question": question,
        "requests": len(results), "ok": len(ok), "failed": len(results) - len(ok),
        "statuses": dict(Counter(str(r["status"]) for r in results)),
        "outcomes": dict(Counter(r.get("outcome", "none") for r in ok)),
        "seconds": round(wall, 3), "requests_per_s": round(len(ok) / wall, 2) if wall else None,
        "ttfs_p50_ms": _round(_percentile(ttfs, 50)), "ttfs_p95_ms": _round(_percentile(ttfs, 95)),
        "ttfe_p50_ms": _round(_percentile(ttfe, 50)), "ttfe_p95_ms": _round(_percentile(ttfe, 95)),
        "total_p50_ms": _round(_percentile(total, 50)), "total_p95_ms": _round(_percentile(total, 95)),
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def run_load(url: str, clients: int, requests_per_client: int, question: str, *, timeout: float = 120.0) -> dict:
    """Run the load and return the figures: requests/s, time to first sentence p50/p95 (ms), statuses."""
    if clients < 1 or requests_per_client < 1:
        raise ValueError("clients and requests_per_client must be at least 1")
    return asyncio.run(_run(url, clients, requests_per_client, question, timeout))
