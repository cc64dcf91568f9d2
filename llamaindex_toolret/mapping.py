"""The map between tool ids and the live LlamaIndex tool objects.

:class:`ToolNodeMapping` plays ``SimpleToolNodeMapping``'s part (tools keyed by name) and can be
persisted: the tool *names* as JSON (:mod:`toolret.index.names_file`, never a pickle), the live tools
re-attached by name on load. It is a view of the knowledge base's ``kb.live_tools``, so ``kb.tool(name)``
and the agent's tool are one object.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from llama_index.core.objects.base_node_mapping import BaseObjectNodeMapping
from llama_index.core.schema import BaseNode, TextNode
from llama_index.core.tools import BaseTool

from llamaindex_toolret.ingest import as_tool, tool_name, tool_to_doc
from toolret.errors import InvalidToolError, ToolNotFoundError
from toolret.index.live_tools import LiveTools
from toolret.index.names_file import read_names, write_names

__all__ = ["MANIFEST_FILE", "ToolNodeMapping", "read_manifest", "tool_name"]

#: File written beside the knowledge base by ``persist``: the names of the indexed tools.
MANIFEST_FILE = "llamaindex_tools.json"


class ToolNodeMapping(BaseObjectNodeMapping[BaseTool]):
    """Tool id (= LlamaIndex tool name) -> live tool; thread-safe for concurrent reads and inserts.

    ``live`` is the :class:`~toolret.index.live_tools.LiveTools` map the tools are kept in
    (a knowledge base's ``kb.live_tools``); without one the mapping keeps its own.
    """

    def __init__(self, objs: Iterable[Any] | None = None, *, live: LiveTools | None = None) -> None:
        self._live = live if live is not None else LiveTools()
        for obj in objs or []:
            self.add_object(obj)

    @classmethod
    def from_objects(cls, objs: Sequence[Any], *args: Any, **kwargs: Any) -> ToolNodeMapping:
        return cls(objs)

    @property
    def live(self) -> LiveTools:
        """The engine's id -> live object map this mapping reads and writes."""
        return self._live

    def bind(self, live: LiveTools) -> None:
        """Move this mapping's tools into ``live`` (a knowledge base's) and use it from now on."""
        if live is not self._live:
            live.update(dict(self._live.items()))
            self._live = live

    def validate_object(self, obj: Any) -> None:
        if not isinstance(obj, BaseTool):
            raise InvalidToolError(
                type(obj).__name__, "tool", f"expected a LlamaIndex BaseTool, got {type(obj).__name__}"
            )

    def add_object(self, obj: Any) -> None:
        self._add_object(as_tool(obj))

    def _add_object(self, obj: BaseTool) -> None:
        self._live.update({tool_name(obj): obj})

    @property
    def obj_node_mapping(self) -> dict[str, BaseTool]:
        return {t: obj for t, obj in self._live.items() if isinstance(obj, BaseTool)}

    def names(self) -> list[str]:
        return list(self.obj_node_mapping)

    def get(self, tool_id: str) -> BaseTool | None:
        """The live tool for ``tool_id``, or None when none is attached (or what is attached is not a LlamaIndex tool)."""
        tool = self._live.get(tool_id)
        return tool if isinstance(tool, BaseTool) else None

    def __contains__(self, tool_id: object) -> bool:
        return isinstance(tool_id, str) and self.get(tool_id) is not None

    def __len__(self) -> int:
        return len(self.obj_node_mapping)

    def to_node(self, obj: BaseTool) -> TextNode:
        doc = tool_to_doc(obj)
        return TextNode(
            id_=doc.id,
            text=doc.card(),
            metadata={"name": doc.id, "tool_id": doc.id},
            excluded_embed_metadata_keys=["name", "tool_id"],
            excluded_llm_metadata_keys=["name", "tool_id"],
        )

    def _from_node(self, node: BaseNode) -> BaseTool:
        meta = node.metadata or {}
        key = meta.get("tool_id") or meta.get("name") or node.node_id
        tool = self.get(key)
        if tool is None:
            raise ToolNotFoundError(
                f"the knowledge base returned tool {key!r} but no live LlamaIndex tool is attached for it; "
                "pass it in objects= (from_objects / from_persist_dir) or insert_object() it"
            )
        return tool

    def persist(self, persist_dir: str = "./storage", obj_node_mapping_fname: str = MANIFEST_FILE) -> None:
        """Write the tool names as JSON (:mod:`toolret.index.names_file`); the tools are re-attached on load."""
        write_names(persist_dir, obj_node_mapping_fname, self.names())

    @classmethod
    def from_persist_dir(
        cls, persist_dir: str = "./storage", obj_node_mapping_fname: str = MANIFEST_FILE
    ) -> ToolNodeMapping:
        raise NotImplementedError(
            "live tools cannot be loaded from disk; use ToolObjectIndex.from_persist_dir(persist_dir, objects=tools)"
        )


def read_manifest(persist_dir: str | Path, fname: str = MANIFEST_FILE) -> list[str]:
    """The tool names :meth:`ToolNodeMapping.persist` wrote in ``persist_dir``."""
    return read_names(persist_dir, fname, written_by="ToolObjectIndex.persist()")
