"""The store of a knowledge base in a local directory: ChromaDB, opened only when needed.

A saved knowledge base opened for searching reads its snapshot file
(:mod:`toolret.index.snapshot_file`) and never needs ChromaDB, whose import alone costs a fresh
process most of a second. :class:`LocalStore` answers the same calls as
:class:`~toolret.index.store.ChromaStore`: while the knowledge base is being opened, the
reads it makes (change marker, history, metadata documents) come from the saved state; after
that (:meth:`LocalStore.end_preload`), the first call that needs ChromaDB — any write,
``refresh()``, ``save()`` — imports and opens it. Every write first sets the manifest's dirty
mark, so a snapshot file is never trusted after a write it does not contain.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import KnowledgeBaseError, ToolRetError
from toolret.index import snapshot_file
from toolret.index.snapshot_file import SavedState
from toolret.index.store import ChromaStore, StoredTool

__all__ = ["LocalStore", "damaged_message"]


def damaged_message(path: Path | None, exc: Exception) -> str:
    """What to tell a user whose stored knowledge base cannot be opened, and how to rebuild it."""
    where = f"at {str(path)!r}" if path is not None else "on the ChromaDB server"
    rebuild = f"`toolret index TOOLS --kb {path}`" if path is not None else "ToolKnowledgeBase.connect(...).sync(tools)"
    return (
        f"cannot open the knowledge base {where}: {type(exc).__name__}: {exc}. Its ChromaDB data is damaged "
        "or unreadable (a copy or disk write that did not finish, another program writing it, a full disk). "
        f"Restore it from a backup, or delete it and rebuild: {rebuild} or ToolKnowledgeBase(path).add(tools)"
    )


class LocalStore:
    """ChromaDB in ``path`` (a ``PersistentClient``), opened lazily; ``saved`` answers the opening reads."""

    persistent = True

    def __init__(
        self,
        path: Path,
        name: str,
        embedder_name: str,
        *,
        store: ChromaStore | None = None,
        saved: SavedState | None = None,
    ) -> None:
        self.path = path
        self.name = name
        self.embedder_name = embedder_name
        self.saved = saved
        #: True when this knowledge base was opened from the snapshot file.
        self.from_file = saved is not None
        self._store = store
        #: The ChromaDB files' stamp right after this process opened its client (None: not opened).
        self.opened_stamp = snapshot_file.store_stamp(path) if store is not None else None

    @property
    def chroma(self) -> ChromaStore:
        """The ChromaDB store, opened (and chromadb imported) on first use."""
        if self._store is None:
            store = None
            try:
                store = ChromaStore(path=str(self.path), name=self.name)
                store.open(self.embedder_name)
                store.settle()  # ChromaDB's own catch-up writes now, before the stamp (see settle)
            except Exception as exc:  # ChromaDB reports damaged files with many exception types
                if store is not None:
                    store.close()  # a later open, after a restore, must not find this failed client
                if isinstance(exc, ToolRetError):
                    raise
                raise KnowledgeBaseError(damaged_message(self.path, exc)) from exc
            self._store = store
            self.opened_stamp = snapshot_file.store_stamp(self.path)
        return self._store

    @property
    def is_open(self) -> bool:
        return self._store is not None

    def end_preload(self) -> None:
        """Opening is over: from now on reads go to ChromaDB (a reader's refresh must see other writes)."""
        self.saved = None

    def __getattr__(self, name: str) -> Any:  # client, collections... of the opened store
        if name.startswith("__") or name in {"_store", "saved", "path"}:
            raise AttributeError(name)
        return getattr(self.chroma, name)

    # ------------------------------------------------------------------ writes: locked, dirty mark first
    @contextmanager
    def _writing(self) -> Iterator[ChromaStore]:
        """The store to write, under the shared write lock (an opening repair never runs meanwhile,
        :func:`~toolret.index.snapshot_file.repairing`), with the dirty mark set first."""
        store = self.chroma
        with snapshot_file.writing(self.path):
            snapshot_file.mark_dirty(self.path)
            yield store

    def upsert(self, docs: Sequence[ToolDoc], vectors: Sequence[dict[str, np.ndarray]]) -> None:
        with self._writing() as store:
            store.upsert(docs, vectors)

    def delete(self, tool_ids: Sequence[str]) -> None:
        with self._writing() as store:
            store.delete(tool_ids)

    def add_history(self, bundles: Sequence[tuple[str, Sequence[str]]], vectors: np.ndarray) -> None:
        with self._writing() as store:
            store.add_history(bundles, vectors)

    def put_meta(self, key: str, text: str) -> None:
        with self._writing() as store:
            store.put_meta(key, text)

    def clear_history(self) -> None:
        with self._writing() as store:
            store.clear_history()

    def bump_generation(self) -> str:
        with self._writing() as store:
            return store.bump_generation()

    def drop(self) -> None:
        with self._writing() as store:
            store.drop()

    def close(self) -> None:
        """Release the ChromaDB client, when one was opened (:meth:`ChromaStore.close`)."""
        if self._store is not None:
            self._store.close()
            self._store = None

    # ------------------------------------------------------------------ reads
    def existing_embedder(self) -> str | None:
        return self.embedder_name if self.saved is not None else self.chroma.existing_embedder()

    def open(self, embedder_name: str) -> None:
        self.chroma.open(embedder_name)

    def generation(self) -> str | None:
        return self.saved.generation if self.saved is not None else self.chroma.generation()

    def read_history(self) -> tuple[list[tuple[str, tuple[str, ...]]], np.ndarray]:
        return self.saved.history if self.saved is not None else self.chroma.read_history()

    def get_meta(self, key: str) -> str | None:
        return self.saved.meta_docs.get(key) if self.saved is not None else self.chroma.get_meta(key)

    def read_meta(self) -> dict[str, str]:
        return dict(self.saved.meta_docs) if self.saved is not None else self.chroma.read_meta()

    def read_index(self) -> dict[str, str]:
        return self.chroma.read_index()

    def read_tools(self, tool_ids: Sequence[str]) -> list[StoredTool]:
        return self.chroma.read_tools(tool_ids)

    def read_all(self) -> list[StoredTool]:
        return self.chroma.read_all()
