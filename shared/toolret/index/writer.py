"""Every change to a knowledge base's registry goes through one locked path: :class:`IndexWriter`.

``add``, ``remove`` and ``sync`` each decide *what* changes (a change set: the registry wanted,
the documents to embed and store, the ids to delete); :meth:`IndexWriter._commit` does the rest
the same way every time — embed only the changed documents, upsert them, delete the removed
ones, publish the change marker, and swap in a new immutable snapshot, so concurrent searches
never see a half-applied change. :meth:`IndexWriter.refresh` takes in other processes' writes.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from toolret.config import RetrievalConfig
from toolret.documents.guards import check_doc_size
from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc
from toolret.errors import InvalidToolError, KnowledgeBaseError, ToolNotFoundError
from toolret.index.embedding import Embedder
from toolret.index.live_tools import LiveTools
from toolret.index.snapshot import Snapshot, build_snapshot
from toolret.index.store import ChromaStore
from toolret.index.unit_vectors import check_dim

__all__ = ["IndexWriter", "SyncReport"]

logger = logging.getLogger("toolret")

#: Texts per encoder call when embedding tool fields.
EMBED_BATCH = 512


class SyncReport(BaseModel):
    """What :meth:`ToolKnowledgeBase.sync` (or ``refresh``) changed, by tool id."""

    model_config = ConfigDict(frozen=True)

    added: list[str]
    updated: list[str]
    removed: list[str]
    unchanged: int


class IndexWriter:
    """The store, the current snapshot, the live tools and the change marker of one knowledge base.

    Searches read :attr:`snapshot` without a lock (it is immutable and replaced whole); writes
    hold :attr:`lock` (reentrant, so the tool-use memory can write under it too).
    """

    def __init__(
        self,
        store: ChromaStore,
        embedder: Embedder,
        config: RetrievalConfig,
        *,
        expander: Any = None,
        offline_expansion: bool = True,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self.expander = expander
        self.offline_expansion = offline_expansion
        self.lock = threading.RLock()
        self.live = LiveTools()
        self.snapshot: Snapshot = build_snapshot([], [], 0)
        #: The store's change marker as of our last read or write (None: unknown, refresh reads all).
        self.generation: str | None = store.generation()

    # ------------------------------------------------------------------ documents and vectors
    def prepare(self, tools: Iterable[Any]) -> tuple[list[ToolDoc], dict[str, Any]]:
        """Tools -> validated, expanded ToolDocs (and the live objects among them, by id)."""
        from toolret.sources.ingest import to_tool_doc, tool_list

        tools = tool_list(tools)
        docs: list[ToolDoc] = []
        live: dict[str, Any] = {}
        seen: set[str] = set()
        limit = self.config.max_tools
        for position, obj in enumerate(tools):
            if position == limit:  # stop a runaway generator before it is read (and embedded) whole
                raise KnowledgeBaseError(too_many(f"more than {limit} tools were given", limit))
            doc = check_doc_size(to_tool_doc(obj), self.config.max_doc_chars)
            if doc.id in seen:
                raise InvalidToolError(doc.name, "id", f"id {doc.id!r} appears twice (second at position {position})")
            seen.add(doc.id)
            docs.append(doc)
            if not isinstance(obj, (ToolDoc, dict)):
                live[doc.id] = obj
        return self._expand(docs), live

    def _expand(self, docs: list[ToolDoc]) -> list[ToolDoc]:
        """Pre-retrieval expansion (toolret.index.expansion): offline profile, then the LLM expander if set."""
        if self.offline_expansion:
            from toolret.index.expansion import expand_offline

            docs = [expand_offline(d) for d in docs]
        if self.expander is not None and docs:
            docs = self.expander.expand(docs)
        return docs

    def embed(self, docs: Sequence[ToolDoc], progress: bool = False) -> list[dict[str, np.ndarray]]:
        """Embed every non-empty field of every doc; each distinct text once, similar lengths together.

        Names and descriptions repeat across fields and across a registry's doc variants, so
        a text is embedded once and its vector shared. Texts go to the encoder sorted by
        length, EMBED_BATCH at a time, so a batch pads little (the ONNX embedder sorts and
        spreads each call over the cores itself).
        """
        jobs: list[tuple[int, str, str]] = []
        for i, doc in enumerate(docs):
            for f in INDEX_FIELDS:
                text = doc.field_text(f)
                if text:
                    jobs.append((i, f, text))
        texts = sorted({t for _, _, t in jobs}, key=len)
        vectors: dict[str, np.ndarray] = {}
        bar = _progress(len(texts), "embedding tool fields", progress)
        # Every vector must have the stored tools' dimension (or, in an empty one, the first batch's):
        # another model under the same recorded name would otherwise fail deep inside numpy or ChromaDB.
        dim = self.snapshot.dim if len(self.snapshot) else 0
        for start in range(0, len(texts), EMBED_BATCH):
            chunk = texts[start : start + EMBED_BATCH]
            rows = check_dim(np.asarray(self.embedder.embed(chunk)), dim, self.embedder.name, side="tool")
            dim = dim or (int(rows.shape[1]) if rows.ndim == 2 else 0)
            vectors.update(zip(chunk, rows))
            bar.update(len(chunk))
        bar.close()
        out: list[dict[str, np.ndarray]] = [{} for _ in docs]
        for i, name, text in jobs:
            out[i][name] = vectors[text]
        return out

    def _vectors(self) -> tuple[dict[str, ToolDoc], dict[str, dict[str, np.ndarray]]]:
        snap = self.snapshot
        docs = {d.id: d for d in snap.docs}
        vecs = {d.id: snap.field_vectors(i) for i, d in enumerate(snap.docs)}
        return docs, vecs

    def rebuild(self, docs: list[ToolDoc], vectors: list[dict[str, np.ndarray]]) -> None:
        """Swap in a new snapshot of ``docs`` (ordered by id, so every process builds the same one)."""
        order = sorted(range(len(docs)), key=lambda i: docs[i].id)
        docs = [docs[i] for i in order]
        vectors = [vectors[i] for i in order]
        dim = next((v.shape[0] for vecs in vectors for v in vecs.values()), self.snapshot.dim)
        self.snapshot = build_snapshot(docs, vectors, dim)

    # ------------------------------------------------------------------ the change sets
    def add(self, tools: Iterable[Any], *, progress: bool = False, upsert: bool = False) -> list[str]:
        """Add ``tools``; a changed tool under an existing id replaces it, with a warning naming it
        unless ``upsert`` says the replacement is meant (``sync`` is the way to replace a registry)."""
        start = time.perf_counter()
        new_docs, live = self.prepare(tools)
        with self.lock:
            current, _ = self._vectors()
            total = len(current.keys() | {d.id for d in new_docs})
            if total > self.config.max_tools:
                raise KnowledgeBaseError(too_many(f"adding these tools would make {total}", self.config.max_tools))
            changed = [d for d in new_docs if d.id not in current or current[d.id].content_hash != d.content_hash]
            replaced = [d.id for d in changed if d.id in current]
            if replaced and not upsert:
                shown = ", ".join(map(repr, replaced[:10])) + (" ..." if len(replaced) > 10 else "")
                message = (
                    f"add replaced {len(replaced)} existing tool(s) with a different definition under the same id: "
                    f"{shown}; pass upsert=True when replacing is meant, or use sync() to replace a registry"
                )
                logger.warning(message)
                # A Python warning too, so warnings.catch_warnings (and -W error) see it; it points at kb.add's caller.
                warnings.warn(message, UserWarning, stacklevel=_caller_level())
            wanted = {**current, **{d.id: d for d in changed}}
            self._commit(wanted, changed, [], progress)
            self.live.update(live, names={d.id: d.name for d in new_docs})
        _log_change("add", len(new_docs), len(changed) - len(replaced), len(replaced), 0, start)
        return [d.id for d in new_docs]

    def bind(self, objects: Iterable[Any]) -> int:
        """Attach live objects to the stored tools they describe (after reopening); returns how many matched."""
        from toolret.sources.ingest import to_tool_doc, tool_list

        matched: dict[str, Any] = {}
        names: dict[str, str] = {}
        for obj in tool_list(objects):
            doc = to_tool_doc(obj)
            if doc.id in self.snapshot.index_of:
                matched[doc.id] = obj
                names[doc.id] = doc.name
        self.live.update(matched, names=names)
        return len(matched)

    def remove(self, tool_ids: str | Iterable[str]) -> None:
        ids = [tool_ids] if isinstance(tool_ids, str) else list(tool_ids)
        with self.lock:
            current, _ = self._vectors()
            missing = [t for t in ids if t not in current]
            if missing:
                raise ToolNotFoundError(f"cannot remove unknown tool id(s): {', '.join(map(repr, missing[:5]))}")
            gone = set(ids)
            self._commit({t: d for t, d in current.items() if t not in gone}, [], ids, False)
            self.live.keep(self.snapshot.index_of)

    def sync(self, tools: Iterable[Any], *, progress: bool = False, prefix: str | None = None) -> SyncReport:
        start = time.perf_counter()
        new_docs, live = self.prepare(tools)
        if prefix is not None:
            stray = [d.id for d in new_docs if not d.id.startswith(prefix)]
            if stray:
                raise InvalidToolError(stray[0], "id", f"sync(prefix={prefix!r}) was given a tool outside that prefix")
        with self.lock:
            current, _ = self._vectors()
            kept = [d for t, d in current.items() if prefix is not None and not t.startswith(prefix)]
            wanted = {d.id: d for d in [*kept, *new_docs]}
            if len(wanted) > self.config.max_tools:
                raise KnowledgeBaseError(too_many(f"this sync would make {len(wanted)}", self.config.max_tools))
            added = [d for d in new_docs if d.id not in current]
            updated = [d for d in new_docs if d.id in current and current[d.id].content_hash != d.content_hash]
            removed = [t for t in current if t not in wanted]
            self._commit(wanted, added + updated, removed, progress)
            self.live.keep(wanted)
            self.live.update(live, names={d.id: d.name for d in new_docs})
        _log_change("sync", len(new_docs), len(added), len(updated), len(removed), start)
        return SyncReport(
            added=[d.id for d in added],
            updated=[d.id for d in updated],
            removed=removed,
            unchanged=len(new_docs) - len(added) - len(updated),
        )

    def _commit(self, wanted: dict[str, ToolDoc], changed: list[ToolDoc], removed: list[str], progress: bool) -> None:
        """The one write path: embed ``changed``, store it, delete ``removed``, mark, swap the snapshot."""
        _, vecs = self._vectors()
        fresh = self.embed(changed, progress)
        self.store.upsert(changed, fresh)
        if removed:
            self.store.delete(removed)
        if changed or removed:
            self.mark_written()
        for doc, v in zip(changed, fresh):
            vecs[doc.id] = v
        self.rebuild(list(wanted.values()), [vecs[t] for t in wanted])

    def refresh(self) -> SyncReport | None:
        """Take in other processes' writes by difference; None when the change marker has not moved.

        The caller holds :attr:`lock` (the knowledge base reloads its tool-use memory under it too).
        """
        from toolret.index.refresh import read_changes

        generation = self.store.generation()
        if generation is not None and generation == self.generation:
            return None
        changes = read_changes(self.store, self.snapshot)
        if changes.changed:
            self.rebuild(changes.docs, changes.vectors)
            self.live.keep(self.snapshot.index_of)
        self.generation = generation if changes.consistent else None
        return SyncReport(
            added=changes.added,
            updated=changes.updated,
            removed=changes.removed,
            unchanged=len(changes.docs) - len(changes.added) - len(changes.updated),
        )

    def mark_written(self) -> None:
        """Publish a new change marker after a write (readers' ``refresh`` looks for it)."""
        before = self.store.generation()
        marker = self.store.bump_generation()
        # Another writer got in since our last look: our snapshot may lack its change.
        self.generation = marker if before == self.generation else None


def _own_frame(module: str) -> bool:
    """A frame of toolret or of an adapter package (named ``<framework>_toolret`` by convention), which a
    warning skips so it points at the user's call (kb.add, an adapter's constructor)."""
    top = module.split(".")[0]
    return top == "toolret" or top.endswith("_toolret")


def _caller_level() -> int:
    """The ``stacklevel`` (for a ``warnings.warn`` in the caller of this) of the first frame outside toolret."""
    frame, level = sys._getframe(1), 1
    while frame is not None and _own_frame(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def _log_change(verb: str, given: int, added: int, updated: int, removed: int, start: float) -> None:
    """One INFO line per add/sync (logger "toolret"): what changed and how long it took, embedding included."""
    logger.info(
        "%s: %d tools (%d added, %d updated, %d unchanged, %d removed) in %.2f s",
        verb,
        given,
        added,
        updated,
        given - added - updated,
        removed,
        time.perf_counter() - start,
    )


def too_many(what: str, limit: int) -> str:
    return (
        f"{what}; a knowledge base holds at most max_tools={limit} tools (RetrievalConfig.max_tools). "
        "Raise it with ToolKnowledgeBase(config=RetrievalConfig(max_tools=...)) or split the registry"
    )


class _NullBar:
    def update(self, n: int) -> None: ...
    def close(self) -> None: ...


def _progress(total: int, desc: str, enabled: bool) -> Any:
    """A tqdm bar on stderr for a job of more than one batch, only when stderr is a terminal."""
    if not enabled or total <= EMBED_BATCH or not sys.stderr.isatty():
        return _NullBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="text", disable=not sys.stderr.isatty())
