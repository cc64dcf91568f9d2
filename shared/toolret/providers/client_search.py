"""What every client-executed tool search shares: the knowledge base, its restriction, the search,
the wire name a model calls mapped back to a tool id, and running that tool inside the restriction.

The provider helpers (:mod:`~toolret.providers.openai_tool_search`,
:mod:`~toolret.providers.anthropic_tool_search`) differ only in the wire items they read and
write; the rules that decide which tools a model may load or call are here once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import inspect
import json
import weakref
from collections.abc import Collection, Mapping
from typing import Any

from toolret.config import K, RetrievalConfig
from toolret.errors import QueryError
from toolret.providers.wire_names import WireNames
from toolret.results import SearchResult
from toolret.scope.tool_scope import Where, as_scope, check_in_restriction, current_scope

__all__ = ["ClientToolSearch", "field_of", "output_text", "run_live"]


def field_of(item: Any, key: str, default: Any = None) -> Any:
    """``item[key]`` of a wire item given as a dict or as the SDK's object."""
    return item.get(key, default) if isinstance(item, Mapping) else getattr(item, key, default)


class ClientToolSearch:
    """A knowledge base searched for a provider's tool search, within ``allowed_ids`` and ``where``.

    Args:
        kb: the :class:`~toolret.ToolKnowledgeBase` holding every deferred tool.
        k: tools one search loads (or ``"auto"``: the precise set, possibly none).
        config: the retrieval preset or config (default: the knowledge base's).
        allowed_ids / where: every search's restriction (:mod:`toolret.scope.tool_scope`); a call's
            own ``where=`` narrows further.
        namespaced / reserved: how tools are named on the wire (:class:`~toolret.providers.wire_names.WireNames`).
    """

    def __init__(
        self,
        kb: Any,
        *,
        k: K = 5,
        config: RetrievalConfig | str | None = None,
        allowed_ids: Collection[str] | None = None,
        where: Where | None = None,
        namespaced: bool = False,
        reserved: Collection[str] = (),
    ) -> None:
        self.kb = kb
        self.k = k
        self.config = config
        self.allowed_ids = allowed_ids
        self.where = where
        self._names = WireNames(namespaced=namespaced, reserved=reserved)
        self._named: weakref.ref[Any] | None = None  # the snapshot last named (held weakly: never kept alive)

    def _scope(self, where: Where | None) -> Where | None:
        return as_scope(self.where).both(where) if self.where is not None else where

    def _search(self, query: str, where: Where | None) -> SearchResult:
        return self.kb.search(query, self.k, config=self.config, allowed_ids=self.allowed_ids, where=self._scope(where))

    def _wire_names(self) -> WireNames:
        """The helper's wire names, with every tool of the current snapshot named (a tool added since
        gets a name; a named one keeps it for the helper's lifetime, see :mod:`~toolret.providers.wire_names`)."""
        snap = self.kb._writer.snapshot
        if self._named is None or self._named() is not snap:
            self._names.update(snap.docs)
            self._named = weakref.ref(snap)
        return self._names

    def _wire_id(self, name: str, namespace: str | None = None) -> str:
        """The id of the tool the model called ``name`` (inside ``namespace``)."""
        return self._wire_names().tool_id(name, namespace)

    def _call(self, tool_id: str, args: dict[str, Any], called: str, where: Where | None) -> Any:
        """Run the live tool ``tool_id`` with ``args``; one outside the restriction is a ScopeError, never run."""
        check_in_restriction(self.kb._writer.snapshot, tool_id, self.allowed_ids, self._scope(where), current_scope())
        return run_live(self.kb.tool(tool_id), args, called)


def run_live(tool: Any, args: dict[str, Any], called: str) -> Any:
    """What the live ``tool`` returns for ``args``: a framework tool through its own entry point.

    A LangChain tool (or any runnable) is run with ``invoke`` (langchain-core 1.x tools are not
    callable), one with only a coroutine with ``ainvoke`` on its own event loop; a LlamaIndex tool
    is called and its ``ToolOutput`` unwrapped to the function's own value; a plain callable is
    called with the arguments as keywords (an async one awaited on its own event loop). A tool given as data (a dict,
    a ToolDoc) has no code to run here: that is an error saying to run it yourself.
    """
    invoke = getattr(tool, "invoke", None)
    if callable(invoke):
        if getattr(tool, "func", False) is None and getattr(tool, "coroutine", None) is not None:
            return _run_coroutine(tool.ainvoke(args))  # a LangChain tool with only a coroutine
        return invoke(args)
    if not callable(tool):
        raise QueryError(f"tool {called!r} was indexed as data, not as code: run it yourself (tool_id)")
    value = tool(**args)
    if inspect.isawaitable(value):  # an async function: its value, never the coroutine's repr
        value = _run_coroutine(_awaited(value))
    if type(value).__module__.startswith("llama_index") and hasattr(value, "raw_output"):
        return value.raw_output  # LlamaIndex's ToolOutput: the function's value, not its text rendering
    return value


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _run_coroutine(coroutine: Any) -> Any:
    """The value of ``coroutine``, from synchronous code: on a fresh event loop, in a worker thread
    when this thread already runs one (``asyncio.run`` cannot nest)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def output_text(value: Any) -> str:
    """A tool's result as the text a model reads: a string as it is, anything else as JSON.

    A pydantic model or a dataclass (also inside a list or dict) is sent as the JSON of its fields,
    as a model reads a record, not as its Python ``str()``; a value JSON has no form for (a date,
    a path) as its text.
    """
    return value if isinstance(value, str) else json.dumps(value, default=_json_value)


def _json_value(value: Any) -> Any:
    """What ``json.dumps`` writes for a value it cannot: a model's or a dataclass's fields, else ``str()``."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")  # pydantic v2: dates, enums and nested models as JSON values
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}  # nested values: back here
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)
