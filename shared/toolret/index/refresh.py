"""What changed in a shared knowledge base since this process last read it.

Several processes may open one knowledge base on a ChromaDB server; each searches its own
in-memory snapshot, and one of them writes. :meth:`ToolKnowledgeBase.refresh` calls
:func:`read_changes` to bring a reader's snapshot up to date by difference: it reads every
tool's id and content hash (metadata only), then fetches documents and vectors for the
added or changed tools alone, so a refresh after a small change costs a small read.

A writer puts field records before tool records (see :mod:`toolret.index.store`). A reader that
looks in the middle of a write may find a tool whose stored fields do not match its hash
yet; that tool keeps its previous version (or stays absent) and the result is marked not
``consistent``, so the next refresh looks again instead of trusting the change marker.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc
from toolret.index.snapshot import Snapshot
from toolret.index.store import ChromaStore, StoredTool

__all__ = ["Changes", "read_changes"]


@dataclass(frozen=True)
class Changes:
    """The registry as stored now, and how it differs from the snapshot it was compared to."""

    docs: list[ToolDoc]
    vectors: list[dict[str, np.ndarray]]
    added: list[str]
    updated: list[str]
    removed: list[str]
    consistent: bool

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def _complete(stored: StoredTool, expected_hash: str) -> bool:
    doc = stored.doc
    if doc.content_hash != expected_hash:
        return False
    for field in INDEX_FIELDS:
        if doc.field_text(field) and (field not in stored.vectors or stored.field_hashes.get(field) != expected_hash):
            return False
    return True


def read_changes(store: ChromaStore, snap: Snapshot) -> Changes:
    """Compare ``snap`` with the store; fetch only the tools that are new or changed."""
    index = store.read_index()
    position = snap.index_of
    wanted = [t for t, h in index.items() if t not in position or snap.docs[position[t]].content_hash != h]
    fetched = {s.doc.id: s for s in store.read_tools(wanted)}
    merged: dict[str, tuple[ToolDoc, dict[str, np.ndarray]]] = {}
    for i, doc in enumerate(snap.docs):
        if doc.id in index:
            merged[doc.id] = (doc, snap.field_vectors(i))
    added: list[str] = []
    updated: list[str] = []
    consistent = True
    for tool_id in wanted:
        stored = fetched.get(tool_id)
        if stored is None or not _complete(stored, index[tool_id]):
            consistent = False  # caught mid-write: keep what we had, look again next time
            continue
        (updated if tool_id in merged else added).append(tool_id)
        merged[tool_id] = (stored.doc, stored.vectors)
    removed = [d.id for d in snap.docs if d.id not in index]
    return Changes(
        docs=[d for d, _ in merged.values()],
        vectors=[v for _, v in merged.values()],
        added=added,
        updated=updated,
        removed=removed,
        consistent=consistent,
    )
