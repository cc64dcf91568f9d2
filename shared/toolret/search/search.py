"""One search: a typed request in, a typed result out, the stages as methods over one typed state.

``ToolKnowledgeBase.begin_search`` turns a :class:`SearchRequest` (what ``kb.search`` takes) into
a :class:`Search` over the knowledge base's current snapshot; :meth:`Search.run` runs the stages
and returns the :class:`~toolret.results.SearchResult`. The stage order is written here
(:meth:`Search.next_stage`) and nowhere else, so a search is the same whichever way it is driven:
``kb.search`` calls :meth:`Search.run`, and the LangGraph subgraph of :mod:`langchain_toolret`
makes each stage a graph node that calls :meth:`Search.run_stage` and asks :meth:`Search.next_stage`
for its edge. What the stages do is in :mod:`toolret.search.stages`; what they share is the
:class:`~toolret.search.state.SearchState` (named fields, no tuples).

Each stage is timed by itself (:attr:`Search.stage_ms`, wall milliseconds summed over the rounds
of the reflection loop), beside the finer steps the stages write into the result's trace.

Example:
    >>> from toolret import ToolKnowledgeBase
    >>> kb = ToolKnowledgeBase.from_tools([{"name": "get_weather", "description": "Weather for a city"}])
    >>> search = kb.begin_search("weather in Paris", k=1, config="balanced")
    >>> stage = search.next_stage(None)
    >>> while stage is not None:
    ...     search.run_stage(stage)
    ...     stage = search.next_stage(stage)
    >>> search.finish().ids, list(search.stage_ms)
    (['get_weather'], ['plan', 'retrieve', 'fuse', 'rerank', 'reflect'])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from typing_extensions import TypedDict

from toolret.config import K, RetrievalConfig, validate_k
from toolret.errors import QueryError
from toolret.index.embedding import Embedder
from toolret.index.snapshot import Snapshot
from toolret.results import ScoredTool, SearchResult
from toolret.scope.tool_scope import ToolScope, restriction
from toolret.search.conversation import as_chat_history
from toolret.search.query_text import QueryText, informative_query
from toolret.search.stages import (
    finish_search,
    stage_fuse,
    stage_plan,
    stage_reflect,
    stage_requery,
    stage_rerank,
    stage_retrieve,
)
from toolret.search.state import SearchState
from toolret.search.token_budget import validate_budget

__all__ = ["Search", "SearchOptions", "SearchRequest", "StageName", "begin", "checked_query"]

StageName = Literal["plan", "retrieve", "fuse", "rerank", "reflect", "requery"]


@dataclass(frozen=True)
class SearchRequest:
    """What one search asks for; ``kb.search(query, k, **options)`` builds one from its arguments.

    Attributes:
        query: the request, untrusted text (a long paste is cut to its informative part).
        k: how many tools to return, or ``"auto"`` for a precise set (the tools near the best
            score and each sub-task's best, at most ``config.auto_k.max_k``).
        config: a preset name or :class:`~toolret.config.RetrievalConfig`; None: the knowledge base's.
        conversation: the chat before ``query`` (chat messages, role/content mappings or pairs;
            :mod:`toolret.search.conversation`): the LLM planner resolves "book a table *there*"
            with it; offline searches ignore it.
        llm: this search's model instead of the knowledge base's.
        token_budget: the chosen tools' definitions fit this many tokens, best tools first.
        definition: tool -> its definition as bound (default the stored one): what the budget
            counts; a tool whose definition raises is left out with a warning.
        allowed_ids: only these tools may be returned (an agent's own tools in a shared knowledge
            base); every stage searches among them, and an unknown id is a ToolNotFoundError.
        where: only tools whose metadata fits this :class:`~toolret.scope.tool_scope.ToolScope` (or
            mapping of its fields: ``sources``, ``namespaces``, ``tags``, ``read_only``,
            ``destructive``, ``metadata``) may be returned, applied like ``allowed_ids`` (both: both
            hold); a malformed scope is a ScopeError, and a scope no tool fits returns no tools.
    """

    query: str
    k: K = 5
    config: RetrievalConfig | str | None = None
    conversation: Iterable[Any] | None = None
    llm: Any = None
    token_budget: int | None = None
    definition: Callable[[ScoredTool], Any] | None = None
    allowed_ids: Collection[str] | None = None
    where: ToolScope | Mapping[str, Any] | None = None


class SearchOptions(TypedDict, total=False):
    """The keyword options of ``kb.search``/``asearch``/``begin_search``: :class:`SearchRequest`'s
    fields after ``query`` and ``k`` (a test keeps the two lists equal)."""

    config: RetrievalConfig | str | None
    conversation: Iterable[Any] | None
    llm: Any
    token_budget: int | None
    definition: Callable[[ScoredTool], Any] | None
    allowed_ids: Collection[str] | None
    where: ToolScope | Mapping[str, Any] | None


def checked_query(query: object, config: RetrievalConfig) -> QueryText:
    """The text a search runs on, after checking it (``k`` is :func:`validate_k`'s, checked next).

    A query over ``config.max_query_chars`` or holding blobs is not refused: its informative
    part is searched (:func:`toolret.search.query_text.informative_query`) and
    :meth:`QueryText.trace` says so in the result's trace.
    """
    if not isinstance(query, str):
        raise QueryError(f"query must be a string, not {type(query).__name__}")
    text = informative_query(query, config.max_query_chars)
    if not text.text:
        raise QueryError("query is empty")
    return text


class Search:
    """A begun search: the request, its state, and the stages to run over it.

    Build it with ``ToolKnowledgeBase.begin_search`` (which validates the request against the
    snapshot); run it with :meth:`run`, or stage by stage with :meth:`next_stage` and
    :meth:`run_stage`, then :meth:`finish`.
    """

    #: Every stage, in first-pass order; each reads and extends :attr:`state`.
    STAGES: ClassVar[tuple[StageName, ...]] = ("plan", "retrieve", "fuse", "rerank", "reflect", "requery")
    _RUN: ClassVar[dict[StageName, Callable[[SearchState], Any]]] = {
        "plan": stage_plan,
        "retrieve": stage_retrieve,
        "fuse": stage_fuse,
        "rerank": stage_rerank,
        "reflect": stage_reflect,
        "requery": stage_requery,
    }

    def __init__(self, request: SearchRequest, state: SearchState) -> None:
        self.request = request
        self.state = state
        #: Wall milliseconds of each stage that ran, measured around the stage alone.
        self.stage_ms: dict[StageName, float] = {}

    def next_stage(self, done: StageName | None) -> StageName | None:
        """The stage to run after ``done`` (``None``: the first), or ``None`` when only finishing is left.

        plan -> retrieve -> fuse -> rerank -> reflect, then while reflection found uncovered
        sub-tasks: requery (those sub-tasks, searched again) -> reflect, bounded by ``reflection.rounds``.
        """
        following: dict[StageName | None, StageName] = {
            None: "plan",
            "plan": "retrieve",
            "retrieve": "fuse",
            "fuse": "rerank",
            "rerank": "reflect",
            "requery": "reflect",
        }
        if done == "reflect":
            return "requery" if self.state.pending is not None else None
        return following[done]

    def run_stage(self, stage: StageName) -> None:
        """Run one stage on the state and add its time to :attr:`stage_ms`."""
        start = time.perf_counter()
        self._RUN[stage](self.state)
        self.stage_ms[stage] = self.stage_ms.get(stage, 0.0) + (time.perf_counter() - start) * 1000

    def run_stages(self) -> None:
        """Run every stage in order (the reflection loop included), without finishing."""
        stage = self.next_stage(None)
        while stage is not None:
            self.run_stage(stage)
            stage = self.next_stage(stage)

    def finish(self) -> SearchResult:
        """The result of the stages run so far: the top k, or ``k="auto"``'s precise set."""
        return finish_search(self.state)

    def run(self) -> SearchResult:
        """Run every stage, then finish: what ``kb.search`` returns."""
        self.run_stages()
        return self.finish()

    async def arun(self) -> SearchResult:
        """:meth:`run` without blocking the event loop: the same stages, in a worker thread."""
        import asyncio  # here, not at the top: a synchronous search never loads asyncio (cold start)

        return await asyncio.to_thread(self.run)


def begin(
    request: SearchRequest,
    *,
    snapshot: Snapshot,
    embedder: Embedder,
    config: RetrievalConfig | None,
    llm: Any = None,
    memory: Any = None,
    cross_encoders: Callable[[], Any] | None = None,
    enclosing_scope: ToolScope | None = None,
) -> Search:
    """Assemble one search from ``request`` and what the knowledge base holds at this moment.

    The config resolves (the request's, else the knowledge base's ``config``), the query and ``k``
    are checked (:func:`checked_query`), the restriction is computed once from ``allowed_ids``,
    ``where`` and ``enclosing_scope`` (the caller's :func:`~toolret.scope.tool_scope.scoped` block,
    passed explicitly: nothing below reads it), and the state every stage reads is built.
    ``memory`` is the knowledge base's :class:`~toolret.memory.usage_log.UsageLog`;
    ``cross_encoders`` returns its :class:`~toolret.search.rerank.CrossEncoderCache`, called only when
    the config names a cross-encoder (a search without one never imports the reranker).
    """
    cfg = RetrievalConfig.resolve(request.config, config)
    text = checked_query(request.query, cfg)
    k = validate_k(request.k, cfg)
    auto = k == "auto"
    allowed, restricted = restriction(snapshot, request.allowed_ids, request.where, enclosing_scope)
    state = SearchState(
        snap=snapshot,
        embedder=embedder,
        query=text.text,
        trace=text.trace() + restricted,
        k=cfg.auto_k.max_k if auto else int(k),
        config=cfg,
        llm=llm if request.llm is None else request.llm,
        memory=memory.history if memory is not None else None,
        cross_encoder=cross_encoders().get(cfg)
        if cross_encoders and cfg.reranker != "none" and cfg.cross_encoder
        else None,
        auto=auto,
        conversation=as_chat_history(request.conversation),
        token_budget=validate_budget(request.token_budget),
        definition=request.definition,
        allowed=allowed,
        learned=memory.learned if memory is not None and cfg.memory.use_learned else None,
    )
    return Search(request, state)
