"""The one pipeline driver: which stage runs after which, for every caller.

``ToolKnowledgeBase.search`` and ``asearch`` run :func:`drive`; the LangGraph subgraph of
:mod:`langchain_toolret` makes each of :data:`STAGES` a graph node and routes between them with
:func:`next_stage`. The stage order is written here and nowhere else, so a search is the same
whichever way it is driven.

Example:
    >>> from toolret import ToolKnowledgeBase
    >>> kb = ToolKnowledgeBase.from_tools([{"name": "get_weather", "description": "Weather for a city"}])
    >>> state = kb.begin_search("weather in Paris", k=1, config="balanced")
    >>> stage = next_stage(None, state)
    >>> while stage is not None:
    ...     _ = STAGES[stage](state)
    ...     stage = next_stage(stage, state)
    >>> finish_search(state).ids
    ['get_weather']
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any, Literal

from typing_extensions import TypedDict

from toolret.config import RetrievalConfig
from toolret.results import ScoredTool, SearchResult
from toolret.retrieval.pipeline import (
    SearchState,
    finish_search,
    stage_fuse,
    stage_plan,
    stage_reflect,
    stage_rerank,
    stage_retrieve,
)

__all__ = ["STAGES", "SearchOptions", "StageName", "drive", "finish_search", "next_stage"]

StageName = Literal["plan", "retrieve", "fuse", "rerank", "reflect"]


class SearchOptions(TypedDict, total=False):
    """Keyword options of ``ToolKnowledgeBase.search`` and ``asearch`` (``begin_search`` documents them)."""

    config: RetrievalConfig | str | None
    conversation: Iterable[Any] | None
    llm: Any
    token_budget: int | None
    definition: Callable[[ScoredTool], Any] | None
    allowed_ids: Collection[str] | None


#: Every stage by name; each reads and extends one :class:`SearchState`.
STAGES: dict[StageName, Callable[[SearchState], Any]] = {
    "plan": stage_plan,
    "retrieve": stage_retrieve,
    "fuse": stage_fuse,
    "rerank": stage_rerank,
    "reflect": stage_reflect,
}


def next_stage(done: StageName | None, state: SearchState) -> StageName | None:
    """The stage to run after ``done`` (``None``: the first), or ``None`` when only finishing is left.

    plan -> retrieve -> fuse -> rerank -> reflect, then while reflection found uncovered
    sub-tasks: retrieve (a re-query of those) -> reflect again, bounded by ``reflect_rounds``.
    """
    if done is None:
        return "plan"
    if done == "plan":
        return "retrieve"
    if done == "retrieve":
        return "reflect" if state.requeried else "fuse"
    if done == "fuse":
        return "rerank"
    if done == "rerank":
        return "reflect"
    return "retrieve" if state.requerying else None


def drive(state: SearchState) -> SearchResult:
    """Run every stage in order on ``state`` and return the result."""
    stage = next_stage(None, state)
    while stage is not None:
        STAGES[stage](state)
        stage = next_stage(stage, state)
    return finish_search(state)
