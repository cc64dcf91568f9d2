"""Anthropic's custom tool search, answered by toolret: ``tool_reference`` blocks for the chosen tools.

The Messages API loads deferred tools on demand: every tool is sent with ``defer_loading: true``
(it costs no context until loaded), plus one ordinary tool the model calls to search. The client
answers that call with a ``tool_result`` whose content is ``tool_reference`` blocks, one per tool
to load; the API then expands each into its full definition. :class:`AnthropicToolSearch` builds
the three pieces: :meth:`~AnthropicToolSearch.tools` (the deferred tools and the search tool, for
``tools=``), :meth:`~AnthropicToolSearch.result` (the ``tool_result`` of a search call, toolret
choosing), :meth:`~AnthropicToolSearch.run` (a loaded tool's call, executed).

The blocks are plain dicts of the ``anthropic`` SDK's param types (``ToolParam``,
``ToolResultBlockParam``, ``ToolReferenceBlockParam``); the SDK itself is needed only to send
them (extra ``anthropic``). A scope (``where=``, ``allowed_ids=``) also limits the deferred tools
sent, so a tool outside it is never named to the model at all.

Example::

    search = AnthropicToolSearch(kb, k=5)
    messages = [{"role": "user", "content": "What's the weather in Paris?"}]
    while (reply := client.messages.create(model=MODEL, max_tokens=1024, tools=search.tools(),
                                           messages=messages)).stop_reason == "tool_use":
        messages.append({"role": "assistant", "content": reply.content})
        messages.append({"role": "user", "content": [search.answer(b) for b in reply.content if b.type == "tool_use"]})
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from toolret.config import K, RetrievalConfig
from toolret.documents.tool_doc import ToolDoc
from toolret.errors import ConfigError, QueryError
from toolret.providers.client_search import ClientToolSearch, field_of, output_text
from toolret.providers.wire_names import function_name
from toolret.results import SearchResult
from toolret.scope.tool_scope import Where, scope_mask

__all__ = ["DEFAULT_SEARCH_TOOL_NAME", "AnthropicToolSearch", "tool_reference_result"]

DEFAULT_SEARCH_TOOL_NAME = "tool_search"
_DESCRIPTION = (
    "Search the catalogue of available tools and load the ones that fit. Call it when none of the "
    "tools you have fits the task; describe the capability you need (e.g. 'convert currencies')."
)
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "The capability you need, in a few words."}},
    "required": ["query"],
}


def tool_reference_result(tool_use_id: str, names: list[str], *, query: str = "") -> dict[str, Any]:
    """The ``tool_result`` block loading ``names`` (``tool_reference`` blocks); a text when nothing fits."""
    if not names:
        text = f"No tools found for {query!r}. Describe the capability differently." if query else "No tools found."
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": [{"type": "text", "text": text}]}
    content = [{"type": "tool_reference", "tool_name": name} for name in names]
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}


class AnthropicToolSearch(ClientToolSearch):
    """The client side of Anthropic's custom tool search over a knowledge base.

    Args:
        kb: the :class:`~toolret.ToolKnowledgeBase` holding every deferred tool.
        k: tools one search loads (or ``"auto"``: the precise set, possibly none).
        config: the retrieval preset or config (default: the knowledge base's).
        name: the search tool's name (no tool of the knowledge base may have it: a ConfigError).
        allowed_ids / where: the restriction of every search and of the deferred tools sent.
    """

    def __init__(
        self,
        kb: Any,
        *,
        k: K = 5,
        config: RetrievalConfig | str | None = None,
        name: str = DEFAULT_SEARCH_TOOL_NAME,
        allowed_ids: Collection[str] | None = None,
        where: Where | None = None,
    ) -> None:
        super().__init__(kb, k=k, config=config, allowed_ids=allowed_ids, where=where, reserved=(name,))
        self.name = name
        self._check_name(self._in_scope(None))  # fail at construction, not at the first request

    def search_tool(self) -> dict[str, Any]:
        """The search tool itself (a ``ToolParam``, never deferred)."""
        return {"name": self.name, "description": _DESCRIPTION, "input_schema": _SCHEMA}

    def _in_scope(self, where: Where | None) -> list[ToolDoc]:
        """The tools of the knowledge base within the helper's restriction and ``where``."""
        snap = self.kb._writer.snapshot
        docs: list[ToolDoc] = list(snap.docs)
        scope = self._scope(where)
        if scope is not None:
            mask = scope_mask(snap, scope)
            docs = [d for d, keep in zip(docs, mask) if keep]
        if self.allowed_ids is not None:
            allowed = set(self.allowed_ids)
            docs = [d for d in docs if d.id in allowed]
        return docs

    def _check_name(self, docs: list[ToolDoc]) -> None:
        """Refuse tools named like the search tool: the API would get two tools of one name, and every
        call of it would reach the search, never the tool."""
        clashes = [d.id for d in docs if function_name(d) == self.name]
        if clashes:
            raise ConfigError(
                f"the search tool is named {self.name!r}, and so is the knowledge base's tool "
                f"{', '.join(map(repr, clashes[:5]))}: the model could not call them apart. The search tool's "
                f"name is configurable: AnthropicToolSearch(kb, name='search_tool_catalog') (any name no tool has)"
            )

    def deferred(self, *, where: Where | None = None) -> list[dict[str, Any]]:
        """Every tool in scope as a ``ToolParam`` with ``defer_loading: true`` (what a reference can load).

        Each tool has its own name for the helper's lifetime (:mod:`~toolret.providers.wire_names`):
        two servers' ``create_lead`` are sent as ``crm_create_lead`` and ``mkt_create_lead``. A tool
        named like the search tool is a ConfigError (pass another ``name=``).
        """
        docs = self._in_scope(where)
        self._check_name(docs)
        names = self._wire_names().names_of(docs)
        return [
            {
                "name": name,
                "description": d.description or d.name,
                "input_schema": d.parameters_schema(),
                "defer_loading": True,
            }
            for d, name in zip(docs, names)
        ]

    def tools(self, *, where: Where | None = None) -> list[dict[str, Any]]:
        """``tools=`` for the request: the deferred tools in scope, then the search tool."""
        return [*self.deferred(where=where), self.search_tool()]

    def search(self, query: str, *, where: Where | None = None) -> SearchResult:
        """toolret's search for ``query`` under this helper's restriction and ``where``."""
        return self._search(query, where)

    def result(self, tool_use: Any, *, where: Where | None = None) -> dict[str, Any]:
        """The ``tool_result`` answering a search call (a ``ToolUseBlock`` or its dict): ``tool_reference`` blocks."""
        query = field_of(field_of(tool_use, "input") or {}, "query")
        if not isinstance(query, str):
            raise QueryError(f"the {self.name} call carries no 'query' text ({field_of(tool_use, 'input')!r})")
        found = self.search(query, where=where)
        names = self._wire_names().names_of(self.kb.get(t.id) for t in found.tools)
        return tool_reference_result(field_of(tool_use, "id"), names, query=query)

    def tool_id(self, tool_use: Any) -> str:
        """The knowledge base id of the (loaded) tool a ``tool_use`` block calls."""
        return self._wire_id(field_of(tool_use, "name"))

    def run(self, tool_use: Any, *, where: Where | None = None) -> dict[str, Any]:
        """Run the live tool a ``tool_use`` block calls; its ``tool_result`` block (output as text).

        A live tool (a callable, a LangChain or LlamaIndex tool) is run; its output is its text, or
        its value as JSON. A tool outside the helper's restriction (and ``where``) is a ScopeError, never run.
        """
        args = dict(field_of(tool_use, "input") or {})
        value = self._call(self.tool_id(tool_use), args, field_of(tool_use, "name"), where)
        return {"type": "tool_result", "tool_use_id": field_of(tool_use, "id"), "content": output_text(value)}

    def answer(self, tool_use: Any, *, where: Where | None = None) -> dict[str, Any]:
        """The ``tool_result`` for any ``tool_use`` block: a search's references, or a tool's output."""
        return (
            self.result(tool_use, where=where)
            if field_of(tool_use, "name") == self.name
            else self.run(tool_use, where=where)
        )
