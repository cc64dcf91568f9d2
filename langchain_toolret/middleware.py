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
  shortened or by name, with a warning naming it; it never switches selection off, and a tool
  that cannot be bound (``bind_tools`` would raise) is left out of the call with a warning
  naming it, the trace's ``definitions`` step too, instead of ending the turn;
* ``token_budget=`` keeps the turn's tool definitions within that many tokens;
* a failing selector never breaks the agent: it logs and offers the ``fallback`` set, at most
  ``tool_limit`` tools (128, the provider limit);
* every selection is a child run named ``ToolSelectionMiddleware`` in LangSmith / callbacks,
  with the query, the chosen tools, their scores and the engine's trace as outputs;
* ``condensed_descriptions=True`` (opt-in) hands the model copies of the tools whose
  description is the condensed card's text (:mod:`langchain_toolret.condensed`), in fewer tokens.

The first call indexes ``request.tools`` (an in-memory knowledge base, cached by content
hash; a changed tool set re-embeds only the tools that changed; :meth:`warmup` does it ahead);
pass ``knowledge_base=`` to use one you built instead. Migrating from
``LLMToolSelectorMiddleware``: change the class name; every keyword it takes is accepted
(``model``, ``system_prompt``, ``max_tools``, ``always_include``, ``max_retries``,
``on_parsing_failure``; see the class doc for what each means here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from langchain.agents.middleware import AgentState, ModelRequest
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from typing_extensions import NotRequired

from langchain_toolret.conversation import conversation_query, current_turn, earlier_turns, tool_results, turn_key
from langchain_toolret.llm import resolve_chat_model
from langchain_toolret.narrowing import DEFAULT_TOOL_LIMIT, Fallback, NarrowingMiddleware, Step
from langchain_toolret.scope import ScopeSource
from toolret import ConfigError, K, QueryError, RetrievalConfig, SearchResult, ToolKnowledgeBase, validate_k
from toolret.llm.protocol import MalformedOutputError
from toolret.llm.selector_options import with_selector_options

__all__ = ["OnParsingFailure", "ToolSelectionMiddleware", "ToolSelectionState"]

_KEY = "toolret_selection"
#: ``max_tools`` not passed (``None`` passed means LangChain's "no fixed cap": ``k="auto"``).
_UNSET: Any = object()
#: LangChain's ``on_parsing_failure``: what the turn gets when the LLM's answer stays malformed.
OnParsingFailure = Literal["error", "none", "all"] | Sequence[str] | Callable[[Any], Sequence[str]]


class ToolSelectionState(AgentState[Any]):
    """Agent state plus the turn's pinned selection ``{"turn", "query", "tools"}`` (private)."""

    toolret_selection: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]


class ToolSelectionMiddleware(NarrowingMiddleware):
    """Narrow each model call's tools to those toolret retrieves for the current user turn.

    Args:
        k: tools to select per turn (or ``"auto"`` for a precise set).
        max_tools: the same as ``k``, under ``LLMToolSelectorMiddleware``'s name (pass one);
            ``max_tools=None`` is LangChain's "no fixed cap": ``k="auto"``.
        knowledge_base: a prebuilt :class:`toolret.ToolKnowledgeBase` holding every agent tool
            (a missing one is a ``KnowledgeBaseError`` naming it; extra ones are never offered);
            default: index ``request.tools`` on first use.
        config: retrieval preset or ``RetrievalConfig`` (default ``"full"`` when ``llm`` is
            given, else ``"fast"``).
        llm: a LangChain chat model (or toolret LLM) for the engine's LLM steps.
        model: the same as ``llm``, under ``LLMToolSelectorMiddleware``'s name; a
            ``"provider:model"`` string is resolved by LangChain's ``init_chat_model``. Unlike
            there, no model means no LLM (retrieval only), not the agent's model.
        system_prompt: instructions added to the LLM's selection step (the rerank's system prompt).
        max_retries: retries of an LLM step whose structured output is malformed (default:
            the step's own, 1 or 2).
        on_parsing_failure: what the turn gets when that output stays malformed: ``"error"``
            raises :class:`~toolret.llm.MalformedOutputError`, ``"none"`` offers only
            ``always_include``, ``"all"`` every tool, a list those names, a function of the
            model's last answer (its raw text) the names it returns. Default: the step runs
            its offline path and the search goes on (trace: ``fallback``).
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
        token_budget: tokens the turn's tool definitions may take, as they are bound (condensed
            or not; the ``always_include`` and ``search_tools`` tools counted first): the best
            selected tools that fit (:mod:`toolret.retrieval.definitions`; the ``definitions``
            trace step gives the tokens used and the counter). Works with ``k="auto"``.
        scope: the request's tool scope (:mod:`langchain_toolret.scope`): the name of the runtime
            context's key or attribute holding a :class:`~toolret.ToolScope`, a function of the context,
            or a fixed scope. Every search runs within it, no tool outside it is bound or run; a
            context without it is a :class:`~toolret.ScopeError`.

    Example::

        agent = create_agent(model, tools=all_tools,
                             middleware=[ToolSelectionMiddleware(k=5, always_include=["ask_user"])])
    """

    state_schema = ToolSelectionState

    def __init__(
        self,
        k: K | None = None,
        *,
        max_tools: int | None = _UNSET,
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
        model: str | BaseChatModel | None = None,
        system_prompt: str | None = None,
        max_retries: int | None = None,
        on_parsing_failure: OnParsingFailure | None = None,
        token_budget: int | None = None,
        scope: ScopeSource | None = None,
    ) -> None:
        limit = None if max_tools is _UNSET else ("auto" if max_tools is None else max_tools)
        if k is not None and limit is not None and k != limit:
            raise QueryError(f"pass k= or max_tools= (the same setting), not both ({k!r} and max_tools={max_tools!r})")
        k = validate_k(next((v for v in (k, limit) if v is not None), 5))
        if model is not None and llm is not None:
            raise ConfigError("pass model= or llm= (the same setting: the LLM of the selection), not both")
        llm = resolve_chat_model(model) if model is not None else llm
        config = with_selector_options(  # LangChain's options, in the engine's llm_steps
            config,
            knowledge_base.config if knowledge_base is not None else None,
            llm,
            system_prompt=system_prompt,
            max_retries=max_retries,
            on_parsing_failure=on_parsing_failure,
        )
        super().__init__(
            knowledge_base=knowledge_base,
            config=config,
            llm=llm,
            embedder=embedder,
            always_include=always_include or (),
            search_tool=search_tool,
            search_k=search_k,
            fallback=fallback,
            condensed_descriptions=condensed_descriptions,
            tool_limit=tool_limit,
            token_budget=token_budget,
            scope=scope,
        )
        self.k: K = k
        self.query_builder = query_builder
        #: LangChain's ``on_parsing_failure`` (None: a malformed answer takes the offline path).
        self.on_parsing_failure = on_parsing_failure

    def _fallback(
        self, request: ModelRequest[Any], exc: BaseException, fallback: Fallback | None = None
    ) -> ModelRequest[Any]:
        """A malformed LLM answer gets ``on_parsing_failure``'s tools (or raises); else the base fallback."""
        policy = self.on_parsing_failure
        if policy is None or not isinstance(exc, MalformedOutputError):
            return super()._fallback(request, exc, fallback)
        if policy == "error":
            raise exc
        if policy in ("none", "all"):
            return super()._fallback(request, exc, "always_include" if policy == "none" else "all")
        names = policy(exc.raw) if callable(policy) else policy
        return super()._fallback(request, exc, [*self.always_include, *names])

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
