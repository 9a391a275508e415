"""`TraceRecord`: what happened to one question (persisted by vouched.trace when configured).

The answer path fills one per question and returns it with the answer (the done event's
``trace``); the trace stores write it, `render_trace` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TraceRecord:
    """What happened to one question."""

    id: str
    question: str
    created_at: str = ""
    tenant: str = ""
    as_of: str | None = None
    previous_question: str | None = None
    normalized: str = ""
    lang: str = ""
    route: str = ""
    layer: str | None = None
    category: str | None = None
    outcome: str = ""
    threshold: float = 0.0
    evidence: float = 0.0
    evidence_run: str = ""
    anchors: list[str] = field(default_factory=list)  # L2 coverage: "kind:text" of each anchor of the question
    anchors_found: list[str] = field(default_factory=list)
    anchors_missing: list[str] = field(default_factory=list)
    retrieved: list[dict] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)
    sentences: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    stages_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def add_stage(self, name: str, ms: float) -> None:
        """Add ``ms`` to the stage ``name`` (a stage run more than once sums)."""
        self.stages_ms[name] = self.stages_ms.get(name, 0.0) + ms
