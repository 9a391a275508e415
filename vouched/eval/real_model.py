"""Ask a real (weak) model questions over an example corpus and count what the gate did.

Used by `scripts/real-model-check` (not part of the CI suite): a small local model served by
llama.cpp hallucinates freely, which is exactly what the sentence gate is for. Prints, per
question, the outcome and — for held answers — the rule and the offending value, then the
totals: answered, records, refused by layer, held by rule, truncated.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time

from vouched.answer import Assistant
from vouched.config import load_config
from vouched.llm.errors import ProviderError

QUESTIONS = [
    "Which languages does she speak?",
    "How much did the Tessera Health search reduce zero-result searches?",
    "Which database did the Tessera Health search run on?",
    "What was the wrong-answer rate of the runbook assistant at the pilot launch?",
    "Where did she do her PhD, and what was it about?",
    "Which open-source libraries does she maintain?",
    "What did she build for Mar Azul Logistics?",
    "What is pakneviss?",
    "Does she work remotely?",
    "How many pages did the Persian OCR project process?",
    "¿Cuánto mejoró el nDCG@10 del buscador de Tessera Health?",
    "¿Qué tipo de trabajos acepta?",
    "پاک‌نویس نرخ خطای نویسه را چقدر کاهش داد؟",
    "What are Leila Navid's day rates?",
    "What's the weather in Paris today?",
    "Who won the 2018 World Cup?",
    "What has she done recently?",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", default="examples/portfolio/vouched.toml")
    ap.add_argument("--base-url", required=True, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8089/v1")
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--context-tokens", type=int, default=1200)
    ap.add_argument("--max-output-tokens", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    cfg = load_config(args.config)
    from vouched.config import ModelPrice

    cfg = cfg.model_copy(update={
        "answer": cfg.answer.model_copy(update={
            "provider": "openai", "base_url": args.base_url, "model": args.model,
            "context_tokens": args.context_tokens, "max_output_tokens": args.max_output_tokens}),
        # a local model costs nothing, but the spend path still runs (a price of 0 reserves nothing)
        "spend": cfg.spend.model_copy(update={"prices": {args.model: ModelPrice(input_per_mtok=0, output_per_mtok=0)}}),
    })
    assistant = Assistant(cfg)
    rows = []
    for q in QUESTIONS:
        t0 = time.perf_counter()
        try:
            ans = assistant.ask(q)
        except ProviderError as exc:  # the local server failed mid-answer: count it, go on
            rows.append({"question": q, "outcome": "error", "layer": None, "category": type(exc).__name__,
                         "released": 0, "rule": None, "value": None, "held_sentence": None,
                         "seconds": round(time.perf_counter() - t0, 2), "text": str(exc)})
            if not args.json:
                print(f"error     -     {exc}  {q}", flush=True)
            continue
        tr = ans.trace
        failed = next((s for s in (tr.sentences if tr else []) if not s["ok"]), None)
        rows.append({
            "question": q, "outcome": ans.outcome, "layer": ans.layer, "category": ans.category,
            "released": len(ans.sentences), "rule": failed["rule"] if failed else None,
            "value": failed["value"] if failed else None, "held_sentence": failed["text"] if failed else None,
            "seconds": round(time.perf_counter() - t0, 2), "text": ans.text,
        })
        if not args.json:
            r = rows[-1]
            extra = f" rule={r['rule']} value={r['value']!r}" if r["rule"] else ""
            print(f"{r['outcome']:9} {r['layer'] or '-':5} released={r['released']}{extra}  {q}", flush=True)
    totals = collections.Counter(r["outcome"] for r in rows)
    held = collections.Counter(r["rule"] for r in rows if r["outcome"] == "held")
    refused = collections.Counter(f"{r['layer'] or 'model'}:{r['category']}" for r in rows if r["outcome"] == "refused")
    summary = {"questions": len(rows), "outcomes": dict(totals), "held_by_rule": dict(held), "refused_by": dict(refused),
               "sentences_released": sum(r["released"] for r in rows)}
    if args.json:
        print(json.dumps({"summary": summary, "rows": rows}, ensure_ascii=False, indent=2))
    else:
        print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
