"""What the gate does to a real model: ask the examples through an OpenAI-compatible server, count sentence by sentence.

Used by ``scripts/real-model-check`` (opt-in, never part of CI): a local model served by
llama.cpp on 127.0.0.1 answers the questions of ``vouched/eval/sets/real_model.jsonl`` over
``examples/portfolio`` and ``examples/runbook`` through the ``openai`` provider with the real
prompt (L3). For each question the run keeps the outcome, the layer and category of a refusal,
and every sentence the gate checked: released or held, the rule that held it and the value.

Held sentences are not all catches: a model that writes "2000" where the source says
"2,000" is held for nothing. A *labels* file (JSONL, one object per sentence you judged,
``{"id": question id, "sentence": text as checked, "label": "correct" | "unsupported"}``)
turns each held sentence into a *false hold* (correct and supported by what it cites, held
anyway) or a *catch* (actually unsupported), and can mark a released sentence
``unsupported`` (a miss). Unlabelled released sentences on answerable questions are counted
as correct and reported as unlabelled. ``--from-json`` rebuilds the report from a previous
run's JSON with the labels, without calling the model again.

``--report DIR`` writes ``real_model.json`` and ``real_model.html`` (answers, sentence
verdicts, refusals by layer, false holds vs catches).

The question set (own wording; each answerable question names the page that answers it and
a few facts a correct answer contains — a hint for labelling, not a score): ``id``,
``example``, ``tenant`` (runbook: ops or support), ``lang``, ``question``, ``answerable``,
``facts``, ``doc`` / ``why``.
"""

from __future__ import annotations

import argparse
import collections
import html
import json
import random
import re
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = [
    "EXAMPLES",
    "load_labels",
    "load_set",
    "main",
    "pick",
    "render_html",
    "run_questions",
    "summarise",
]

EXAMPLES = ("portfolio", "runbook")
LABELS = ("correct", "unsupported")
SEED = 20


# --- inputs ----------------------------------------------------------------------------------------


def load_set(path: str | Path | None = None) -> list[dict]:
    """The question set (the shipped one when ``path`` is None); every row checked for its fields."""
    if path is None:
        raw = resources.files("vouched.eval.sets").joinpath("real_model.jsonl").read_text("utf-8")
    else:
        raw = Path(path).read_text("utf-8")
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    seen: set[str] = set()
    for r in rows:
        missing = {"id", "example", "lang", "question", "answerable"} - set(r)
        if missing:
            raise ValueError(f"question {r.get('id', '?')}: missing {sorted(missing)}")
        if r["example"] not in EXAMPLES:
            raise ValueError(f"question {r['id']}: example must be one of {EXAMPLES}")
        if r["id"] in seen:
            raise ValueError(f"question id {r['id']} appears twice")
        seen.add(r["id"])
    return rows


def pick(rows: Sequence[dict], examples: Iterable[str], answerable: int | None, unanswerable: int | None) -> list[dict]:
    """Per example, a seeded sample of at most ``answerable`` answerable and ``unanswerable`` other
    questions (all when None), in the set's order."""
    out = []
    rng = random.Random(SEED)
    for ex in examples:
        for want, n in ((True, answerable), (False, unanswerable)):
            group = [r for r in rows if r["example"] == ex and bool(r["answerable"]) == want]
            keep = {r["id"] for r in (group if n is None or n >= len(group) else rng.sample(group, n))}
            out += [r for r in group if r["id"] in keep]
    order = {r["id"]: i for i, r in enumerate(rows)}
    return sorted(out, key=lambda r: order[r["id"]])


def load_labels(path: str | Path | None) -> dict[tuple[str, str], str]:
    """(question id, sentence text) → label."""
    if not path:
        return {}
    out: dict[tuple[str, str], str] = {}
    for n, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        d = json.loads(line)
        if d.get("label") not in LABELS:
            raise ValueError(f"{path}:{n}: label must be one of {LABELS}, not {d.get('label')!r}")
        out[(d["id"], d["sentence"].strip())] = d["label"]
    return out


# --- running -----------------------------------------------------------------------------------------


def prompt_fingerprint() -> str:
    """A short hash of the prompt the answer path builds (system rules, source layout, reminder),
    for one fixed made-up question and source: two runs with the same fingerprint asked with the
    same prompt, so ``--resume`` may keep one's rows in the other."""
    import hashlib

    from vouched.answer import generate
    from vouched.guard.prompt import PromptSource

    src = PromptSource(1, "x#1", "x", "Title", "Section", "2026-01-01", None, "Text.", flags=("current",))
    msgs = generate.build_messages("Question?", [src], subject="Subject", pronoun="she", lang="es")
    return hashlib.sha256(json.dumps(msgs, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]


def resumable_rows(previous: dict, questions: Sequence[dict], fingerprint: str) -> list[dict]:
    """The rows of a previous report to keep instead of asking again: those of ``questions``
    (by id) the previous run asked with the same prompt. A report without a fingerprint or
    with another one keeps nothing (ValueError): its answers came from a different prompt."""
    got = previous.get("meta", {}).get("prompt")
    if got != fingerprint:
        raise ValueError(f"the previous report was asked with prompt {got!r}, this run's prompt is {fingerprint!r}")
    want = {q["id"] for q in questions}
    return [r for r in previous.get("rows", []) if r["id"] in want and r.get("outcome") != "error"]


def _facts_found(text: str, facts: Sequence[str]) -> list[str]:
    from vouched.text import normalize

    t = normalize(text)
    return [f for f in facts if normalize(f) in t]


def run_one(assistant, q: dict, *, chunk_texts: Callable[[Sequence[str], str], dict[str, str]] | None = None) -> dict:
    """Ask one question; the row the report is built from."""
    from vouched.llm.errors import ProviderError

    t0 = time.perf_counter()
    row: dict[str, Any] = {k: q.get(k) for k in ("id", "example", "tenant", "lang", "question", "answerable", "facts", "doc", "why")}
    try:
        ans = assistant.ask(q["question"], tenant=q.get("tenant"))
    except ProviderError as exc:  # the local server failed mid-answer: count it, go on
        row.update(outcome="error", layer=None, category=type(exc).__name__, text=str(exc), sentences=[],
                   seconds=round(time.perf_counter() - t0, 2))
        return row
    tr = ans.trace
    sentences = []
    for s in (tr.sentences if tr else []):
        item = {"text": s["text"], "ok": bool(s["ok"]), "rule": s.get("rule"), "value": s.get("value"),
                "cited": list(s.get("cited") or [])}
        if not s["ok"] and tr and chunk_texts:
            # what it cites; a sentence held before its marker arrived (a value found in no source) cites
            # nothing yet: then every source the prompt gave, so the hold can be judged
            ids = [tr.source_ids[n - 1] for n in item["cited"] if 0 < n <= len(tr.source_ids)] or list(tr.source_ids)
            item["cited_text"] = list(chunk_texts(ids, tr.tenant).values())
        sentences.append(item)
    row.update(outcome=ans.outcome, layer=ans.layer, category=ans.category, text=ans.text, sentences=sentences,
               route=tr.route if tr else None, evidence=round(tr.evidence, 4) if tr else None,
               source_ids=list(tr.source_ids) if tr else [], usage=dict(tr.usage) if tr else {},
               seconds=round(time.perf_counter() - t0, 2))
    if q.get("facts"):
        row["facts_found"] = _facts_found(ans.text, q["facts"])
    return row


def run_questions(questions: Sequence[dict], assistants: dict[str, Any], *, progress: Callable[[dict], None] | None = None,
                  chunk_texts: dict[str, Callable] | None = None) -> list[dict]:
    rows = []
    for q in questions:
        row = run_one(assistants[q["example"]], q, chunk_texts=(chunk_texts or {}).get(q["example"]))
        rows.append(row)
        if progress:
            progress(row)
    return rows


# --- the figures -------------------------------------------------------------------------------------


def _refusal_key(r: dict) -> str:
    if r["outcome"] == "held":
        return f"gate:{r['category']}"
    if r["category"] == "no_answer":
        return "NO_ANSWER"
    return f"{r['layer'] or 'model'}:{r['category']}"


_MARKERS = re.compile(r"\[\s*\d+(?:\s*[,،;\-–]\s*\d+)*\s*\]")


def _has_text(sentence: str) -> bool:
    """Whether a sentence holds anything besides source markers and punctuation."""
    return any(ch.isalnum() for ch in _MARKERS.sub("", sentence))


def summarise(rows: Sequence[dict], labels: dict[tuple[str, str], str] | None = None) -> dict[str, Any]:
    """The figures, per example and overall; labels turn holds into false holds and catches.

    A *correct sentence* is a released sentence not labelled unsupported, or a held sentence
    labelled correct. False-hold rate = held-and-correct / correct sentences. A question that
    cannot be answered is *refused* when no sentence with text was released for it (a refusal,
    NO_ANSWER, a hold at the first sentence, or markers only); any sentence released for it is
    counted (and should be labelled). A released "sentence" of markers only is not counted as
    released text; an answer made only of them is listed under ``empty_answers``.
    """
    labels = labels or {}
    out: dict[str, Any] = {}
    for ex in [*EXAMPLES, "all"]:
        rs = [r for r in rows if ex == "all" or r["example"] == ex]
        if not rs:
            continue
        ans = [r for r in rs if r["answerable"]]
        una = [r for r in rs if not r["answerable"]]
        s: dict[str, Any] = {"questions": len(rs), "answerable": len(ans), "unanswerable": len(una),
                             "outcomes": dict(collections.Counter(r["outcome"] for r in rs))}
        # a "sentence" that is only markers ("[1]") is released as nothing: not counted as released text
        checked = [(r, x) for r in rs for x in r.get("sentences", []) if not (x["ok"] and not _has_text(x["text"]))]
        released = [(r, x) for r, x in checked if x["ok"]]
        held = [(r, x) for r, x in checked if not x["ok"] and x["rule"] != "no_answer"]
        s["sentences"] = {"checked": len(checked), "released": len(released), "held": len(held),
                          "held_by_rule": dict(collections.Counter(x["rule"] for _, x in held))}
        lab = lambda r, x: labels.get((r["id"], x["text"].strip()))  # noqa: E731
        held_correct = [(r, x) for r, x in held if lab(r, x) == "correct"]
        held_unsup = [(r, x) for r, x in held if lab(r, x) == "unsupported"]
        rel_ans = [(r, x) for r, x in released if r["answerable"]]
        rel_bad = [(r, x) for r, x in released if lab(r, x) == "unsupported"]
        correct = len([1 for r, x in rel_ans if lab(r, x) != "unsupported"]) + len(held_correct)
        s["labels"] = {
            "held_labelled": len(held_correct) + len(held_unsup), "held_unlabelled": len(held) - len(held_correct) - len(held_unsup),
            "false_holds": len(held_correct), "catches": len(held_unsup),
            "false_holds_by_rule": dict(collections.Counter(x["rule"] for _, x in held_correct)),
            "catches_by_rule": dict(collections.Counter(x["rule"] for _, x in held_unsup)),
            "correct_sentences": correct,
            "false_hold_rate": round(len(held_correct) / correct, 4) if correct else None,
            "released_unsupported": len(rel_bad),
            "released_unlabelled": len([1 for r, x in released if lab(r, x) is None]),
        }
        refused_keys = collections.Counter(_refusal_key(r) for r in rs
                                           if r["outcome"] in ("refused", "held") or r.get("category") == "no_answer")
        s["refused_by"] = dict(refused_keys)
        una_answered = [r for r in una if any(x["ok"] and _has_text(x["text"]) for x in r.get("sentences", []))]
        s["unanswerable_refused"] = len(una) - len(una_answered)
        s["unanswerable_with_released_text"] = [r["id"] for r in una_answered]
        s["unanswerable_released_unsupported"] = len([1 for r, x in rel_bad if not r["answerable"]])
        s["answerable_outcomes"] = dict(collections.Counter(r["outcome"] for r in ans))
        s["answerable_with_all_facts"] = len([r for r in ans if r.get("facts") and
                                              len(r.get("facts_found", [])) == len(r["facts"])])
        s["errors"] = len([r for r in rs if r["outcome"] == "error"])
        # the model answered with markers only: the reader got an empty "answered" (no sentence released)
        s["empty_answers"] = [r["id"] for r in rs if r["outcome"] == "answered" and not r.get("text", "").strip()]
        secs = [r["seconds"] for r in rs if r.get("usage")]
        s["seconds_per_model_call"] = round(sum(secs) / len(secs), 1) if secs else None
        out[ex] = s
    return out


# --- the HTML page -----------------------------------------------------------------------------------


_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;text-align:start}th{background:#f3f3f3}
.ok{color:#176b2c}.held{color:#a31515;font-weight:600}.fh{background:#fff3c4}.catch{background:#e2f5e6}
.q{font-weight:600}small{color:#555}pre{white-space:pre-wrap;margin:0}"""


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def render_html(report: dict[str, Any]) -> str:
    """One self-contained page: the figures, then every question with its sentences."""
    labels = {(d["id"], d["sentence"]): d["label"] for d in report.get("labels", [])}
    meta = report.get("meta", {})
    parts = [f"<!doctype html><meta charset=utf-8><title>vouched: real model check</title><style>{_CSS}</style>",
             "<h1>What the gate does to a real model</h1>",
             "<p>" + " · ".join(f"{_e(k)}: <b>{_e(v)}</b>" for k, v in meta.items()) + "</p>", "<h2>Figures</h2>"]
    for ex, s in report.get("summary", {}).items():
        parts.append(f"<h3>{_e(ex)}</h3><pre>{_e(json.dumps(s, ensure_ascii=False, indent=1))}</pre>")
    parts.append("<h2>Questions</h2><table><tr><th>id</th><th>question</th><th>outcome</th><th>sentences (as checked)</th><th>s</th></tr>")
    for r in report.get("rows", []):
        refusal = "" if r["outcome"] in ("answered", "records") else f" <small>{_e(r.get('layer'))}:{_e(r.get('category'))}</small>"
        cells = []
        for x in r.get("sentences", []):
            lab = labels.get((r["id"], x["text"].strip()))
            cls = "ok" if x["ok"] else "held"
            mark = {"correct": " fh", "unsupported": " catch"}.get(lab or "", "") if not x["ok"] else ""
            tag = "released" if x["ok"] else f"HELD {x['rule']} {x.get('value') or ''}"
            extra = f" <small>[{_e(lab)}]</small>" if lab else ""
            cited = "".join(f"<details><summary><small>cited source</small></summary><pre dir=auto>{_e(t)}</pre></details>"
                            for t in x.get("cited_text", []))
            cells.append(f"<div class='{cls}{mark}' dir=auto><small>{_e(tag)}</small>{extra}<br>{_e(x['text'])}{cited}</div>")
        want = "answerable" if r["answerable"] else f"unanswerable: {r.get('why') or ''}"
        parts.append(f"<tr><td>{_e(r['id'])}<br><small>{_e(want)}</small></td><td class=q dir=auto>{_e(r['question'])}"
                     f"<br><small>facts: {_e(', '.join(r.get('facts') or []))} · {_e(r.get('doc') or '')}</small></td>"
                     f"<td>{_e(r['outcome'])}{refusal}</td><td>{''.join(cells) or '<small>(no sentence)</small>'}"
                     f"<div dir=auto><small>shown: {_e(r.get('text'))}</small></div></td><td>{_e(r.get('seconds'))}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts)


def write_report(directory: Path, report: dict[str, Any]) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    j, h = directory / "real_model.json", directory / "real_model.html"
    j.write_text(json.dumps(report, ensure_ascii=False, indent=1), "utf-8")
    h.write_text(render_html(report), "utf-8")
    return j, h


# --- the command -------------------------------------------------------------------------------------


def _assistant(config_path: str, base_url: str, model: str, context_tokens: int, max_output_tokens: int, provider=None):
    from vouched.answer import Assistant
    from vouched.config import ModelPrice, load_config

    cfg = load_config(config_path)
    cfg = cfg.model_copy(update={
        "answer": cfg.answer.model_copy(update={
            "provider": "openai", "base_url": base_url, "model": model,
            "context_tokens": context_tokens, "max_output_tokens": max_output_tokens}),
        # a local model costs nothing, but the spend path still runs (a price of 0 reserves nothing)
        "spend": cfg.spend.model_copy(update={"prices": {model: ModelPrice(input_per_mtok=0, output_per_mtok=0)}}),
    })
    return Assistant(cfg, provider=provider) if provider is not None else Assistant(cfg)


def main(argv: list[str] | None = None, *, providers: dict[str, Any] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Ask the examples through a real model; count what the gate did.")
    ap.add_argument("--base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8089/v1")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    ap.add_argument("--examples", default="portfolio,runbook", help="comma-separated: portfolio, runbook")
    ap.add_argument("--config-dir", default="examples", help="folder holding <example>/vouched.toml")
    ap.add_argument("--set", dest="qset", help="question set (JSONL); default vouched/eval/sets/real_model.jsonl")
    ap.add_argument("--answerable", type=int, help="per example, a seeded sample of this many answerable questions (default all)")
    ap.add_argument("--unanswerable", type=int, help="per example, a seeded sample of this many unanswerable ones (default all)")
    ap.add_argument("--ids", help="comma-separated question ids to ask (instead of the samples)")
    ap.add_argument("--shuffle", action="store_true",
                    help="ask in a seeded random order, so a run stopped early is still a random sample "
                         "(with --report the files are rewritten after every question)")
    ap.add_argument("--resume", help="a previous real_model.json asked with the same prompt: keep its rows, ask only the rest")
    ap.add_argument("--context-tokens", type=int, default=1200)
    ap.add_argument("--max-output-tokens", type=int, default=200)
    ap.add_argument("--labels", help="JSONL of your labels on sentences: {id, sentence, label: correct|unsupported}")
    ap.add_argument("--from-json", help="rebuild the report from a previous real_model.json (no model call)")
    ap.add_argument("--report", help="write real_model.json and real_model.html into this folder")
    ap.add_argument("--meta", action="append", default=[], help="KEY=VALUE shown on the report (date, load, hardware)")
    ap.add_argument("--json", action="store_true", help="print the whole report as JSON")
    args = ap.parse_args(argv)

    labels = load_labels(args.labels)
    meta = dict(m.split("=", 1) for m in args.meta)
    if args.from_json:
        old = json.loads(Path(args.from_json).read_text("utf-8"))
        rows, meta = old["rows"], {**old.get("meta", {}), **meta}
    else:
        if not args.base_url and providers is None:
            ap.error("--base-url is needed (or --from-json)")
        examples = [e.strip() for e in args.examples.split(",") if e.strip()]
        qs = load_set(args.qset)
        if args.ids:
            want = {i.strip() for i in args.ids.split(",")}
            questions = [q for q in qs if q["id"] in want and q["example"] in examples]
        else:
            questions = pick(qs, examples, args.answerable, args.unanswerable)
        if args.shuffle:
            random.Random(SEED).shuffle(questions)
        fingerprint = prompt_fingerprint()
        meta["prompt"] = fingerprint
        kept: list[dict] = []
        if args.resume:
            try:
                kept = resumable_rows(json.loads(Path(args.resume).read_text("utf-8")), questions, fingerprint)
            except ValueError as exc:
                ap.error(f"--resume: {exc}")
            meta["resumed"] = str(len(kept))
            asked = {r["id"] for r in kept}
            questions = [q for q in questions if q["id"] not in asked]
        assistants, texts = {}, {}
        for ex in examples:
            a = _assistant(str(Path(args.config_dir) / ex / "vouched.toml"), args.base_url or "http://127.0.0.1:9/v1",
                           args.model, args.context_tokens, args.max_output_tokens,
                           provider=(providers or {}).get(ex))
            assistants[ex] = a

            def fetch(ids, tenant, a=a):
                got = a.engine.store.get_chunks(ids, tenant or "default")
                return {i: got[i].text for i in ids if i in got}

            texts[ex] = fetch

        done: list[dict] = list(kept)
        total = len(kept) + len(questions)

        def show(r: dict) -> None:
            done.append(r)
            if args.report:  # a run stopped early still leaves its report
                write_report(Path(args.report), {"meta": {**meta, "model": args.model, "partial": f"{len(done)} of {total}"},
                                                 "summary": summarise(done, labels), "rows": done, "labels": []})
            if args.json:
                return
            held = next((x for x in r.get("sentences", []) if not x["ok"]), None)
            extra = f" rule={held['rule']} value={held['value']!r}" if held else ""
            n_ok = sum(x["ok"] for x in r.get("sentences", []))
            print(f"{r['id']:<14} {r['outcome']:9} {r.get('layer') or '-':5} released={n_ok}{extra} "
                  f"({r['seconds']} s)  {r['question']}", flush=True)

        t0 = time.perf_counter()
        rows = kept + run_questions(questions, assistants, progress=show, chunk_texts=texts)
        meta.setdefault("model", args.model)
        meta.setdefault("questions", str(len(rows)))
        meta.setdefault("wall_s", str(round(time.perf_counter() - t0)))
    report = {"meta": meta, "summary": summarise(rows, labels), "rows": rows,
              "labels": [{"id": k[0], "sentence": k[1], "label": v} for k, v in labels.items()]}
    if args.report:
        j, h = write_report(Path(args.report), report)
        if not args.json:
            print(f"report: {j} and {h}")
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        print(json.dumps(report["summary"], ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
