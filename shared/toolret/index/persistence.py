"""Opening, repairing and saving a knowledge base's files.

ChromaDB persists documents and vectors as they are written; beside them a knowledge base saves
derived data — the BM25 indexes, the snapshot file (:mod:`toolret.index.snapshot_file`) — and a
manifest (format, embedder, registry hash, dirty mark). Opening a local directory uses the
snapshot file when it matches ChromaDB's files, without importing ChromaDB; otherwise it reads
the store, re-embeds any tool whose stored fields are incomplete (an interrupted write), and
writes a fresh snapshot file when nothing wrote meanwhile. Saved lexical indexes are reused only
when the manifest's registry hash matches the documents.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc
from toolret.errors import KnowledgeBaseError, ModelMismatchError
from toolret.index import snapshot_file
from toolret.index.embedding import (
    DEFAULT_EMBEDDER_NAME,
    STOCK_EMBEDDER_NAMES,
    TORCH_EMBEDDER_NAME,
    Embedder,
    embedder_revision,
    resolve_embedder,
)
from toolret.index.framework_embedding import pass_again
from toolret.index.hubness import load_hubness, save_hubness
from toolret.index.lexical import LexicalIndex
from toolret.index.local_store import LocalStore, damaged_message
from toolret.index.snapshot import Snapshot, build_snapshot
from toolret.index.snapshot_file import MANIFEST
from toolret.index.store import FORMAT_VERSION, ChromaStore
from toolret.index.writer import IndexWriter

__all__ = [
    "MANIFEST",
    "damaged_message",
    "load_snapshot",
    "make_dir",
    "open_store",
    "opened",
    "registry_hash",
    "release",
    "save",
    "saved_folder",
]

logger = logging.getLogger("toolret")

_LEXICAL_DIR = "lexical"
_ADAPTATION = "adaptation.npz"


def registry_hash(docs: Iterable[ToolDoc]) -> str:
    """One hash of every (id, content hash): equal registries, equal hashes."""
    h = hashlib.sha256()
    for doc in docs:
        h.update(doc.id.encode("utf-8", "surrogatepass") + b"\0" + doc.content_hash.encode() + b"\n")
    return h.hexdigest()


def make_dir(path: Path | None) -> None:
    """Create the knowledge base's directory; a path that is a file, or cannot be created, is a
    :class:`KnowledgeBaseError` naming it (not a raw ``FileExistsError``)."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise KnowledgeBaseError(
            f"knowledge base path {str(path)!r} is a file, not a directory; pass the path of a "
            "directory (it is created if missing)"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KnowledgeBaseError(f"cannot create the knowledge base directory {str(path)!r}: {exc}") from exc


#: Stock model names already announced in this process (the switch is said once, not per open).
_ANNOUNCED: set[str] = set()


def _embedder_for(stored_name: str | None, embedder: Any) -> Any:
    """The embedder to open a stored knowledge base with: the one given, else the one it was built with."""
    if embedder is not None or not stored_name:
        return embedder
    if (again := pass_again(stored_name)) is not None:  # a label, never a model to look up on a hub
        raise ModelMismatchError(f"this knowledge base cannot be opened without its embedding model: {again}")
    if stored_name in STOCK_EMBEDDER_NAMES and stored_name != DEFAULT_EMBEDDER_NAME and stored_name not in _ANNOUNCED:
        _ANNOUNCED.add(stored_name)
        logger.warning(
            "this knowledge base was built with the stock MiniLM (%s) and keeps searching with it; "
            "index it again (a new knowledge base, or `toolret index ... --kb NEW`) to switch to the "
            "default %s, trained on tool requests%s",
            stored_name,
            DEFAULT_EMBEDDER_NAME,
            ", which also starts faster than torch" if stored_name == TORCH_EMBEDDER_NAME else "",
        )
    return stored_name  # the model it was built with: packaged (ONNX or torch) or a name/path


def open_store(path: Path | None, client: Any, collection: str, embedder: Any) -> tuple[ChromaStore, Embedder]:
    """The store, and the embedder to use with it (the one it was built with unless one is given).

    No path and no client: a :class:`~toolret.index.in_memory_store.InMemoryStore` (the snapshot is
    the only copy of the vectors). A local directory: a :class:`LocalStore`, which does not
    open ChromaDB when the snapshot file is current and the embedder matches. A client: ChromaDB.
    """
    if path is None and client is None:
        from toolret.index.in_memory_store import InMemoryStore

        memory = InMemoryStore(collection)
        resolved = resolve_embedder(embedder)
        memory.open(resolved.name)
        return memory, resolved  # type: ignore[return-value]  # the same calls as ChromaStore
    if client is None and path is not None:
        _check_database(path)
        saved = snapshot_file.read(path, collection, FORMAT_VERSION)
        if saved is not None:
            resolved = resolve_embedder(_embedder_for(saved.embedder, embedder))
            if resolved.name == saved.embedder and saved.embedder_revision == embedder_revision(resolved.name):
                # another model, or other weights under its name: ChromaDB's check raises ModelMismatchError
                return LocalStore(path, collection, resolved.name, saved=saved), resolved  # type: ignore[return-value]
    store = ChromaStore(path=str(path) if path else None, client=client, name=collection)
    try:
        resolved = resolve_embedder(_embedder_for(store.existing_embedder(), embedder))
        store.open(resolved.name)
    except BaseException:
        store.close()  # ChromaDB would keep the failed client for this path (see ChromaStore.close)
        raise
    if client is None and path is not None:
        store.settle()  # ChromaDB's own catch-up writes now, before LocalStore takes the stamp
        return LocalStore(path, collection, resolved.name, store=store), resolved  # type: ignore[return-value]
    return store, resolved


def _check_database(path: Path) -> None:
    """A saved knowledge base (it has a manifest) whose ``chroma.sqlite3`` is gone is an error naming
    the file: ChromaDB would quietly create an empty database there, and every search return nothing."""
    if (path / snapshot_file.SQLITE_FILE).exists() or not (path / MANIFEST).exists():
        return
    try:
        n_tools = int(json.loads((path / MANIFEST).read_text()).get("n_tools", 0))
    except (OSError, ValueError, TypeError, AttributeError):
        n_tools = 0
    held = " (snapshot.npz still describes them)" if (path / snapshot_file.SNAPSHOT_FILE).exists() else ""
    raise KnowledgeBaseError(
        f"the knowledge base at {str(path)!r} has lost its ChromaDB database: {snapshot_file.SQLITE_FILE} is "
        f"missing, while its manifest ({MANIFEST}) lists {n_tools} tools{held}. Opening it would give an empty "
        f"registry. Restore {snapshot_file.SQLITE_FILE} from a backup, or delete the folder and rebuild it: "
        f"`toolret index TOOLS --kb {path}` or ToolKnowledgeBase(path).add(tools)"
    )


def release(store: Any) -> None:
    """Release ``store``'s ChromaDB client after a failed open (None, or an in-memory store: nothing)."""
    close = getattr(store, "close", None)
    if callable(close):
        close()


def load_snapshot(writer: IndexWriter, path: Path | None) -> Snapshot:
    """Every stored tool as a snapshot (from the snapshot file when the store was opened from it);
    incomplete tools re-embedded, saved BM25 indexes reused."""
    saved = writer.store.saved if isinstance(writer.store, LocalStore) else None
    if saved is not None:
        hub = load_hubness(path / _ADAPTATION, saved.registry_hash, len(saved.docs)) if path and saved.docs else None
        lexical = _load_lexical(path, saved.docs, saved.registry_hash)
        return build_snapshot(saved.docs, saved.vectors, saved.dim, lexical, hub)
    stored = writer.store.read_all()
    docs = [s.doc for s in stored]
    vectors = [s.vectors for s in stored]
    repair = [i for i, s in enumerate(stored) if not _fields_complete(s.doc, s.vectors, s.field_hashes)]
    if repair:
        logger.warning("re-embedding %d tool(s) whose stored fields were incomplete", len(repair))
        fresh = writer.embed([docs[i] for i in repair])
        for i, vecs in zip(repair, fresh):
            vectors[i] = vecs
        writer.store.upsert([docs[i] for i in repair], fresh)
    dim = next((v.shape[0] for vecs in vectors for v in vecs.values()), 0)
    hub = load_hubness(path / _ADAPTATION, registry_hash(docs), len(docs)) if path is not None and docs else None
    return build_snapshot(docs, vectors, dim, _load_lexical(path, docs), hub)


def opened(writer: IndexWriter) -> None:
    """Opening is over. When ChromaDB was read because the snapshot file was missing, stale or
    damaged, write a fresh one — unless a write happened meanwhile (the stamp moved).

    A dirty manifest (a write not saved since: a writer killed mid-write, or one that never called
    ``save()``) is repaired here, by the first process that can: no write running (the lock of
    :func:`~toolret.index.snapshot_file.repairing`) and nothing written since this process read
    ChromaDB. It saves the derived files as ``save()`` does and clears the mark; otherwise every
    later process would read ChromaDB again (seconds) until the next write.
    """
    store = writer.store
    if not isinstance(store, LocalStore):
        return
    store.end_preload()
    if store.from_file or store.opened_stamp is None or not (store.path / MANIFEST).exists():
        return
    if snapshot_file.is_dirty(store.path):
        _repair(writer, store)
        return
    if store.opened_stamp != snapshot_file.store_stamp(store.path):
        return
    try:
        _write_snapshot_file(store, writer.snapshot, writer.generation, store.opened_stamp)
    except OSError as exc:  # a read-only copy still opens, only not faster next time
        logger.debug("could not write the snapshot file (%s)", exc)


def _repair(writer: IndexWriter, store: LocalStore) -> None:
    """Save the derived files of a dirty knowledge base from what this process read (see :func:`opened`)."""
    with snapshot_file.repairing(store.path) as locked:
        if not locked or store.opened_stamp != snapshot_file.store_stamp(store.path):
            logger.debug("dirty knowledge base left as it is: a write is running or happened since it was read")
            return
        manifest = snapshot_file.read_manifest(store.path) or {}
        try:
            _save_files(store.path, writer, str(manifest.get("config") or writer.config.name), store.opened_stamp)
        except OSError as exc:  # a read-only copy still opens, only not faster next time
            logger.debug("could not repair the knowledge base's files (%s)", exc)
            return
    logger.info(
        "repaired %s: a write had not been saved (an interrupted writer?); later opens read its snapshot file",
        store.path,
    )


def _write_snapshot_file(store: LocalStore, snap: Snapshot, generation: str | None, stamp: Any) -> None:
    info = {
        "toolret_format": FORMAT_VERSION,
        "collection": store.name,
        "embedder": store.embedder_name,
        "embedder_revision": embedder_revision(store.embedder_name),
        "generation": generation,
        "registry_hash": registry_hash(snap.docs),
        "stamp": stamp,
    }
    vectors = [snap.field_vectors(i) for i in range(len(snap))]
    history, meta_docs = store.read_history(), store.read_meta()
    snapshot_file.write(store.path, snap.docs, vectors, dim=snap.dim, info=info, history=history, meta_docs=meta_docs)


def _load_lexical(path: Path | None, docs: list[ToolDoc], known_hash: str = "") -> dict[str, LexicalIndex] | None:
    if path is None or not docs:
        return None
    manifest = path / MANIFEST
    try:
        meta = json.loads(manifest.read_text())
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError) as exc:
        logger.warning("ignoring unreadable %s (%s); rebuilding the lexical index", manifest, exc)
        return None
    if meta.get("registry_hash") != (known_hash or registry_hash(docs)) or meta.get("format") != FORMAT_VERSION:
        return None
    try:
        return {f: LexicalIndex.load(path / _LEXICAL_DIR / f) for f in INDEX_FIELDS}
    except Exception as exc:  # a partial or damaged folder: the index is derived data  # noqa: BLE001
        # The type only: numpy's text would advise loading the file with allow_pickle.
        logger.warning("rebuilding the lexical index: saved copy unreadable (%s)", type(exc).__name__)
        return None


def save(path: Path, writer: IndexWriter, config_name: str) -> None:
    """Write the lexical indexes, the snapshot file, then the manifest, each atomically (temp + rename).

    The snapshot file is written only when the store's change marker is still this writer's
    (no other process wrote since); only then is the manifest's dirty mark cleared. Held under the
    shared write lock, so no opening repair (:func:`opened`) writes the same files meanwhile.
    """
    with snapshot_file.writing(path):
        _save_files(path, writer, config_name)


def _save_files(path: Path, writer: IndexWriter, config_name: str, repair_stamp: Any = None) -> None:
    """What :func:`save` writes; with ``repair_stamp`` (an opening repair, under the exclusive lock),
    the snapshot file is stamped with the state this process read, and the mark is cleared."""
    snap = writer.snapshot
    tmp = path / f".{_LEXICAL_DIR}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for f in INDEX_FIELDS:
        snap.lexical[f].save(tmp / f)
    final = path / _LEXICAL_DIR
    old = path / f".{_LEXICAL_DIR}.old"
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    save_hubness(path / _ADAPTATION, snap.hubness, registry_hash(snap.docs))
    clean = False
    store = writer.store
    if isinstance(store, LocalStore) and repair_stamp is not None:
        _write_snapshot_file(store, snap, writer.generation, repair_stamp)
        clean = True
    elif isinstance(store, LocalStore):
        store.chroma  # noqa: B018 - open before stamping: starting a ChromaDB client writes to its files
        stamp = snapshot_file.store_stamp(path)
        if store.generation() == writer.generation:
            _write_snapshot_file(store, snap, writer.generation, stamp)
            clean = True
    manifest = {
        "format": FORMAT_VERSION,
        "embedder": writer.embedder.name,
        "n_tools": len(snap),
        "registry_hash": registry_hash(snap.docs),
        "config": config_name,
        "dirty": not clean,
    }
    tmp_manifest = path / f".{MANIFEST}.tmp"
    tmp_manifest.write_text(json.dumps(manifest, indent=2))
    os.replace(tmp_manifest, path / MANIFEST)


def _fields_complete(doc: ToolDoc, vectors: dict[str, np.ndarray], hashes: dict[str, str]) -> bool:
    h = doc.content_hash
    for f in INDEX_FIELDS:
        has_text = bool(doc.field_text(f))
        if has_text and (f not in vectors or hashes.get(f) != h):
            return False
    return True


def saved_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` as a folder that holds a saved knowledge base, else a KnowledgeBaseError saying how to build one."""
    folder = Path(path)
    if not folder.is_dir() or not (folder / MANIFEST).exists():
        raise KnowledgeBaseError(
            f"no toolret knowledge base at {str(folder)!r}; build one with `toolret index` or ToolKnowledgeBase(path).add(...)"
        )
    return folder
