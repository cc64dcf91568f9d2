"""One agent's tools over a knowledge base: indexed, kept in step, searched, handed back as live objects.

Every adapter needs the same things: index an agent's tools (once, and again only when the set
changes), search among them, and turn retrieved ids back into the tool objects the agent calls.
:class:`AgentTools` does that for any framework; an adapter subclasses it with its conversion
(:meth:`AgentTools.convert`, usually :func:`toolret.sources.tolerant.tolerant_docs`) and its way
of reading a conversation. The retrieval itself is :meth:`toolret.ToolKnowledgeBase.search`, the
id → tool map the engine's :class:`~toolret.index.live_tools.LiveTools`, the "did the tool set
change" test :func:`~toolret.index.persistence.registry_hash`, the follow-up rule
:func:`~toolret.search.follow_up.add_context` and what can be bound
:func:`~toolret.search.token_budget.fit_definitions`.

Nothing here changes which tools the model gets in silence:

* a knowledge base given by the user that lacks some of the agent's tools is an error naming
  them (they could never be offered); one holding tools the agent lacks is searched among the
  agent's tools only (``allowed_ids``), with a warning naming the others;
* before an agent's tools are bound, the knowledge base's own live tools are read (those
  ``kb.add`` or ``kb.bind`` attached), and a retrieved tool with no live object raises what
  ``kb.tool()`` raises (:class:`~toolret.errors.ToolNotAttachedError`: bind the live tools), never
  an empty tool list;
* a tool that could not be indexed at all is offered when a request names it exactly.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from toolret.config import K, RetrievalConfig
from toolret.documents.tokens import token_counter
from toolret.documents.tool_doc import ToolDoc
from toolret.errors import ConfigError, KnowledgeBaseError, ToolNotFoundError
from toolret.index.live_tools import LiveTools
from toolret.index.persistence import registry_hash
from toolret.knowledge_base import ToolKnowledgeBase
from toolret.results import ScoredTool, SearchResult
from toolret.search.conversation import as_chat_history, before_latest, latest_request
from toolret.search.follow_up import add_context
from toolret.search.search import Search
from toolret.search.token_budget import DefinitionCache, definition_text, fit_definitions
from toolret.sources.ingest import to_tool_doc

__all__ = ["AgentTools", "attach", "names_text", "persist_to", "warm_up"]

logger = logging.getLogger("toolret")
_Tools = TypeVar("_Tools", bound="AgentTools")


class AgentTools:
    """A knowledge base plus an id → live tool map, kept in step with one agent's tool set.

    * ``AgentTools()`` owns an in-memory knowledge base and indexes the tools given to
      :meth:`ensure`; a changed tool set is synced (only new or changed tools are embedded) and
      an unchanged one costs a hash. The live tools are the knowledge base's own.
    * ``AgentTools(kb)`` uses a knowledge base you built (possibly persisted, or holding more
      tools than the agent has): :meth:`ensure` never writes to it and binds the agent's tools in
      a map of this object's own (agents sharing one knowledge base never see each other's tool
      objects). Before that, the knowledge base's own live tools are read.

    ``config`` (a preset name or ``RetrievalConfig``) applies to every search through this
    object without changing a given knowledge base's own; with an ``llm`` and no ``config`` it is
    ``"full"`` (:meth:`toolret.RetrievalConfig.for_llm`).
    """

    def __init__(
        self,
        knowledge_base: ToolKnowledgeBase | None = None,
        *,
        config: RetrievalConfig | str | None = None,
        embedder: Any = None,
        llm: Any = None,
    ) -> None:
        self.owned = knowledge_base is None
        config = RetrievalConfig.for_llm(config, llm)
        #: The retrieval config of every search through this object (None: the knowledge base's).
        self.config = None if config is None else RetrievalConfig.resolve(config)
        #: The LLM of searches through this object (None: the knowledge base's).
        self.llm = llm
        if knowledge_base is None:
            knowledge_base = ToolKnowledgeBase(embedder=embedder, config=config, llm=llm)
        self.kb = knowledge_base
        #: id/name → live tool: the knowledge base's map until an agent's own tools are bound.
        self.live_tools: LiveTools = knowledge_base.live_tools
        #: True once the live tools are the agent's (owned, or :meth:`ensure` bound them).
        self.bound = self.owned
        #: Tools that could not be indexed at all (invalid name): offered only when named exactly.
        self.unindexed: dict[str, Any] = {}
        #: Tools of the knowledge base the agent does not have (never searched, never returned).
        self.foreign: frozenset[str] = frozenset()
        #: The ids a search may return when the knowledge base holds foreign tools (``allowed_ids``).
        self.allowed: tuple[str, ...] | None = None
        #: Each tool's definition as the framework sends it (an adapter sets its own; default: the tool's document's).
        self.definitions = DefinitionCache(
            lambda t: to_tool_doc(t).definition(), is_tool=lambda t: True, name=lambda t: str(getattr(t, "name", t))
        )
        self._identity: tuple[int, ...] | None = None
        self._content: str | None = None
        self._lock = threading.Lock()

    def share(self, view: AgentTools) -> None:
        """Make ``view`` (the same knowledge base under another config or LLM) read this object's tools."""
        view.owned, view.bound, view.live_tools, view.unindexed = (
            self.owned,
            self.bound,
            self.live_tools,
            self.unindexed,
        )
        view.foreign, view.allowed, view.definitions = self.foreign, self.allowed, self.definitions

    def view(self: _Tools, config: RetrievalConfig | str | None = None, llm: Any = None) -> _Tools:
        """This object's tools under another ``config`` or ``llm`` (what is not given is this object's), sharing
        its knowledge base, live tools and definitions (:meth:`share`); itself when neither is given."""
        if config is None and llm is None:
            return self
        view = type(self)(self.kb, config=config or self.config, llm=llm if llm is not None else self.llm)
        self.share(view)
        return view

    # ------------------------------------------------------------------ for subclasses
    def convert(self, tools: Iterable[Any]) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
        """Documents for ``tools``, the id → live tool map of the indexed ones and the name → tool
        map of those that could not be indexed. Default: the engine's ingestion, no degradation."""
        docs = [to_tool_doc(t) for t in tools]
        return docs, {d.id: t for d, t in zip(docs, tools)}, {}

    def name_of(self, tool: Any) -> str:
        """The name the model calls ``tool`` by: its ``name``, else its document's (a function, a dict)."""
        name = getattr(tool, "name", None)
        return name if isinstance(name, str) and name else to_tool_doc(tool).name

    # ------------------------------------------------------------------ keeping in step
    def add(self, tools: Iterable[Any]) -> list[str]:
        """Add tools to the knowledge base (an existing id is replaced); returns their ids."""
        docs, live, unindexed = self.convert(list(tools))
        with self._lock:
            ids = self.kb.add(docs, upsert=True)
            self.live_tools.update(live)
            self.unindexed.update(unindexed)
            self._identity = None
        return ids

    def ensure(self, tools: Sequence[Any]) -> bool:
        """Make this object serve exactly ``tools``; returns True when it had to re-index.

        Cheap when nothing changed: the same tool objects are recognised by identity, equal
        content by :func:`~toolret.index.persistence.registry_hash`. An owned knowledge base is
        synced to the new set; a given one is checked against it (see the class doc).
        """
        identity = tuple(id(t) for t in tools)
        with self._lock:
            if identity == self._identity:
                return False
            if not self.owned:
                self._bind_to_given(tools)
                self._identity = identity
                return False
            docs, live, unindexed = self.convert(tools)
            content = registry_hash(docs)
            reindex = content != self._content
            if reindex:
                self.kb.sync(docs)
            self.live_tools.keep(live)
            self.live_tools.update(live)
            self.unindexed = unindexed
            self._identity, self._content = identity, content
            return reindex

    def _bind_to_given(self, tools: Sequence[Any]) -> None:
        held = {d.name: d.id for d in self.kb.docs()}
        names = [self.name_of(t) for t in tools]
        missing = [n for n in names if n not in held and n not in self.kb]
        if missing:
            raise KnowledgeBaseError(
                f"knowledge_base= lacks {len(missing)} of the agent's {len(names)} tools "
                f"({names_text(missing)}): they could never be offered. Add them (kb.add(tools)), "
                "or leave knowledge_base= out to index the agent's own tools"
            )
        foreign = frozenset(held) - set(names)
        if foreign and foreign != self.foreign:
            logger.warning(
                "knowledge_base= holds %d tools the agent does not have (%s); searches leave them out",
                len(foreign),
                names_text(sorted(foreign)),
            )
        self.foreign = foreign
        self.allowed = tuple(dict.fromkeys(held.get(n, n) for n in names)) if foreign else None
        self.live_tools = LiveTools()
        self.live_tools.update(
            {held.get(n, n): t for n, t in zip(names, tools)}, names={held.get(n, n): n for n in names}
        )
        self.bound = True

    async def aensure(self, tools: Sequence[Any]) -> bool:
        """:meth:`ensure` off the event loop (embedding new tools takes a while)."""
        if tuple(id(t) for t in tools) == self._identity:
            return False
        return await asyncio.to_thread(self.ensure, tools)

    # ------------------------------------------------------------------ reading
    def tool(self, name: str) -> Any:
        """The live tool named ``name`` (a knowledge-base id or name), or None."""
        return self.live_tools.by_name(name) or self.unindexed.get(name)

    def check_always_include(self, names: Sequence[str], owner: str) -> None:
        """Raise :class:`toolret.ConfigError` naming each of ``names`` that is no tool here.

        ``always_include`` names go into the selection unsearched, and a model node binds only
        names it knows: a misspelt one would quietly leave the model without a tool the developer
        meant it to have on every call (LangChain's LLMToolSelectorMiddleware raises the same way).
        """
        missing = [n for n in names if self.tool(n) is None and n not in self.kb]
        if missing:
            known = {d.name for d in self.kb.docs()}
            missing = [n for n in missing if n not in known]
        if missing:
            raise ConfigError(f"{owner}: always_include names tools this index does not have: {missing}")

    @property
    def tools(self) -> list[Any]:
        return [tool for _, tool in self.live_tools.items()] + list(self.unindexed.values())

    def _live_tool(self, scored: ScoredTool) -> Any:
        return self.live_tools.get(scored.id) or self.live_tools.by_name(scored.name)

    def live(self, result: SearchResult, *, query: str | None = None) -> list[Any]:
        """The live tools of a search result, best first.

        Before an agent's tools are bound, a retrieved tool without a live object raises what
        :meth:`toolret.ToolKnowledgeBase.tool` raises (bind the live tools with ``kb.bind``); a
        tool stored as data (a dict, a tool file) has no live object and is left out with a
        warning naming it. With ``query``: a tool that could not be indexed is put first when the
        query names it exactly, in place of the last result (so the count does not grow).
        """
        out: list[Any] = []
        for scored in result.tools:
            tool = self._live_tool(scored)
            if tool is None and not self.bound:
                found = self.kb.tool(scored.id)  # raises ToolNotAttachedError for a live tool not bound
                if isinstance(found, dict):
                    logger.warning(
                        "tool %r is stored as data, with no live tool object to hand the agent; left out "
                        "(attach one with kb.bind(tools))",
                        scored.name,
                    )
                    continue
                tool = found
            if tool is not None and tool not in out:
                out.append(tool)
        named = [t for n, t in self.unindexed.items() if query and n in query.split()] if self.unindexed else []
        if named:
            out = [*named, *(t for t in out if t not in named)][: max(len(out), len(named))]
        return out

    def names(self, result: SearchResult, *, query: str | None = None) -> list[str]:
        """The tool names of a search result (for graph state), with an unindexable tool the query
        names exactly put first in place of the last one, as :meth:`live` does."""
        names = [t.name for t in result.tools]
        named = [n for n in self.unindexed if query and n in query.split()]
        return [*named, *(n for n in names if n not in named)][: max(len(names), len(named))]

    # ------------------------------------------------------------------ searching
    def search(
        self, query: str, k: K = 5, *, config: RetrievalConfig | str | None = None, conversation: Any = None
    ) -> SearchResult:
        """``kb.search`` with this object's config, LLM and allowed ids; ``conversation`` = the earlier chat."""
        return self.kb.search(
            query, k, config=config or self.config, conversation=conversation, llm=self.llm, allowed_ids=self.allowed
        )

    async def asearch(
        self, query: str, k: K = 5, *, config: RetrievalConfig | str | None = None, conversation: Any = None
    ) -> SearchResult:
        return await self.kb.asearch(
            query, k, config=config or self.config, conversation=conversation, llm=self.llm, allowed_ids=self.allowed
        )

    def begin_search(
        self, query: str, k: K = 5, *, config: RetrievalConfig | str | None = None, conversation: Any = None
    ) -> Search:
        """A not yet run search over the knowledge base, for driving the pipeline stages."""
        return self.kb.begin_search(
            query, k, config=config or self.config, conversation=conversation, llm=self.llm, allowed_ids=self.allowed
        )

    def search_turn(
        self,
        messages: Sequence[Any] | None = None,
        k: K = 5,
        *,
        query: str | None = None,
        conversation: Any = None,
    ) -> SearchResult | None:
        """The tools for a conversation's current user turn; None when there is nothing to search.

        With ``messages`` (any message shape, :mod:`toolret.search.conversation`), the latest user
        message is searched on its own, and that selection is the turn's; only when it reads as a
        follow-up (:mod:`toolret.search.follow_up`) are the earlier user messages searched too, and
        their tools fill only the places of the message's weakly matched ones. Without them,
        ``query`` (an adapter's custom query) is searched as it is, after the chat ``conversation``.
        """
        if messages is None:
            return self.search(query, k, conversation=conversation) if query else None
        if (turn := _split_turn(messages)) is None:
            return None
        latest, earlier = turn
        return self._with_follow_up(latest, earlier, self.search(latest, k, conversation=earlier), k)

    async def asearch_turn(
        self,
        messages: Sequence[Any] | None = None,
        k: K = 5,
        *,
        query: str | None = None,
        conversation: Any = None,
    ) -> SearchResult | None:
        """:meth:`search_turn` without blocking the event loop."""
        if messages is None:
            return await self.asearch(query, k, conversation=conversation) if query else None
        if (turn := _split_turn(messages)) is None:
            return None
        latest, earlier = turn
        own = await self.asearch(latest, k, conversation=earlier)
        return await asyncio.to_thread(self._with_follow_up, latest, earlier, own, k)

    def follow_up(self, messages: Sequence[Any], own: SearchResult, k: K) -> SearchResult:
        """``own`` (a driven search of the latest user message: :meth:`begin_search`) with the
        follow-up rule :meth:`search_turn` applies."""
        return self._with_follow_up(latest_request(messages), before_latest(messages), own, k)

    def _with_follow_up(self, query: str | None, earlier: Sequence[Any], own: SearchResult, k: K) -> SearchResult:
        if not query:
            return own
        return add_context(
            query, own, as_chat_history(earlier), k, lambda context: self.search(context, k, conversation=earlier)
        )

    def fit(
        self,
        result: SearchResult,
        token_budget: int | None = None,
        *,
        present: Callable[[Any], Any] | None = None,
        always: Sequence[Any] = (),
        keep_best: bool = False,
    ) -> SearchResult:
        """``result`` as it can be bound: :func:`~toolret.search.token_budget.fit_definitions` on each
        tool's definition as the framework will send it (:attr:`definitions` of ``present(tool)``, e.g. its
        condensed copy; the stored definition for a tool with no live object). ``always`` are the tools
        sent with every selection (counted first under a budget; one that cannot be bound is not sent);
        ``keep_best`` keeps the best tool when the budget fits none (a model call with no tool)."""

        def bound(tool: Any) -> Any:
            return present(tool) if present is not None else tool

        def definition(scored: ScoredTool) -> Any:
            tool = self._live_tool(scored)
            return self.kb.get(scored.id).definition() if tool is None else self.definitions(bound(tool))

        sent = [d for t in always if (d := self.definitions.safe(bound(t))) is not None]
        return fit_definitions(result, definition, token_budget, always=sent, keep_best=keep_best)

    def fits(
        self, token_budget: int | None, *, present: Callable[[Any], Any] | None = None, always: Sequence[Any] = ()
    ) -> Callable[[Sequence[str]], bool] | None:
        """Whether the tools named fit ``token_budget`` as bound (each definition as :meth:`fit` counts it, of
        ``present(tool)``; ``always`` counted first); None without a budget. A growing tool list asks it
        (:mod:`toolret.agents.stable_tools`)."""
        if token_budget is None:
            return None
        count = token_counter().count

        def tokens(tool: Any) -> int:
            definition = self.definitions.safe(present(tool) if present is not None else tool)
            return 0 if definition is None else count(definition_text(definition))

        fixed = sum(tokens(t) for t in always)
        return lambda names: fixed + sum(tokens(t) for n in names if (t := self.tool(n)) is not None) <= token_budget

    # ------------------------------------------------------------------ cold start
    def warmup(self, tools: Sequence[Any] | None = None) -> float:
        """:func:`warm_up`, with ``tools`` indexed first when given. Returns the seconds it took."""
        start = time.perf_counter()
        if tools is not None:
            self.ensure(tools)
        warm_up(self.kb, lambda: self.search("warm up", 1))
        return time.perf_counter() - start

    def __len__(self) -> int:
        return len(self.kb)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.live_tools)} live tools, {self.kb!r})"


def warm_up(kb: ToolKnowledgeBase, search: Callable[[], Any] | None = None) -> float:
    """Load the embedding model (and the cross-encoder a preset uses) and run one search, so an
    agent's first request is not the slow one (a reopened knowledge base with nothing new to
    embed loads its model on the first search: seconds on CPU). Returns the seconds it took."""
    start = time.perf_counter()
    kb.embedder.embed(["warm up"])
    if len(kb):
        (search or (lambda: kb.search("warm up", k=1)))()
    return time.perf_counter() - start


def attach(
    kb: ToolKnowledgeBase,
    docs: Sequence[ToolDoc],
    *,
    required: Sequence[str] = (),
    sync: bool = False,
    progress: bool = False,
) -> None:
    """Index ``docs`` (the documents of the live tools an index is reopened with) in ``kb``.

    Without ``sync``, every id in ``required`` (the tools the index held) must be among them: a
    stored tool with no live object could be retrieved but never handed to the agent, so the
    missing ones are a :class:`~toolret.errors.ToolNotFoundError` naming them; changed tools are
    re-embedded. With ``sync``, the knowledge base is made to hold exactly ``docs``.
    """
    if sync:
        report = kb.sync(docs, progress=progress)
        logger.debug(
            "synced tools: %d added, %d updated, %d removed", *map(len, (report.added, report.updated, report.removed))
        )
        return
    given = {d.id for d in docs}
    missing = [name for name in required if name not in given]
    if missing:
        raise ToolNotFoundError(
            f"{len(missing)} indexed tool(s) have no live object: {names_text([repr(m) for m in missing])}; pass "
            "them in objects= (or sync=True to drop them from the index)"
        )
    kb.add(list(docs), progress=progress, upsert=True)  # tools changed since indexing: meant


def persist_to(kb: ToolKnowledgeBase, folder: str | os.PathLike[str]) -> None:
    """Save ``kb`` in ``folder``: in place when it lives there, else ``folder`` is made to hold exactly
    its tools, embedding only those it does not already hold (re-persisting embeds only what
    changed). The recorded tool-use memory and fitted weights of an in-memory one are not copied."""
    target = Path(folder)
    if kb.path is not None and target.resolve() == kb.path.resolve():
        kb.save()
        return
    out = ToolKnowledgeBase(target, embedder=kb.embedder, config=kb.config)
    out.sync(kb.docs())
    out.save()


def names_text(names: Sequence[str], limit: int = 10) -> str:
    """``names`` joined for a message, the first ``limit`` of them and how many more."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _split_turn(messages: Sequence[Any]) -> tuple[str, list[Any]] | None:
    """(the latest user message, the messages before it), or None when no message is the user's."""
    latest = latest_request(messages)
    return None if latest is None else (latest, before_latest(messages))
