"""OpenAI's client-executed tool search, answered by toolret.

The Responses API can defer tools: the request carries a ``tool_search`` tool with
``execution="client"``; when the model needs a capability it emits a ``tool_search_call`` item,
the client searches, and answers with a ``tool_search_output`` item that loads the chosen tools
(function tools, or namespaces of them) into the conversation. :class:`OpenAIToolSearch` is that
client side: :meth:`~OpenAIToolSearch.tool` is the ``tool_search`` definition to send,
:meth:`~OpenAIToolSearch.output` turns a ``tool_search_call`` into its ``tool_search_output``
(toolret choosing the tools), :meth:`~OpenAIToolSearch.tool_id` maps a ``function_call`` back to
the tool to run.

Deferred tools stay cache-friendly: ``tools=`` never changes between requests (only the
``tool_search`` tool and any always-on ones), so the prompt prefix stays cached; each output
appends its tools at the end of the conversation, and what was loaded stays loaded. Pass the
conversation's items as ``history`` and a search adds only tools not loaded yet
(:func:`loaded_tools`), so a definition is never sent twice.

The items are the ``openai`` SDK's own types (``ResponseToolSearchCall`` in,
``ResponseToolSearchOutputItemParamParam`` out; the SDK is the base dependency ``openai``).

Example (the loop, no network; ``examples/openai_tool_search.py`` runs it end to end)::

    search = OpenAIToolSearch(kb, k=5)
    items = [{"role": "user", "content": "What's the weather in Paris?"}]
    while True:
        response = client.responses.create(model=MODEL, input=items, tools=[search.tool()])
        items += response.output
        calls = [i for i in response.output if i.type in ("tool_search_call", "function_call")]
        if not calls:
            break
        for call in calls:
            if call.type == "tool_search_call":
                items.append(search.output(call, history=items))
            else:
                items.append(search.run(call))
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from toolret.config import K, RetrievalConfig
from toolret.documents.tool_doc import ToolDoc
from toolret.errors import QueryError
from toolret.providers.client_search import ClientToolSearch, field_of, output_text
from toolret.results import SearchResult
from toolret.scope.tool_scope import Where

__all__ = ["TOOL_SEARCH_PARAMETERS", "OpenAIToolSearch", "loaded_tools", "tool_search_output"]

#: The arguments the model fills in a ``tool_search_call``: one free-text need.
TOOL_SEARCH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "The capability you need, in a few words (e.g. 'convert currencies').",
        }
    },
    "required": ["query"],
    "additionalProperties": False,
}
_DESCRIPTION = (
    "Search the catalogue of available tools and load the ones that fit. Call it when none of the "
    "tools you have fits the task; describe the capability you need."
)


def _query(call: Any) -> str:
    """The search text of a ``tool_search_call`` (its ``arguments``: an object, or JSON text of one)."""
    args = field_of(call, "arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return args
    if isinstance(args, Mapping):
        for key in ("query", "q", "search", "goal"):
            if isinstance(args.get(key), str):
                return str(args[key])
        texts = [str(v) for v in args.values() if isinstance(v, str)]
        if texts:
            return " ".join(texts)
    raise QueryError(f"the tool_search_call carries no query text in its arguments ({args!r})")


def loaded_tools(history: Iterable[Any]) -> set[tuple[str | None, str]]:
    """Every (namespace, function name) that earlier ``tool_search_output`` items of ``history`` loaded."""
    out: set[tuple[str | None, str]] = set()
    for item in history:
        if field_of(item, "type") != "tool_search_output":
            continue
        for tool in field_of(item, "tools") or ():
            kind = field_of(tool, "type")
            if kind == "namespace":
                out.update((field_of(tool, "name"), field_of(inner, "name")) for inner in field_of(tool, "tools") or ())
            elif kind == "function":
                out.add((None, field_of(tool, "name")))
    return out


def _function(doc: ToolDoc, name: str) -> dict[str, Any]:
    """``doc`` as a Responses function tool (``FunctionToolParam``) called ``name``."""
    spec: dict[str, Any] = {"type": "function", "name": name, "parameters": doc.parameters_schema()}
    if doc.description:
        spec["description"] = doc.description
    return spec


class OpenAIToolSearch(ClientToolSearch):
    """The client side of OpenAI's ``tool_search`` over a knowledge base.

    Args:
        kb: the :class:`~toolret.ToolKnowledgeBase` holding every deferred tool.
        k: tools one search loads (or ``"auto"``: the precise set, possibly none).
        config: the retrieval preset or config (default: the knowledge base's).
        namespaces: load tools with a namespaced id (``"crm/create_lead"``) inside a ``namespace``
            tool named after it (the model then calls them with ``namespace="crm"``).
        allowed_ids / where: every search's restriction (:mod:`toolret.scope.tool_scope`); a call's
            own ``where=`` narrows further.
    """

    def __init__(
        self,
        kb: Any,
        *,
        k: K = 5,
        config: RetrievalConfig | str | None = None,
        namespaces: bool = False,
        allowed_ids: Collection[str] | None = None,
        where: Where | None = None,
    ) -> None:
        super().__init__(kb, k=k, config=config, allowed_ids=allowed_ids, where=where, namespaced=namespaces)
        self.namespaces = namespaces

    def tool(self, description: str = _DESCRIPTION) -> dict[str, Any]:
        """The ``tool_search`` tool to send in ``tools=`` (a ``ToolSearchToolParam``, client-executed)."""
        return {
            "type": "tool_search",
            "execution": "client",
            "description": description,
            "parameters": TOOL_SEARCH_PARAMETERS,
        }

    def search(self, call: Any, *, where: Where | None = None) -> SearchResult:
        """toolret's search for a ``tool_search_call`` (its query), under this helper's restriction and ``where``."""
        return self._search(_query(call), where)

    def output(self, call: Any, *, history: Iterable[Any] = (), where: Where | None = None) -> dict[str, Any]:
        """The ``tool_search_output`` item answering ``call`` (a ``ResponseToolSearchCall`` or its dict).

        ``history``: the conversation's items so far; tools an earlier output loaded are not sent
        again. ``where``: this call's scope (e.g. the user's permitted servers), on top of the helper's.
        """
        result = self.search(call, where=where)
        loaded = loaded_tools(history)
        names = self._wire_names()
        tools: list[dict[str, Any]] = []
        grouped: dict[str, list[dict[str, Any]]] = {}
        for scored in result.tools:
            doc = self.kb.get(scored.id)
            ns, name = names.name_of(doc.id)
            if (ns, name) in loaded:
                continue
            if ns is None:
                tools.append(_function(doc, name))
            else:
                if ns not in grouped:
                    grouped[ns] = []
                    tools.append(
                        {"type": "namespace", "name": ns, "description": f"Tools of {ns}.", "tools": grouped[ns]}
                    )
                grouped[ns].append(_function(doc, name))
        item: dict[str, Any] = {
            "type": "tool_search_output",
            "execution": "client",
            "status": "completed",
            "tools": tools,
        }
        if (call_id := field_of(call, "call_id")) is not None:
            item["call_id"] = call_id
        return item

    def tool_id(self, call: Any) -> str:
        """The knowledge base id of the tool a ``function_call`` item names (with its ``namespace``).

        Each tool has its own wire name for this helper's lifetime (two servers' ``create_lead`` are
        sent as ``crm_create_lead`` and ``mkt_create_lead``), so a call maps back to exactly one id.
        """
        return self._wire_id(field_of(call, "name"), field_of(call, "namespace"))

    def run(self, call: Any, *, where: Where | None = None) -> dict[str, Any]:
        """Run the live tool a ``function_call`` names with its JSON arguments; the ``function_call_output`` item.

        For tools indexed as live objects (``kb.tool(id)``: callables, LangChain and LlamaIndex tools);
        a tool given as data has no code to run here, so call your own executor with :meth:`tool_id`
        instead. A tool outside the helper's restriction (and ``where``) is a ScopeError, never run:
        the model was never offered it. The output is the tool's text, or its value as JSON.
        """
        raw = field_of(call, "arguments") or "{}"
        args = json.loads(raw) if isinstance(raw, str) else dict(raw)
        value = self._call(self.tool_id(call), args, field_of(call, "name"), where)
        return {"type": "function_call_output", "call_id": field_of(call, "call_id"), "output": output_text(value)}


def tool_search_output(
    call: Any, kb: Any, *, k: K = 5, history: Iterable[Any] = (), where: Where | None = None
) -> dict[str, Any]:
    """One-shot :meth:`OpenAIToolSearch.output`: the ``tool_search_output`` item answering ``call``."""
    return OpenAIToolSearch(kb, k=k).output(call, history=history, where=where)
