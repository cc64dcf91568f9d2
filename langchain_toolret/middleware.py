"""``ToolSelectionMiddleware``: hand a ``create_agent`` model only the tools the turn needs.

``create_agent(model, tools=ALL, middleware=[ToolSelectionMiddleware(k=5)])`` is the whole
set-up. Before each model call the middleware narrows ``request.tools`` to the tools toolret
retrieves for the conversation. Compared with LangChain's ``LLMToolSelectorMiddleware``:

* selection is retrieval (milliseconds, no tokens); an LLM step runs only when configured
  (``llm=``, which turns on ``config="full"``);
* the query is the latest user message and its selection is the turn's; earlier turns only
  add tools when it is a follow-up ("and in Fahrenheit?", "book a table *there*"; a pronoun
  alone is not one; :meth:`~langchain_toolret.index.ToolIndex.search_turn`), and never
  displace the message's well-matched tools — "is it raining in Oslo?" after "send an email
  to Bob" does not inherit the e-mail tool;
* the selection is pinned for the user turn: every model call of the tool loop gets the same
  tools in the same order (no re-selection, a stable prompt prefix for provider caching),
  and a new user message selects again;
* ``always_include`` tools are always offered; ``search_tool=True`` adds a ``search_tools``
  tool the model can call to widen its set for the rest of the turn;
* one bad tool (a 100,000-character description, a schema that does not convert) is indexed
  shortened or by name, with a warning naming it; it never switches selection off;
* a failing selector never breaks the agent: it logs and offers the ``fallback`` set, at most
  ``tool_limit`` tools (128, the provider limit);
* every selection is a child run named ``ToolSelectionMiddleware`` in LangSmith / callbacks,
  with the query, the chosen tools, their scores and the engine's trace as outputs;
* ``condensed_descriptions=True`` (opt-in) hands the model copies of the tools whose
  description is the condensed card's text (:mod:`langchain_toolret.condensed`), in fewer tokens.

The first call indexes ``request.tools`` (an in-memory knowledge base, cached by content
hash; a changed tool set re-embeds only the tools that changed; :meth:`warmup` does it ahead);
pass ``knowledge_base=`` to use one you built instead. Migrating from
``LLMToolSelectorMiddleware(max_tools=3, always_include=[...])``: change the class name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from langchain.agents.middleware import AgentState, ModelRequest
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import BaseMessage
from typing_extensions import NotRequired

from langchain_toolret.conversation import conversation_query, current_turn, earlier_turns, tool_results, turn_key
from langchain_toolret.narrowing import DEFAULT_TOOL_LIMIT, Fallback, NarrowingMiddleware, Step
from langchain_toolret.options import config_argument
from toolret import K, QueryError, RetrievalConfig, SearchResult, ToolKnowledgeBase, validate_k

__all__ = ["ToolSelectionMiddleware", "ToolSelectionState"]

_KEY = "toolret_selection"


class ToolSelectionState(AgentState[Any]):
    """Agent state plus the turn's pinned selection ``{"turn", "query", "tools"}`` (private)."""

    toolret_selection: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]


class ToolSelectionMiddleware(NarrowingMiddleware):
    """Narrow each model call's tools to those toolret retrieves for the current user turn.

    Args:
        k: tools to select per turn (or ``"auto"`` for a precise set).
        max_tools: the same as ``k``, under ``LLMToolSelectorMiddleware``'s name (pass one).
        knowledge_base: a prebuilt :class:`toolret.ToolKnowledgeBase` holding every agent tool
            (a missing one is a ``KnowledgeBaseError`` naming it; extra ones are never offered);
            default: index ``request.tools`` on first use.
        config: retrieval preset or ``RetrievalConfig`` (default ``"full"`` when ``llm`` is
            given, else ``"fast"``); ``preset=`` is its deprecated name.
        llm: a LangChain chat model (or toolret LLM) for the engine's LLM steps.
        embedder: the embedding model for an indexed-on-first-use knowledge base.
        always_include: tool names offered on every call, outside the ``k``.
        search_tool: add the ``search_tools`` escape hatch (``True``, or the tool's name).
        search_k: tools one ``search_tools`` call returns.
        fallback: tools offered when selection fails: ``"all"``, ``"always_include"`` or names.
        tool_limit: most tools one model call is sent, the fallback included (default 128).
        query_builder: conversation → query; default: the latest user message, with the
            follow-up rule of :meth:`~langchain_toolret.index.ToolIndex.search_turn` (a custom
            builder's query is searched as it is).
        condensed_descriptions: bind copies of the tools described by
            :func:`toolret.cards.card.agent_description` instead of their raw descriptions (the
            ``always_include`` tools too: they are sent on every call, so they save the most;
            the ``search_tools`` tool keeps its own). The tools you passed are not modified.

    Example::

        agent = create_agent(model, tools=all_tools,
                             middleware=[ToolSelectionMiddleware(k=5, always_include=["ask_user"])])
    """

    state_schema = ToolSelectionState

    def __init__(
        self,
        k: K | None = None,
        *,
        max_tools: int | None = None,
        knowledge_base: ToolKnowledgeBase | None = None,
        config: str | RetrievalConfig | None = None,
        llm: Any = None,
        embedder: Any = None,
        always_include: Sequence[str] | None = (),
        search_tool: bool | str = False,
        search_k: int = 5,
        fallback: Fallback = "all",
        tool_limit: int = DEFAULT_TOOL_LIMIT,
        query_builder: Callable[[list[BaseMessage]], str | None] | None = None,
        condensed_descriptions: bool = False,
        preset: str | RetrievalConfig | None = None,
    ) -> None:
        if k is not None and max_tools is not None and k != max_tools:
            raise QueryError(f"pass k= or max_tools= (the same setting), not both ({k!r} and {max_tools!r})")
        k = validate_k(next((v for v in (k, max_tools) if v is not None), 5))
        super().__init__(
            knowledge_base=knowledge_base,
            config=config_argument(config, preset, type(self).__name__),
            llm=llm,
            embedder=embedder,
            always_include=always_include or (),
            search_tool=search_tool,
            search_k=search_k,
            fallback=fallback,
            condensed_descriptions=condensed_descriptions,
            tool_limit=tool_limit,
        )
        self.k: K = k
        self.query_builder = query_builder

    def _prepare(self, request: ModelRequest[Any], step: Step) -> None:
        messages: list[BaseMessage] = list(request.messages)
        turn = turn_key(messages)
        pinned: Any = dict(request.state).get(_KEY) if isinstance(request.state, dict) else None
        if pinned and turn is not None and pinned.get("turn") == turn:
            step.data["names"] = list(pinned.get("tools", []))
        else:
            step.query = (self.query_builder or conversation_query)(messages)
            if not step.query:
                raise QueryError("the conversation has no user message to select tools for")
            step.k = self.k
            if self.query_builder is None:
                step.messages = messages
            else:  # a custom query is searched as it is; an LLM planner still reads the chat before it
                step.data["conversation"] = earlier_turns(messages)
        step.data["turn"] = turn
        step.data["discovered"] = [
            str(name)
            for message in (
                tool_results(current_turn(messages), self.search_tool_name) if self.search_tool_name else []
            )
            if isinstance(message.artifact, list)
            for name in message.artifact
        ]

    def _finish(
        self, request: ModelRequest[Any], step: Step, result: SearchResult | None
    ) -> tuple[list[str], dict[str, Any] | None]:
        update = None
        if result is not None:
            names = [t.name for t in self.index.live(result, query=step.query)]
            update = {_KEY: {"turn": step.data["turn"], "query": step.query, "tools": names}}
        else:
            names = step.data["names"]
        return [*names, *step.data["discovered"]], update
