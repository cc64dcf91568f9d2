"""What every client-executed tool search shares: the knowledge base, its restriction, the search,
the wire name a model calls mapped back to a tool id, and running that tool inside the restriction.

The provider helpers (:mod:`~toolret.providers.openai_tool_search`,
:mod:`~toolret.providers.anthropic_tool_search`) differ only in the wire items they read and
write; the rules that decide which tools a model may load or call are here once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from toolret.config import K, RetrievalConfig
from toolret.errors import QueryError
from toolret.providers.wire_names import WireNames
from toolret.results import SearchResult
from toolret.retrieval.scope import Where, as_scope, check_in_restriction

__all__ = ["ClientToolSearch", "field_of"]


def field_of(item: Any, key: str, default: Any = None) -> Any:
    """``item[key]`` of a wire item given as a dict or as the SDK's object."""
    return item.get(key, default) if isinstance(item, Mapping) else getattr(item, key, default)


class ClientToolSearch:
    """A knowledge base searched for a provider's tool search, within ``allowed_ids`` and ``where``.

    Args:
        kb: the :class:`~toolret.ToolKnowledgeBase` holding every deferred tool.
        k: tools one search loads (or ``"auto"``: the precise set, possibly none).
        config: the retrieval preset or config (default: the knowledge base's).
        allowed_ids / where: every search's restriction (:mod:`toolret.retrieval.scope`); a call's
            own ``where=`` narrows further.
    """

    def __init__(
        self,
        kb: Any,
        *,
        k: K = 5,
        config: RetrievalConfig | str | None = None,
        allowed_ids: Collection[str] | None = None,
        where: Where | None = None,
    ) -> None:
        self.kb = kb
        self.k = k
        self.config = config
        self.allowed_ids = allowed_ids
        self.where = where
        self._names: tuple[int, WireNames] | None = None

    def _scope(self, where: Where | None) -> Where | None:
        return as_scope(self.where).both(where) if self.where is not None else where

    def _search(self, query: str, where: Where | None) -> SearchResult:
        return self.kb.search(query, self.k, config=self.config, allowed_ids=self.allowed_ids, where=self._scope(where))

    def _wire_id(self, name: str, namespace: str | None = None) -> str:
        """The id of the tool the model called ``name`` (wire names rebuilt when the knowledge base changes)."""
        snap = self.kb._writer.snapshot
        if self._names is None or self._names[0] != id(snap):
            self._names = (id(snap), WireNames(snap.docs))
        return self._names[1].tool_id(name, namespace)

    def _call(self, tool_id: str, args: dict[str, Any], called: str, where: Where | None) -> Any:
        """Run the live tool ``tool_id`` with ``args``; one outside the restriction is a ScopeError, never run."""
        check_in_restriction(self.kb._writer.snapshot, tool_id, self.allowed_ids, self._scope(where))
        fn = self.kb.tool(tool_id)
        if not callable(fn):
            raise QueryError(f"tool {called!r} was indexed as data, not as code: run it yourself (tool_id)")
        invoke = getattr(fn, "invoke", None)
        return invoke(args) if callable(invoke) else fn(**args)
