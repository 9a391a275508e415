"""`vouched bench fabricated`: does the gate hold a sentence whose answer was swapped?

For answerable questions of SQuAD 2.0 (dev, English) and XQuAD (English and Spanish), the
sentence of the paragraph that holds the gold answer span is cited to that paragraph
("… [1].", the paragraph as source 1) — the *right* sentence — and the same sentence with
the answer span replaced by another span of the same type taken from another paragraph of
the same article — the *fabricated* one. Both go through the gate as the pipeline runs it:
``SentenceGate(sources, lang, early_stop=True)`` fed the sentence in word-sized chunks,
then ``finish()``, then, for a sentence it passes, the pipeline's post-gate check that
applies here (``pii_verdict`` with the default ``guard.pii`` settings; the injection check
needs ingest flags, which these paragraphs do not carry, and claim verification is off by
default).

Types (the answer's, decided from its text; other answers are skipped and counted):

* ``number`` — the answer holds a digit: its first digit run is replaced by a digit run
  from another paragraph of the article ("March 1990" → "March 1872");
* ``name`` — every word of the answer starts with a capital (small function words such as
  "of", "the", "de", "la" aside): replaced by a run of capitalised words from another
  paragraph, of the same number of words where one exists (not a sentence's first word).

The replacement never occurs in the cited paragraph (compared normalised: case folded,
diacritics removed), so a gate that checks the sentence against its source could catch
every one; whether it does is what is measured. The sample is fixed: questions sorted by
id, shuffled by ``random.Random(seed)``, the first ``sample`` per set (``--all``: every one).

Targets, per set: fabricated held ≥ 80 %, right held ≤ 1 %. Exit 0 when every set meets
both, 1 when one misses, 2 on bad input.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from vouched.guard.gate import SentenceGate
from vouched.guard.pii import pii_verdict
from vouched.text import normalize, split_sentences

FABRICATED_HELD_MIN = 0.80
RIGHT_HELD_MAX = 0.01
EXIT_OK, EXIT_MISS, EXIT_BAD_INPUT = 0, 1, 2

_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_SMALL = frozenset("of the a an and de la el los las del y e da do dos das von der und du des le".split())


@dataclass(frozen=True)
class Case:
    set_name: str
    lang: str
    qid: str
    kind: str  # number | name
    context: str
    right: str  # the sentence, cited
    fabricated: str  # the same with the answer replaced, cited
    answer: str
    replacement: str


@dataclass
class SetResult:
    name: str
    lang: str
    questions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    cases: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    right_held: int = 0
    fabricated_held: int = 0
    fabricated_held_by_kind: dict[str, int] = field(default_factory=dict)
    rules: dict[str, int] = field(default_factory=dict)
    right_held_examples: list[dict] = field(default_factory=list)
    missed_examples: list[dict] = field(default_factory=list)

    @property
    def fabricated_rate(self) -> float:
        return self.fabricated_held / self.cases if self.cases else 0.0

    @property
    def right_rate(self) -> float:
        return self.right_held / self.cases if self.cases else 0.0

    @property
    def passed(self) -> bool:
        return self.cases > 0 and self.fabricated_rate >= FABRICATED_HELD_MIN and self.right_rate <= RIGHT_HELD_MAX


def _fold(text: str) -> str:
    norm = unicodedata.normalize("NFKD", normalize(text))
    return " ".join("".join(c for c in norm if not unicodedata.combining(c)).split())


def answer_kind(answer: str) -> str | None:
    """``number``, ``name`` or None (see the module docstring)."""
    if _DIGITS.search(answer):
        return "number"
    words = [w for w in re.findall(r"[^\W\d_][\w'’\-]*", answer)]
    if words and all(w[0].isupper() or w.lower() in _SMALL for w in words) and words[0][0].isupper():
        return "name"
    return None


def _names_in(text: str) -> Iterator[str]:
    """Runs of capitalised words (small function words allowed inside) that do not start a
    sentence or follow an opening quote or a colon."""
    for sentence in split_sentences(text):
        tokens = sentence.split()
        run: list[str] = []
        for i, raw in enumerate(tokens + [""]):
            word = raw.strip("\"'“”‘’«»()[]{},.;:!?")
            initial = i == 0 or tokens[i - 1][-1:] in ":;" or raw[:1] in "\"“«("
            if word and word[0].isupper() and not initial and word.replace("-", "").replace("'", "").isalpha():
                run.append(word)
            elif word.lower() in _SMALL and run and raw == word:
                run.append(word)
            else:
                while run and run[-1].lower() in _SMALL:
                    run.pop()
                if run:
                    yield " ".join(run)
                run = []
                continue
            if raw != word and raw[-1:] in ",.;:!?)\"”»":
                while run and run[-1].lower() in _SMALL:
                    run.pop()
                if run:
                    yield " ".join(run)
                run = []


def _sentence_with(context: str, start: int, end: int) -> str | None:
    """The sentence of ``context`` that holds [start, end), or None if the span crosses one."""
    pos = 0
    for s in split_sentences(context):
        at = context.find(s, pos)
        if at < 0:
            return None
        pos = at + len(s)
        if at <= start and end <= at + len(s):
            return s
    return None


def _cite(sentence: str) -> str:
    s = sentence.strip()
    end = ""
    while s and s[-1] in ".!?…":
        end = s[-1] + end
        s = s[:-1]
    return f"{s} [1]{end or '.'}"


def build_cases(articles: list[dict], set_name: str, lang: str, rng: random.Random) -> tuple[list[Case], dict[str, int], int]:
    """Every typed answerable question of ``articles`` as a Case; (cases, skipped, questions)."""
    cases: list[Case] = []
    skipped: dict[str, int] = {}
    questions = 0

    def skip(why: str) -> None:
        skipped[why] = skipped.get(why, 0) + 1

    for article in articles:
        paragraphs = [p["context"] for p in article.get("paragraphs", [])]
        numbers_by_par = [list(dict.fromkeys(_DIGITS.findall(c))) for c in paragraphs]
        names_by_par = [list(dict.fromkeys(_names_in(c))) for c in paragraphs]
        for pi, para in enumerate(article.get("paragraphs", [])):
            context = para["context"]
            folded = _fold(context)
            for qa in para.get("qas", []):
                if qa.get("is_impossible") or not qa.get("answers"):
                    continue
                questions += 1
                ans = qa["answers"][0]
                answer, start = ans["text"], int(ans["answer_start"])
                if context[start : start + len(answer)] != answer:
                    skip("answer_start does not point at the answer")
                    continue
                kind = answer_kind(answer)
                if kind is None:
                    skip("answer is neither a number nor a name")
                    continue
                sentence = _sentence_with(context, start, start + len(answer))
                if sentence is None:
                    skip("answer crosses a sentence boundary")
                    continue
                others = [j for j in range(len(paragraphs)) if j != pi]
                if kind == "number":
                    digit = _DIGITS.search(answer)
                    pool = [n for j in others for n in numbers_by_par[j]
                            if f" {_fold(n)} " not in f" {folded} " and _fold(n) not in _fold(answer)
                            and not re.search(rf"(?<![\d.,]){re.escape(n)}(?![\d.,]*\d)", context)]
                    if not pool:
                        skip("no other number in the article")
                        continue
                    pick = rng.choice(sorted(set(pool)))
                    replacement = answer[: digit.start()] + pick + answer[digit.end() :]
                else:
                    width = len(answer.split())
                    pool = [n for j in others for n in names_by_par[j] if _fold(n) not in folded]
                    same = [n for n in pool if len(n.split()) == width]
                    pool = same or pool
                    if not pool:
                        skip("no other name in the article")
                        continue
                    replacement = rng.choice(sorted(set(pool)))
                if _fold(replacement) in folded:
                    skip("replacement occurs in the paragraph")
                    continue
                a = start - context.find(sentence)
                fabricated = sentence[:a] + replacement + sentence[a + len(answer) :]
                cases.append(Case(set_name, lang, qa["id"], kind, context, _cite(sentence), _cite(fabricated),
                                  answer, replacement))
    return cases, skipped, questions


def gate_verdict(sentence: str, context: str, lang: str) -> tuple[bool, str | None, str | None]:
    """(held, rule, value) for ``sentence`` citing ``context`` as source 1, as the pipeline
    decides it: the streaming gate with the early stop, then the post-gate PII check."""
    gate = SentenceGate({1: context}, lang, early_stop=True)
    verdicts = []
    words = sentence.split(" ")
    for chunk in [words[0]] + [" " + w for w in words[1:]]:
        verdicts += gate.feed(chunk)
        if gate.closed:
            break
    verdicts += gate.finish()
    for v in verdicts:
        if not v.ok:
            return True, v.rule, v.value
        if v.cited:
            pii = pii_verdict(v.released, {1: context}, set(), (), lang)
            if pii is not None:
                return True, "pii", f"{pii.kind}: {pii.value}"
    return False, None, None


def run_set(cases: list[Case], result: SetResult, examples: int = 5) -> SetResult:
    for case in cases:
        result.cases += 1
        result.kinds[case.kind] = result.kinds.get(case.kind, 0) + 1
        held, rule, value = gate_verdict(case.right, case.context, case.lang)
        if held:
            result.right_held += 1
            if len(result.right_held_examples) < examples:
                result.right_held_examples.append({"id": case.qid, "sentence": case.right, "rule": rule, "value": value})
        held, rule, value = gate_verdict(case.fabricated, case.context, case.lang)
        if held:
            result.fabricated_held += 1
            result.fabricated_held_by_kind[case.kind] = result.fabricated_held_by_kind.get(case.kind, 0) + 1
            result.rules[rule or "?"] = result.rules.get(rule or "?", 0) + 1
        elif len(result.missed_examples) < examples:
            result.missed_examples.append({"id": case.qid, "sentence": case.fabricated, "answer": case.answer,
                                           "replacement": case.replacement})
    return result


SETS = (("squad2-en", "squad2-dev/dev-v2.0.json", "en"), ("xquad-en", "xquad/xquad.en.json", "en"),
        ("xquad-es", "xquad/xquad.es.json", "es"))


def bench_fabricated_command(benchmarks: Path, *, sample: int = 1000, all_questions: bool = False, seed: int = 13,
                             as_json: bool = False, out=None) -> int:
    out = out or sys.stdout
    results: list[SetResult] = []
    t0 = time.perf_counter()
    for name, rel, lang in SETS:
        path = Path(benchmarks) / rel
        if not path.is_file():
            print(f"bad input: {path} is missing", file=out)
            return EXIT_BAD_INPUT
        try:
            articles = json.loads(path.read_text(encoding="utf-8"))["data"]
        except (ValueError, KeyError) as e:
            print(f"bad input: {path}: {e}", file=out)
            return EXIT_BAD_INPUT
        rng = random.Random(seed)
        cases, skipped, questions = build_cases(articles, name, lang, rng)
        cases.sort(key=lambda c: c.qid)
        random.Random(seed).shuffle(cases)
        if not all_questions:
            cases = cases[:sample]
        result = run_set(cases, SetResult(name, lang, questions=questions, skipped=skipped))
        results.append(result)
    seconds = time.perf_counter() - t0
    ok = all(r.passed for r in results)
    if as_json:
        print(json.dumps({"passed": ok, "seconds": round(seconds, 1), "targets": {
            "fabricated_held_min": FABRICATED_HELD_MIN, "right_held_max": RIGHT_HELD_MAX},
            "sets": [{"name": r.name, "lang": r.lang, "questions": r.questions, "skipped": r.skipped, "cases": r.cases,
                      "kinds": r.kinds, "fabricated_held": r.fabricated_rate, "right_held": r.right_rate,
                      "fabricated_held_by_kind": {k: v / r.kinds[k] for k, v in r.fabricated_held_by_kind.items()},
                      "rules": r.rules, "passed": r.passed, "right_held_examples": r.right_held_examples,
                      "missed_examples": r.missed_examples} for r in results]}, ensure_ascii=False, indent=2), file=out)
        return EXIT_OK if ok else EXIT_MISS
    print(f"fabricated-answer benchmark (seed {seed}, {'all' if all_questions else f'sample {sample} per set'}); "
          f"{seconds:.1f} s", file=out)
    for r in results:
        by_kind = ", ".join(f"{k} {r.fabricated_held_by_kind.get(k, 0) / n:.1%} of {n}" for k, n in sorted(r.kinds.items()))
        print(f"{r.name} ({r.lang}): {r.cases} cases of {r.questions} answerable questions "
              f"(skipped: {sum(r.skipped.values())}); fabricated held {r.fabricated_rate:.1%} ({by_kind}); "
              f"right held {r.right_rate:.2%}; rules {dict(sorted(r.rules.items()))} — {'PASS' if r.passed else 'FAIL'}",
              file=out)
        for ex in r.right_held_examples[:3]:
            print(f"    right held: {ex['rule']} {ex['value']!r}: {ex['sentence'][:140]}", file=out)
        for ex in r.missed_examples[:3]:
            print(f"    fabricated passed: {ex['answer']!r} → {ex['replacement']!r}: {ex['sentence'][:140]}", file=out)
    print(f"targets per set: fabricated held ≥ {FABRICATED_HELD_MIN:.0%}, right held ≤ {RIGHT_HELD_MAX:.0%} — "
          f"{'PASS' if ok else 'FAIL'}", file=out)
    return EXIT_OK if ok else EXIT_MISS
