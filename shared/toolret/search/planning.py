"""Query planning (intra-retrieval): what a request asks for, as sub-tasks to retrieve for.

A multi-part request ("the weather tomorrow and any news about travel disruptions") needs one
tool per part; one query embedding averages the parts and finds neither well. The planner
splits it into sub-tasks, each retrieved on its own and fused with a per-sub-task budget
(Toolshed §3.4.2). This module is the offline planner: rules on sentence boundaries,
sequencers ("then", "after that") and conjunctions that start a new request ("and also",
"as well as", "and can you..."). An LLM planner returns the same :class:`QueryPlan`.

Example:
    >>> [s.text for s in plan_offline("What's the weather tomorrow? Also find news about travel delays.").subtasks]
    ["What's the weather tomorrow?", 'find news about travel delays.']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from toolret.documents.text import tokenize
from toolret.results import StagePath

__all__ = [
    "MAX_SUBTASKS",
    "FieldQueries",
    "QueryPlan",
    "RankingJob",
    "SubTask",
    "asks_for_something",
    "field_texts",
    "plan_jobs",
    "plan_offline",
]

#: More parts than this is a list of items, not a list of requests.
MAX_SUBTASKS = 4
#: A part needs this many content words to stand as a request of its own.
MIN_CONTENT_WORDS = 2


class FieldQueries(BaseModel):
    """MFTR field-aligned queries for one sub-task, each written to match one tool field.

    ``intent`` is matched against examples, ``tool_description`` against descriptions,
    ``expected_output`` against responses and ``extracted_args`` (abstract descriptions such
    as "city name", never the values themselves) against parameters. Only an LLM planner
    fills them; the offline planner leaves :attr:`SubTask.fields` as ``None``.
    """

    model_config = ConfigDict(frozen=True)

    intent: str = ""
    tool_description: str = ""
    expected_output: str = ""
    extracted_args: list[str] = Field(default_factory=list)


class SubTask(BaseModel):
    """One independent part of a request, with the query variants to retrieve it by."""

    model_config = ConfigDict(frozen=True)

    text: str
    variants: list[str] = Field(default_factory=list)
    fields: FieldQueries | None = None


class QueryPlan(BaseModel):
    """The request as the retriever will search for it."""

    model_config = ConfigDict(frozen=True)

    original: str
    rewritten: str
    subtasks: list[SubTask]
    path: StagePath = "offline"
    #: A more general question behind the request (step-back prompting); LLM planner only.
    step_back: str | None = None


_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"'(])")
# Words a request opens with: a question word, a modal of a polite request, or an imperative verb.
# A conjunction followed by one starts a new request; a part that opens with one asks for something.
_OPENERS = (
    r"can|could|would|will|please|what|how|where|when|which|who|tell|show|find|give|get|suggest|"
    r"recommend|provide|list|check|book|send|convert|calculate|translate|search|look|help"
)
_BREAKS = re.compile(
    r"\s*(?:;|,?\s+and\s+then\s+|,?\s+then\s+|,?\s+after\s+that,?\s+|,?\s+afterwards,?\s+|"
    r",?\s+and\s+also\s+|,?\s+as\s+well\s+as\s+|,?\s+additionally,?\s+|,\s+also,?\s+|"
    rf",?\s+plus\s+|,\s+and\s+|\s+and\s+(?=(?:{_OPENERS}|why|is|are|do|does|any|let|i\s+(?:want|need|would)|also)\b))",
    re.IGNORECASE,
)
_LEAD = re.compile(r"^(?:also|additionally|and|then|plus|furthermore|moreover)[,\s]+", re.IGNORECASE)


# A request: a question, a polite marker anywhere, or a part that opens (after a greeting or a
# leading "also") with a request phrase or an imperative verb.
_ASKS = re.compile(
    r"\?|\b(?:please|(?:can|could|would|will)\s+you)\b|"
    r"^[\s\"'(]*(?:(?:hi|hello|hey)\b[\s,!.]*)?(?:(?:also|and|then)\s+)?"
    rf"(?:{_OPENERS}|i\s+(?:also\s+)?(?:need|want)|i'd\s+(?:like|love)|i\s+would\s+(?:like|love)|"
    r"(?:i'm|i\s+am)\s+(?:looking\s+for|interested\s+in)|looking\s+for|create|make|add|set|play|compute|"
    r"generate|write|summari[sz]e|is\s+there|are\s+there|let\s+me|let's)\b",
    re.IGNORECASE,
)


def asks_for_something(text: str) -> bool:
    """Is this part of a request an ask (a question, "can you", "I need", "find ...") rather than a statement?

    A statement ("The company needs to summarize articles for its news app.", "I'm planning a trip
    to Japan.") sets the context of the ask that follows; searched on its own, it takes slots
    from the tools the whole request needs. English phrasing only: in other languages no part
    qualifies, and the request is ranked as one.

    >>> asks_for_something("I'm planning a trip to Japan."), asks_for_something("Can you find me a flight?")
    (False, True)
    """
    return bool(_ASKS.search(text))


def _content_words(text: str) -> int:
    return len(tokenize(text))


def _pieces(query: str) -> list[str]:
    parts: list[str] = []
    for sentence in _SENTENCE.split(query):
        parts.extend(p for p in _BREAKS.split(sentence) if p and p.strip())
    return [_LEAD.sub("", p.strip()).strip() for p in parts if p.strip()]


def plan_offline(query: str) -> QueryPlan:
    """Split a request into independent sub-tasks by rule; one variant each (the text itself).

    Parts too short to be a request ("thanks", "in Paris") are merged into their neighbour,
    and a request that does not split stays one sub-task.
    """
    text = " ".join(query.split())
    merged: list[str] = []
    for piece in _pieces(text):
        if merged and (_content_words(piece) < MIN_CONTENT_WORDS or _content_words(merged[-1]) < MIN_CONTENT_WORDS):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    if len(merged) > MAX_SUBTASKS or len(merged) < 2:
        merged = [text]
    return QueryPlan(
        original=query,
        rewritten=text,
        subtasks=[SubTask(text=part, variants=[part]) for part in merged],
        path="offline",
    )


@dataclass(frozen=True)
class RankingJob:
    """One ranking a plan asks for: of the whole request (``subtask=None``) or of one sub-task's text."""

    subtask: int | None
    text: str
    fields: FieldQueries | None = None


# MFTR field-aligned sub-queries: which planner field is matched against which tool field.
_FIELD_OF = {"tool_description": "description", "intent": "examples", "expected_output": "response"}


def plan_jobs(query: str, plan: QueryPlan | None) -> list[RankingJob]:
    """The rankings a plan asks for: the whole request, then each sub-task's variants."""
    if plan is None:
        return [RankingJob(None, query)]
    whole = plan.rewritten if plan.path == "llm" and plan.rewritten else query
    jobs = [RankingJob(None, whole)]
    if len(plan.subtasks) < 2 and plan.path != "llm":
        return jobs
    for i, sub in enumerate(plan.subtasks):
        for variant in dict.fromkeys(sub.variants or [sub.text]):
            jobs.append(RankingJob(i, variant, sub.fields if variant == sub.text else None))
    return jobs


def field_texts(fields: FieldQueries | None) -> dict[str, str]:
    """A sub-task's field-aligned queries as {index field: text} (MFTR's field-aligned sub-queries)."""
    if fields is None:
        return {}
    out = {target: getattr(fields, source) for source, target in _FIELD_OF.items() if getattr(fields, source)}
    if fields.extracted_args:
        out["parameters"] = "; ".join(fields.extracted_args)
    return out
