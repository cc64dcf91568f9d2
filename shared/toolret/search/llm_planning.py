"""Query planning with an LLM: rewrite, decompose, expand, and write MFTR field queries.

The offline planner splits on punctuation and conjunctions; it cannot fix "wether", resolve
"book a table *there*" from the chat history, phrase a request the way tool documentation
does, or say which tool fields a request should match. An LLM can (Toolshed §3.4.2; MFTR's
field-aligned queries: ``intent`` → examples, ``tool_description`` → description,
``expected_output`` → response, ``extracted_args`` → parameters). It returns the same
:class:`~toolret.search.planning.QueryPlan` as the offline planner, so nothing downstream changes.

A model's output is untrusted and can be late, malformed, oversized or empty: it is clipped to
bounded sizes, and any failure returns the offline plan with a ``fallback`` trace step that
says why — planning never fails a search.

Example:
    >>> from toolret.llm.testing import ScriptedLLM
    >>> llm = ScriptedLLM(['{"rewritten": "weather in Paris", "subtasks": [{"text": "weather in Paris",'
    ...                    ' "variants": ["Paris forecast"], "extracted_args": ["city name"]}]}'])
    >>> plan, step = plan_with_llm("wether in paris", llm)
    >>> plan.subtasks[0].variants, plan.subtasks[0].fields.extracted_args, step.path
    (['weather in Paris', 'Paris forecast'], ['city name'], 'llm')
    >>> plan, step = plan_with_llm("wether in paris", ScriptedLLM([TimeoutError()]))
    >>> step.path, [s.text for s in plan.subtasks]
    ('fallback', ['wether in paris'])
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from toolret.llm.prompts import PLANNER_V1, render
from toolret.llm.protocol import LLM, ChatMessage, structured_call
from toolret.llm.steps import LLMSteps
from toolret.results import TraceStep
from toolret.search.planning import (
    MAX_SUBTASKS,
    FieldQueries,
    QueryPlan,
    SubTask,
    plan_offline,
)

__all__ = ["MAX_VARIANTS", "LLMPlan", "PlannedSubTask", "plan_with_llm", "planner_messages"]

logger = logging.getLogger("toolret")

#: Variants per sub-task beyond the sub-task's own text.
MAX_VARIANTS = 3
MAX_ARGS = 6
MAX_TEXT = 300
MAX_REWRITTEN = 1000
#: How much of the request, the chat history and the feedback documents the planner sees.
MAX_QUERY = 2000
MAX_HISTORY = 6
MAX_HISTORY_CHARS = 500
MAX_FEEDBACK = 5


def _clip(value: Any, limit: int = MAX_TEXT) -> str:
    if value is None or isinstance(value, (dict, list, tuple)):
        return ""
    return " ".join(str(value).split())[:limit].rstrip()


def _clip_list(value: Any, limit: int) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        return []
    out: list[str] = []
    seen: set[str] = set()
    for item in value:
        text = _clip(item)
        if text and text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
        if len(out) == limit:
            break
    return out


class PlannedSubTask(BaseModel):
    """One sub-task as the model writes it; oversized or mistyped values are clipped, not rejected."""

    text: str = Field("", max_length=MAX_TEXT, description="this part of the request as a standalone sentence")
    variants: list[str] = Field(default_factory=list, max_length=MAX_VARIANTS, description="other wordings")
    intent: str = Field("", max_length=MAX_TEXT, description="the need, phrased like a user's example question")
    tool_description: str = Field("", max_length=MAX_TEXT, description="one-sentence description of the ideal tool")
    expected_output: str = Field("", max_length=MAX_TEXT, description="what that tool returns")
    extracted_args: list[str] = Field(
        default_factory=list, max_length=MAX_ARGS, description="kinds of input values the request supplies"
    )

    @model_validator(mode="before")
    @classmethod
    def _bare_string_is_text(cls, data: Any) -> Any:
        return {"text": data} if isinstance(data, str) else data

    @field_validator("text", "intent", "tool_description", "expected_output", mode="before")
    @classmethod
    def _clip_text(cls, value: Any) -> str:
        return _clip(value)

    @field_validator("variants", mode="before")
    @classmethod
    def _clip_variants(cls, value: Any) -> list[str]:
        return _clip_list(value, MAX_VARIANTS)

    @field_validator("extracted_args", mode="before")
    @classmethod
    def _clip_args(cls, value: Any) -> list[str]:
        return _clip_list(value, MAX_ARGS)

    @model_validator(mode="after")
    def _text_from_variant(self) -> PlannedSubTask:
        if not self.text and self.variants:
            self.text, self.variants = self.variants[0], self.variants[1:]
        return self


class LLMPlan(BaseModel):
    """The planner's output schema (sent to the server as JSON schema)."""

    rewritten: str = Field("", max_length=MAX_REWRITTEN, description="the request with typos and references fixed")
    subtasks: list[PlannedSubTask] = Field(max_length=MAX_SUBTASKS, description="independent parts of the request")
    step_back: str | None = Field(None, max_length=MAX_TEXT, description="a more general question, or null")

    @field_validator("rewritten", mode="before")
    @classmethod
    def _clip_rewritten(cls, value: Any) -> str:
        return _clip(value, MAX_REWRITTEN)

    @field_validator("step_back", mode="before")
    @classmethod
    def _clip_step_back(cls, value: Any) -> str | None:
        return _clip(value) or None

    @field_validator("subtasks", mode="before")
    @classmethod
    def _clip_subtasks(cls, value: Any) -> Any:
        if isinstance(value, (dict, str)):
            value = [value]
        if not isinstance(value, (list, tuple)):
            return value  # let validation fail, so the model is asked again
        return [item for item in value if isinstance(item, (dict, str))][:MAX_SUBTASKS]


class _Unusable(Exception):
    """The model answered in the schema but with nothing to plan by."""


def planner_messages(
    query: str,
    *,
    history: Sequence[ChatMessage] | None = None,
    feedback_docs: Sequence[str] | None = None,
    n_variants: int = 2,
) -> list[ChatMessage]:
    """The chat messages :func:`plan_with_llm` sends: bounded, with all user and tool text as data."""
    recent = [
        ChatMessage(role=m.role, content=m.content[:MAX_HISTORY_CHARS]) for m in list(history or [])[-MAX_HISTORY:]
    ]
    docs = [_clip(d) for d in list(feedback_docs or [])[:MAX_FEEDBACK]]
    return render(
        PLANNER_V1,
        query=query[:MAX_QUERY],
        history=recent or None,
        feedback=[d for d in docs if d] or None,
        n_variants=_n_variants(n_variants),
    )


def _n_variants(n: int) -> int:
    return max(0, min(MAX_VARIANTS, int(n)))


def _to_plan(query: str, out: LLMPlan, n_variants: int) -> QueryPlan:
    subtasks: list[SubTask] = []
    seen: set[str] = set()
    for planned in out.subtasks:
        text = planned.text
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        others = [v for v in planned.variants if v.lower() != text.lower()][: _n_variants(n_variants)]
        fields = FieldQueries(
            intent=planned.intent,
            tool_description=planned.tool_description,
            expected_output=planned.expected_output,
            extracted_args=planned.extracted_args,
        )
        has_fields = any((fields.intent, fields.tool_description, fields.expected_output, fields.extracted_args))
        subtasks.append(SubTask(text=text, variants=[text, *others], fields=fields if has_fields else None))
    if not subtasks:
        raise _Unusable("the LLM returned no usable sub-task")
    return QueryPlan(
        original=query,
        rewritten=out.rewritten or " ".join(query.split()),
        subtasks=subtasks,
        path="llm",
        step_back=out.step_back,
    )


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _fallback(query: str, exc: Exception, start: float) -> tuple[QueryPlan, TraceStep]:
    reason = str(exc) if isinstance(exc, _Unusable) else f"{type(exc).__name__}: {exc}"
    reason = " ".join(reason.split())[:200]
    logger.warning("LLM query planning failed, using the offline planner: %s", reason)
    plan = plan_offline(query).model_copy(update={"path": "fallback"})
    return plan, TraceStep(stage="plan", path="fallback", ms=_ms(start), note=reason)


def _success(plan: QueryPlan, llm: LLM, start: float) -> tuple[QueryPlan, TraceStep]:
    name = getattr(llm, "name", type(llm).__name__)
    note = f"{len(plan.subtasks)} sub-task(s) by {name} ({PLANNER_V1.id})"
    return plan, TraceStep(stage="plan", path="llm", ms=_ms(start), note=note)


def _skip(query: str, start: float) -> tuple[QueryPlan, TraceStep]:
    return plan_offline(query), TraceStep(stage="plan", path="skipped", ms=_ms(start), note="empty query")


def plan_with_llm(
    query: str,
    llm: LLM,
    *,
    history: list[ChatMessage] | None = None,
    feedback_docs: list[str] | None = None,
    n_variants: int = 2,
    timeout: float = 10.0,
    retries: int = 2,
    steps: LLMSteps | None = None,
) -> tuple[QueryPlan, TraceStep]:
    """Plan ``query`` with ``llm``; on any failure, the offline plan and a ``fallback`` trace step.

    ``history`` (earlier chat turns) lets the model resolve references; ``feedback_docs``
    (e.g. the BM25 top documents of the raw query) shows it the catalogue's vocabulary.
    Each sub-task's variants start with its own text, followed by up to ``n_variants``
    (at most 3) model-written wordings. ``timeout`` bounds the whole call, retries included.
    ``steps`` (``RetrievalConfig.llm_steps``) overrides ``retries`` and may make a malformed
    answer raise instead of falling back.
    """
    steps = steps or LLMSteps()
    start = time.perf_counter()
    if not query.strip():
        return _skip(query, start)
    try:
        messages = planner_messages(query, history=history, feedback_docs=feedback_docs, n_variants=n_variants)
        out = structured_call(llm, messages, LLMPlan, timeout=timeout, retries=steps.retries_or(retries))
        return _success(_to_plan(query, out, n_variants), llm, start)
    except Exception as exc:  # planning never fails a search, unless steps.on_malformed says so  # noqa: BLE001
        steps.reraise(exc)
        return _fallback(query, exc, start)
