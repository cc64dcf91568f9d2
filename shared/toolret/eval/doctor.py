"""``toolret doctor``: is my registry retrievable? Each tool checked, each finding naming its tools.

Teams want to know how well tool search works on *their* tools, and the first finding of the
tool-retrieval literature is that tools are under-documented. :func:`diagnose` reads a knowledge
base and reports, per tool (the checks are :mod:`toolret.eval.doctor_checks`):

* near-duplicates the retriever cannot tell apart (indexed descriptions at cosine >= 0.97);
* empty or thin descriptions;
* definitions that cost many tokens each time they are bound (>= 1,000);
* names shared by several tools (several sources' ``create_lead``);
* tools their own requests do not reach: each tool's requests (an LLM's hypothetical questions where
  the knowledge base holds them or an ``llm`` is given, else two made offline from its own
  documentation) searched over the whole registry, and the share of them that rank it first.

:class:`DoctorReport` prints as a table (:meth:`DoctorReport.table`) and as JSON (:meth:`DoctorReport.as_json`),
each finding with its kind, severity, tool ids, what to do and its figures. Nothing is written to the
knowledge base.

Example:
    >>> from toolret import ToolKnowledgeBase, ToolDoc
    >>> kb = ToolKnowledgeBase.from_tools([ToolDoc(name="get_weather", description="Weather now in a city."),
    ...                                    ToolDoc(name="ping")])                          # doctest: +SKIP
    >>> [f.kind for f in diagnose(kb).findings]                                              # doctest: +SKIP
    ['empty_description']
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolret.documents.tokens import token_counter
from toolret.documents.tool_doc import ToolDoc
from toolret.eval.doctor_checks import (
    ADVICE,
    DUPLICATE_COSINE,
    HEAVY_TOKENS,
    REACH_SHARE,
    SEVERITY,
    THIN_WORDS,
    Finding,
    Reach,
    description_words,
    descriptions,
    heavy_definitions,
    name_collisions,
    near_duplicates,
    offline_requests,
    reach,
    source_of,
    unreached,
)
from toolret.eval.tables import format_table
from toolret.search.token_budget import definition_text

__all__ = ["DoctorReport", "ToolCheck", "diagnose"]

logger = logging.getLogger("toolret")


@dataclass(frozen=True)
class ToolCheck:
    """One tool's figures: where it came from, its description's words, its definition's tokens, its reach."""

    id: str
    name: str
    source: str | None
    description_words: int
    definition_tokens: int
    requests: int
    ranked_first: int
    findings: list[str] = field(default_factory=list)

    @property
    def reach(self) -> float | None:
        """The share of its own requests that rank it first (None: it had none)."""
        return self.ranked_first / self.requests if self.requests else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "source": self.source,
            "description_words": self.description_words,
            "definition_tokens": self.definition_tokens,
            "requests": self.requests,
            "ranked_first": self.ranked_first,
            "reach": None if self.reach is None else round(self.reach, 3),
            "findings": self.findings,
        }


@dataclass(frozen=True)
class DoctorReport:
    """What :func:`diagnose` found: the findings (most severe first) and every tool's figures."""

    findings: list[Finding]
    tools: list[ToolCheck]
    settings: dict[str, Any]

    def summary(self) -> dict[str, int]:
        """How many findings of each kind."""
        out: dict[str, int] = {}
        for finding in self.findings:
            out[finding.kind] = out.get(finding.kind, 0) + 1
        return out

    def as_json(self) -> dict[str, Any]:
        """The report as JSON: ``settings``, ``summary``, ``findings`` (each naming its ``tool_ids``), ``tools``."""
        return {
            "settings": self.settings,
            "summary": self.summary(),
            "findings": [f.as_dict() for f in self.findings],
            "tools": [t.as_dict() for t in self.tools],
        }

    def table(self, limit: int = 40) -> str:
        """The tools with findings (most severe first, at most ``limit`` rows), then the findings of each kind
        (at most ``limit`` and 8 lines each) under what to do about them."""
        per_kind = min(8, limit)
        flagged = [t for t in self.tools if t.findings]
        flagged.sort(key=lambda t: (-sum(SEVERITY[k] == "high" for k in t.findings), t.reach or 0.0, t.id))
        s = self.settings
        lines = [
            f"{s['tools']} tools in {s['kb']} (embedder {s['embedder']}); requests: {s['requests_from']}; "
            f"tokens: {s['token_counter']}",
        ]
        if not self.findings:
            return "\n".join([*lines, "no findings: every tool is described, distinct, light and reached"])
        counts = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in self.summary().items())
        lines.append(f"{len(self.findings)} findings ({counts}); {len(flagged)} of {s['tools']} tools flagged")
        rows = [
            [
                _cut(t.id, 40),
                ", ".join(_SHORT[k] for k in dict.fromkeys(t.findings)),
                "-" if t.reach is None else f"{t.ranked_first}/{t.requests}",
                t.definition_tokens,
                t.description_words,
            ]
            for t in flagged[:limit]
        ]
        lines += ["", format_table(["tool", "findings", "reached", "def tokens", "desc words"], rows)]
        if len(flagged) > limit:
            lines.append(f"... and {len(flagged) - limit} more tools with findings (--json for all)")
        for kind, n in self.summary().items():
            of_kind = [f for f in self.findings if f.kind == kind]
            lines += ["", f"{kind.replace('_', ' ')} ({n}, {SEVERITY[kind]}): {ADVICE[kind]}"]
            lines += [f"  {_cut(f.what, 200)}" for f in of_kind[:per_kind]]
            if n > per_kind:
                lines.append(f"  ... and {n - per_kind} more (--json for all)")
        return "\n".join(lines)


_SHORT = {
    "near_duplicate": "near-duplicate",
    "empty_description": "empty description",
    "thin_description": "thin description",
    "heavy_definition": "heavy definition",
    "name_collision": "name collision",
    "unreached": "unreached",
}


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def diagnose(
    kb: Any,
    *,
    llm: Any = None,
    config: Any = None,
    duplicate_cosine: float = DUPLICATE_COSINE,
    thin_words: int = THIN_WORDS,
    heavy_tokens: int = HEAVY_TOKENS,
    reach_share: float = REACH_SHARE,
    progress: Callable[[int], None] | None = None,
) -> DoctorReport:
    """Check every tool of the knowledge base ``kb``; nothing is written to it.

    ``llm`` (a toolret LLM) writes each tool's hypothetical questions for the reach check
    (:class:`toolret.index.expansion.LLMExpander`, judged for faithfulness); without one, a tool
    indexed with LLM questions is asked those, any other the two offline requests of
    :func:`~toolret.eval.doctor_checks.offline_requests`. ``config``: the preset the requests are
    searched with (default: the knowledge base's). ``progress(n)`` is called as tools are searched.
    """
    docs: list[ToolDoc] = list(kb.docs())
    snap = kb._writer.snapshot
    asked, requests_from = _requests(docs, llm)
    count = token_counter()
    tokens = {d.id: count.count(definition_text(d.definition())) for d in docs}

    def top(request: str) -> str | None:
        found = kb.search(request, k=1, config=config)
        return found.tools[0].id if found.tools else None

    reached: dict[str, Reach] = reach(docs, lambda d: asked[d.id], top, progress)
    findings = [
        *name_collisions(docs),
        *near_duplicates(snap, duplicate_cosine),
        *descriptions(docs, thin_words),
        *unreached(docs, reached, reach_share),
        *heavy_definitions(tokens, docs, heavy_tokens),
    ]
    findings.sort(key=lambda f: SEVERITY[f.kind] != "high")  # stable: the kinds keep the order above
    kinds: dict[str, list[str]] = {}
    for finding in findings:
        for tool_id in finding.tool_ids[:1] if finding.kind == "unreached" else finding.tool_ids:
            kinds.setdefault(tool_id, []).append(finding.kind)
    checks = [
        ToolCheck(
            id=d.id,
            name=d.name,
            source=source_of(d),
            description_words=description_words(d),
            definition_tokens=tokens[d.id],
            requests=len(reached[d.id].requests),
            ranked_first=reached[d.id].first,
            findings=kinds.get(d.id, []),
        )
        for d in docs
    ]
    settings = {
        "kb": str(kb.path) if kb.path is not None else "memory",
        "tools": len(docs),
        "embedder": kb.embedder.name,
        "preset": getattr(config, "name", config) or kb.config.name,
        "requests_from": requests_from,
        "token_counter": count.name,
        "thresholds": {
            "duplicate_cosine": duplicate_cosine,
            "thin_words": thin_words,
            "heavy_tokens": heavy_tokens,
            "reach_share": reach_share,
        },
    }
    return DoctorReport(findings, checks, settings)


def _requests(docs: list[ToolDoc], llm: Any) -> tuple[dict[str, list[str]], str]:
    """Each tool's requests for the reach check, and where they came from (said in the report)."""
    written: dict[str, list[str]] = {}
    if llm is not None:
        from toolret.index.expansion import LLMExpander

        expanded = LLMExpander(llm).expand(docs)
        written = {d.id: list(d.expansion.hypothetical_questions) for d in expanded}
    out: dict[str, list[str]] = {}
    sources: set[str] = set()
    for doc in docs:
        questions = written.get(doc.id) or list(doc.expansion.hypothetical_questions)
        if questions:
            origin = doc.expansion.sources.get("hypothetical_questions", "llm")
            sources.add(f"llm ({getattr(llm, 'name', origin)})" if doc.id in written else f"indexed ({origin})")
            out[doc.id] = questions
        else:
            sources.add("offline (each tool's purpose sentence, and its name with its required arguments)")
            out[doc.id] = offline_requests(doc)
    if llm is not None and any(not written.get(d.id) for d in docs):
        missing = [d.name for d in docs if not written.get(d.id)]
        logger.warning(
            "doctor: the LLM wrote no questions for %d tools (%s); their offline requests are used",
            len(missing),
            ", ".join(missing[:10]),
        )
    return out, "; ".join(sorted(sources)) or "none"
