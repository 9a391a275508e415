"""The final verdict on a sentence: the gate's, then the checks that run after it passed.

    gate passed it → sole flagged evidence (injection) → personal data (pii) → claim verification

One pure function, `final_verdict`: given the gate's verdict, the sources the sentence cites
and the deployment's settings, the verdict the reader's answer follows. ``injection``: every
source the sentence cites was flagged at ingest as reading like instructions to a model
(guard.injection.mode = "flag") — it is never the only evidence. ``pii``: an e-mail, phone,
IBAN/card or national id that no public cited source contains, or a deployment's private
value (guard/pii.py). ``verify``: the claim is checked against the cited sources
(guard/verify.py) and held, dropped or marked by the configured policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # the gate loads its tables on import: only when a sentence is checked
    from vouched.guard.gate import GateVerdict
    from vouched.guard.prompt import PromptSource


def final_verdict(v: "GateVerdict", cited: Sequence["PromptSource"], *, lang: str, pii, verify,
                  embedder=None, verification=None) -> "GateVerdict":
    """The verdict after the post-gate checks (``v`` itself when none applies).

    ``cited``: the prompt sources the sentence cites, in its order; ``pii``/``verify``: the
    config's ``guard.pii``/``guard.verify``; ``embedder``: for verification with
    ``use_embedder`` (None: lexical only); ``verification``: the claim's verdict when the
    caller already has it (``[guard.verify] backend = "llm"``: awaited by the caller, so that
    the second model's call does not block the event loop) — then nothing is re-checked here.
    """
    from vouched.guard.injection import sole_flagged_evidence
    from vouched.guard.pii import is_public_source, pii_verdict

    if not (v.ok and v.cited):
        return v
    if sole_flagged_evidence(cited):
        return v._replace(ok=False, rule="injection", value=cited[0].id, released="")
    public = {s.number for s in cited if s.kind == "record" or is_public_source(s.doc_id, s.doc_id, pii.public_sources)}
    found = pii_verdict(v.released, {s.number: s.text for s in cited}, public, pii.private_values, lang)
    if found is not None:
        return v._replace(ok=False, rule="pii", value=f"{found.kind}: {found.value} ({found.reason})", released="")
    if verify.enabled and v.released:
        from vouched.guard.verify import verify_claim

        check = verification if verification is not None else verify_claim(
            v.released, [s.text for s in cited], embedder=embedder if verify.use_embedder else None, lang=lang)
        if check.verdict != "supported":
            value = f"{check.verdict}: {check.reason}"
            if verify.policy == "hold":
                return v._replace(ok=False, rule="verify", value=value, released="")
            if verify.policy == "drop":
                return v._replace(rule="verify_dropped", value=value, released="")
            return v._replace(rule="verify_marked", value=value)
    return v
