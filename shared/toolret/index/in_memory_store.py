"""The store of an in-memory knowledge base (``path=None`` and no client): no second copy of anything.

A persistent knowledge base keeps its documents and vectors in ChromaDB, its store of record,
and searches an in-memory snapshot built from them. An in-memory one used to keep the same
structure in ChromaDB's in-process client: every vector twice (ChromaDB's copy, plus its HNSW
graph, beside the snapshot's matrices), which at 100k tools was most of an 8 GB process and
most of the indexing time. Nothing outside this process can read an in-memory knowledge base,
so the snapshot is enough: this store keeps what the snapshot does not (each tool's content
hash, the recorded history, small metadata documents and the change marker) and no vectors.

It answers the same calls as :class:`~toolret.index.store.ChromaStore`. ``read_all`` and
``read_tools`` return no vectors: they serve opening and ``refresh()``, which an in-memory
knowledge base never needs (it starts empty, and its own writes are the only ones).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np

from toolret.documents.tool_doc import ToolDoc
from toolret.index.store import StoredTool

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """Tool hashes, history, metadata and the change marker of one in-memory knowledge base."""

    persistent = False

    def __init__(self, name: str = "toolret") -> None:
        self.name = f"{name}_{uuid.uuid4().hex[:12]}"
        self.client = None
        self.embedder_name: str | None = None
        self._docs: dict[str, ToolDoc] = {}
        self._history: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}
        self._meta: dict[str, str] = {}

    def existing_embedder(self) -> str | None:
        return None

    def open(self, embedder_name: str) -> None:
        self.embedder_name = embedder_name

    def drop(self) -> None:
        self._docs.clear()
        self._history.clear()
        self._meta.clear()

    def upsert(self, docs: Sequence[ToolDoc], vectors: Sequence[dict[str, np.ndarray]]) -> None:
        """Remember the documents; their vectors live in the snapshot only."""
        self._docs.update((d.id, d) for d in docs)

    def delete(self, tool_ids: Sequence[str]) -> None:
        for tool_id in tool_ids:
            self._docs.pop(tool_id, None)

    def read_index(self) -> dict[str, str]:
        return {t: d.content_hash for t, d in self._docs.items()}

    def read_tools(self, tool_ids: Sequence[str]) -> list[StoredTool]:
        return [StoredTool(self._docs[t], {}, {}) for t in sorted(set(tool_ids)) if t in self._docs]

    def read_all(self) -> list[StoredTool]:
        return self.read_tools(list(self._docs))

    def add_history(self, bundles: Sequence[tuple[str, Sequence[str]]], vectors: np.ndarray) -> None:
        for (query, tools), vector in zip(bundles, vectors):
            self._history[(query, tuple(tools))] = np.asarray(vector, dtype=np.float32)

    def read_history(self) -> tuple[list[tuple[str, tuple[str, ...]]], np.ndarray]:
        bundles = list(self._history)
        matrix = np.stack(list(self._history.values())) if bundles else np.zeros((0, 0), dtype=np.float32)
        return bundles, matrix

    def clear_history(self) -> None:
        self._history.clear()

    def put_meta(self, key: str, text: str) -> None:
        self._meta[key] = text

    def get_meta(self, key: str) -> str | None:
        return self._meta.get(key)

    def bump_generation(self) -> str:
        marker = uuid.uuid4().hex
        self._meta["generation"] = marker
        return marker

    def generation(self) -> str | None:
        return self._meta.get("generation")
