"""The saved snapshot file (``snapshot.npz``): open a saved knowledge base without ChromaDB.

ChromaDB is the store of record, but ``import chromadb`` alone costs a fresh process most of a
second, and reading every stored vector back through it costs more. :func:`write` saves what a
search needs (documents, per-field vectors, the recorded history, the metadata documents such
as fitted weights, the change marker and the embedder's name) in one uncompressed ``.npz``
beside the manifest; :func:`read` returns it only when it provably describes the ChromaDB data
as it is now, so a reader never searches a stale copy silently:

* **Stamp.** The file records the state of ``chroma.sqlite3`` (and its ``-wal`` when present)
  when it was written: size, modification time and SQLite's file change counter, which every
  committed write transaction increments. ChromaDB writes every change (tools, fields, history,
  the change marker) through that file, so any write since, by any process, toolret or not,
  changes the stamp and the file is ignored. So does opening a ChromaDB client there (the
  client writes on start): a process that opened ChromaDB invalidates the file, and the next
  cold open reads ChromaDB and writes a fresh one.
* **Dirty mark.** A writer sets ``"dirty": true`` in the manifest before each ChromaDB write;
  :func:`toolret.index.persistence.save` clears it after writing this file. A crash between the
  two, or a write not followed by ``save()``, leaves the mark, and the file is not trusted.
* **Repair.** A write (ChromaDB and the derived files) holds a shared lock on ``.toolret.lock``
  (:func:`writing`) while it runs, which the system drops when a writer dies (``kill -9``). A
  process that opened a dirty knowledge base through ChromaDB takes the lock exclusively, without
  waiting (:func:`repairing`): when no write is running and the stamp has not moved since it read
  ChromaDB, what it read is what ChromaDB holds, and it saves the derived files and clears the
  mark, so later processes open from this file again instead of each reading ChromaDB. Where the
  system has no ``flock`` (Windows), nothing is locked and nothing is repaired on open.

Everything is read with ``allow_pickle=False``: arrays are plain numbers, documents JSON bytes.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc

__all__ = [
    "MANIFEST",
    "SNAPSHOT_FILE",
    "SQLITE_FILE",
    "SavedState",
    "is_dirty",
    "mark_dirty",
    "read",
    "read_manifest",
    "repairing",
    "store_stamp",
    "write",
    "writing",
]

logger = logging.getLogger("toolret")

MANIFEST = "toolret.json"
SNAPSHOT_FILE = "snapshot.npz"
#: Version of this file's layout; another value is ignored (the knowledge base reopens through ChromaDB).
FILE_FORMAT = 1
#: ChromaDB's database file in a knowledge base's folder.
SQLITE_FILE = "chroma.sqlite3"
_SQLITE = SQLITE_FILE


@dataclass(frozen=True)
class SavedState:
    """What :func:`read` found: enough to build a snapshot and answer the first reads."""

    generation: str | None
    embedder: str
    #: :func:`toolret.index.embedding.embedder_revision` of the weights that made the vectors ("" if none).
    embedder_revision: str
    registry_hash: str
    docs: list[ToolDoc]
    vectors: list[dict[str, np.ndarray]]
    dim: int
    history: tuple[list[tuple[str, tuple[str, ...]]], np.ndarray]
    meta_docs: dict[str, str]


def store_stamp(path: Path) -> list[list[Any]]:
    """Size, mtime and SQLite header (change counter, version) of the ChromaDB files; [] if none."""
    stamp: list[list[Any]] = []
    for name in (_SQLITE, f"{_SQLITE}-wal"):
        file = path / name
        try:
            with open(file, "rb") as fh:
                st = os.fstat(fh.fileno())
                header = fh.read(100)
        except FileNotFoundError:
            continue
        stamp.append([name, st.st_size, st.st_mtime_ns, header[24:28].hex() + header[92:100].hex()])
    return stamp


#: The lock file writes hold shared and an opening repair holds exclusively (see the module doc).
LOCK_FILE = ".toolret.lock"


def _lock_handle(path: Path) -> Any:
    """An open handle on the lock file, or None where locks cannot be taken (no flock, read-only folder)."""
    try:
        import fcntl  # noqa: F401 - POSIX only
    except ImportError:  # pragma: no cover - Windows
        return None
    try:
        return open(path / LOCK_FILE, "a+b")  # closed by the caller, which releases the lock
    except OSError:
        return None


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Hold the shared write lock of the knowledge base at ``path`` for the block (many writers may
    hold it at once; an opening repair waits for none of them, it skips)."""
    handle = _lock_handle(path)
    if handle is None:
        yield
        return
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_SH)
        yield
    finally:
        handle.close()


@contextmanager
def repairing(path: Path) -> Iterator[bool]:
    """The exclusive lock, if no write holds the shared one now (True), without waiting (else False)."""
    handle = _lock_handle(path)
    if handle is None:
        yield False
        return
    import fcntl

    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        handle.close()


def read_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest as a dict, or None when it is missing or unreadable."""
    return _manifest(path)


def _manifest(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    tmp = path / f".{MANIFEST}.{uuid.uuid4().hex[:8]}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2))
    os.replace(tmp, path / MANIFEST)


def is_dirty(path: Path) -> bool:
    """True when a write may have reached ChromaDB after the snapshot file (or the manifest is unreadable)."""
    manifest = _manifest(path)
    return manifest is None or bool(manifest.get("dirty", False))


def mark_dirty(path: Path) -> None:
    """Set the dirty mark before a ChromaDB write (a never-saved knowledge base has no manifest: nothing to mark)."""
    manifest = _manifest(path)
    if manifest is not None and not manifest.get("dirty", False):
        _write_manifest(path, {**manifest, "dirty": True})


def _json_array(value: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"), dtype=np.uint8)


def _from_json_array(array: np.ndarray) -> Any:
    return json.loads(array.tobytes().decode("utf-8", "surrogatepass"))


def write(
    path: Path,
    docs: Sequence[ToolDoc],
    vectors: Sequence[dict[str, np.ndarray]],
    *,
    dim: int,
    info: dict[str, Any],
    history: tuple[Sequence[tuple[str, Sequence[str]]], np.ndarray],
    meta_docs: dict[str, str],
) -> None:
    """Write the file atomically (a temporary file, then a rename). ``info`` holds the
    collection, embedder, generation, registry hash and the stamp taken before ChromaDB was read."""
    arrays: dict[str, np.ndarray] = {}
    for f in INDEX_FIELDS:
        have = [i for i, v in enumerate(vectors) if f in v]
        arrays[f"rows__{f}"] = np.asarray(have, dtype=np.int64)
        arrays[f"vectors__{f}"] = (
            np.stack([np.asarray(vectors[i][f], dtype=np.float32) for i in have])
            if have
            else np.zeros((0, dim), dtype=np.float32)
        )
    bundles, history_vectors = history
    arrays["meta"] = _json_array({**info, "format": FILE_FORMAT, "dim": dim, "n_tools": len(docs)})
    arrays["docs"] = _json_array([d.model_dump(mode="json") for d in docs])
    arrays["history_bundles"] = _json_array([[q, list(t)] for q, t in bundles])
    arrays["history_vectors"] = np.asarray(history_vectors, dtype=np.float32)
    arrays["meta_docs"] = _json_array(meta_docs)
    tmp = path / f".{SNAPSHOT_FILE}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, path / SNAPSHOT_FILE)
    finally:
        tmp.unlink(missing_ok=True)


def read(path: Path, collection: str, toolret_format: int) -> SavedState | None:
    """The saved state when it matches ChromaDB's files now and the manifest is clean; else None (why at DEBUG)."""
    file = path / SNAPSHOT_FILE
    if not file.exists():
        return None
    if is_dirty(path):
        logger.debug("snapshot file ignored: the manifest says a write followed it")
        return None
    try:
        with np.load(file, allow_pickle=False) as npz:
            info = _from_json_array(npz["meta"])
            if (
                info.get("format") != FILE_FORMAT
                or info.get("toolret_format") != toolret_format
                or info.get("collection") != collection
                or info.get("stamp") != store_stamp(path)
            ):
                logger.debug("snapshot file ignored: stale or another format")
                return None
            docs = [ToolDoc.model_validate(d) for d in _from_json_array(npz["docs"])]
            vectors: list[dict[str, np.ndarray]] = [{} for _ in docs]
            for f in INDEX_FIELDS:
                matrix = npz[f"vectors__{f}"]
                for r, i in enumerate(npz[f"rows__{f}"].tolist()):
                    vectors[i][f] = matrix[r]
            bundles = [(str(q), tuple(str(t) for t in ts)) for q, ts in _from_json_array(npz["history_bundles"])]
            history = (bundles, npz["history_vectors"])
            meta_docs = {str(k): str(v) for k, v in _from_json_array(npz["meta_docs"]).items()}
    except Exception as exc:  # a damaged or foreign file is derived data: read ChromaDB instead  # noqa: BLE001
        # Not the exception's text: numpy's would advise loading the file "unsafely" with
        # allow_pickle, and nothing of a knowledge base is ever unpickled.
        logger.warning(
            "ignoring the unreadable snapshot file %s (%s: not a snapshot file this toolret wrote); the knowledge "
            "base is read from ChromaDB and the file will be rebuilt",
            file,
            type(exc).__name__,
        )
        return None
    return SavedState(
        generation=info.get("generation"),
        embedder=str(info.get("embedder", "")),
        embedder_revision=str(info.get("embedder_revision", "")),
        registry_hash=str(info.get("registry_hash", "")),
        docs=docs,
        vectors=vectors,
        dim=int(info["dim"]),
        history=history,
        meta_docs=meta_docs,
    )
