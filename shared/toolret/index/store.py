"""ChromaDB storage of a knowledge base: tool documents and per-field embeddings.

Two collections per knowledge base:
* ``<name>_tools``: one record per tool; the document is the ToolDoc as JSON, the metadata
  its name and content hash. A tool exists in the knowledge base iff it has this record.
* ``<name>_fields``: one record per (tool, non-empty field) holding that field's embedding,
  metadata ``tool_id``, ``field`` and the tool's content hash. The field's text is not stored
  again (``ToolDoc.field_text`` derives it from the tool record): writing it cost a third of
  the upsert (bfcl: 9.4 s -> 6.1 s for 9,060 field records) and nothing reads it.

Writes put field records first and the tool record last, and removals go the other way,
so an interrupted write never leaves a tool record without its fields; field records
without a tool record are orphans that :meth:`ChromaStore.read_all` ignores.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc
from toolret.errors import InvalidToolError, KnowledgeBaseError, ModelMismatchError

__all__ = ["FORMAT_VERSION", "ChromaStore", "StoredTool", "field_record_id", "http_client", "stale_weights_message"]

logger = logging.getLogger("toolret")

FORMAT_VERSION = 1
_SEP = "::field::"


#: ChromaDB builds an HNSW graph for every collection, but toolret searches its in-memory
#: matrices and never queries that graph: build a cheap one (writes ~3x faster at 10k tools).
#: Applies to newly created collections; existing ones keep theirs.
_CHEAP_HNSW = {"hnsw:construction_ef": 16, "hnsw:M": 4, "hnsw:sync_threshold": 100_000}


def field_record_id(tool_id: str, field: str) -> str:
    return f"{tool_id}{_SEP}{field}"


@dataclass(frozen=True)
class StoredTool:
    doc: ToolDoc
    vectors: dict[str, np.ndarray]
    field_hashes: dict[str, str]


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def http_client(
    host: str = "127.0.0.1", port: int = 8000, *, ssl: bool = False, headers: dict[str, str] | None = None
) -> Any:
    """A ChromaDB ``HttpClient`` for a server (``chroma run``), checked with a heartbeat.

    An unreachable server raises :class:`KnowledgeBaseError` naming the address, instead of
    failing later on the first read.
    """
    import chromadb

    try:
        client = chromadb.HttpClient(host=host, port=port, ssl=ssl, headers=headers, settings=_settings())
        client.heartbeat()
    except Exception as exc:  # connection errors come in many types
        scheme = "https" if ssl else "http"
        raise KnowledgeBaseError(
            f"no ChromaDB server answers at {scheme}://{host}:{port} ({exc}); start one with "
            f"`chroma run --path DIR --host {host} --port {port}`"
        ) from exc
    return client


def _forget_failed_system(path: str) -> None:
    """Drop the system ChromaDB cached for ``path`` when starting it failed and no client uses it.

    ChromaDB caches one system per directory for the whole process, before starting it; when the
    start fails (damaged files) the broken system stays, and every later open of that path fails
    (``'RustBindingsAPI' object has no attribute 'bindings'``), even after the files are restored
    from a backup, as the error message advises.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    systems = getattr(SharedSystemClient, "_identifier_to_system", None)
    counts = getattr(SharedSystemClient, "_identifier_to_refcount", {})
    if isinstance(systems, dict) and not counts.get(path):
        systems.pop(path, None)


def stale_weights_message(name: str, embedder: str, stored: str, current: str) -> str:
    """The error for a knowledge base whose vectors came from other weights of the same model name."""
    built = f"revision {stored}" if stored else "the first release (before revisions were recorded)"
    return (
        f"knowledge base {name!r} was built with {embedder} {built}; this toolret ships revision {current}, "
        "whose vectors differ, so searching it would compare vectors of two models. Index the tools again into "
        "a new knowledge base (`toolret index TOOLS --kb NEW`, or ToolKnowledgeBase(NEW).add(tools)), or keep "
        "the toolret release that built it"
    )


class ChromaStore:
    """Reads and writes one knowledge base in a ChromaDB client.

    ``client`` may be any ChromaDB client (``PersistentClient``, ``HttpClient``...); with
    ``path`` a ``PersistentClient`` is opened there; with neither, an in-memory client with a
    unique collection name, so several in-memory knowledge bases never share data.
    """

    def __init__(self, *, path: str | None = None, client: Any = None, name: str = "toolret") -> None:
        import chromadb

        if len(name) < 3:
            raise KnowledgeBaseError(f"collection name {name!r} is too short: ChromaDB needs 3 or more characters")
        self.persistent = path is not None or client is not None
        #: True when this store made its client (and so may close it); a client you pass stays yours.
        self.owns_client = client is None
        if client is not None:
            self.client = client
        elif path is not None:
            try:
                self.client = chromadb.PersistentClient(path=path, settings=_settings())
            except Exception:
                _forget_failed_system(path)
                raise
        else:
            self.client = chromadb.EphemeralClient(settings=_settings())
            name = f"{name}_{uuid.uuid4().hex[:12]}"
        self.name = name
        self._tools: Any = None
        self._fields: Any = None

    # ------------------------------------------------------------------ collections
    def existing_embedder(self) -> str | None:
        """The embedder a stored knowledge base was built with, or None if there is none."""
        try:
            col = self.client.get_collection(f"{self.name}_tools", embedding_function=None)
        except Exception:  # noqa: BLE001
            return None
        meta = col.metadata or {}
        version = meta.get("toolret_format")
        if version != FORMAT_VERSION:
            raise KnowledgeBaseError(
                f"knowledge base {self.name!r} has format {version!r}, this toolret reads format "
                f"{FORMAT_VERSION}; rebuild it with `toolret index` (or ToolKnowledgeBase.add)"
            )
        return str(meta.get("embedder", ""))

    def existing_revision(self) -> str:
        """:func:`~toolret.index.embedding.embedder_revision` as stored ("" when none was stored)."""
        try:
            col = self.client.get_collection(f"{self.name}_tools", embedding_function=None)
        except Exception:  # noqa: BLE001
            return ""
        return str((col.metadata or {}).get("embedder_revision", ""))

    def open(self, embedder_name: str) -> None:
        """Open (or create) the collections, refusing a different embedding model or other weights under its name."""
        from toolret.index.embedding import embedder_revision

        stored = self.existing_embedder()
        revision = embedder_revision(embedder_name)
        if stored is not None and stored == embedder_name and (built := self.existing_revision()) != revision:
            raise ModelMismatchError(stale_weights_message(self.name, embedder_name, built, revision))
        if stored is not None and stored != embedder_name:
            from toolret.index.framework_embedding import pass_again

            again = pass_again(stored)
            advice = (
                f"{again}, or rebuild it with the new embedder"
                if again is not None
                else f"open it with embedder={stored!r} (or embedder=None, which picks the model it was built "
                "with) or rebuild it with the new embedder"
            )
            raise ModelMismatchError(
                f"knowledge base {self.name!r} was built with embedder {stored!r} but was opened with "
                f"{embedder_name!r}; {advice}"
            )
        meta = {
            "toolret_format": FORMAT_VERSION,
            "embedder": embedder_name,
            "embedder_revision": revision,
            "hnsw:space": "cosine",
            **_CHEAP_HNSW,
        }
        self._tools = self.client.get_or_create_collection(f"{self.name}_tools", metadata=meta, embedding_function=None)
        self._fields = self.client.get_or_create_collection(
            f"{self.name}_fields", metadata=meta, embedding_function=None
        )
        self._history = self.client.get_or_create_collection(
            f"{self.name}_history", metadata=meta, embedding_function=None
        )
        self._meta = self.client.get_or_create_collection(f"{self.name}_meta", metadata=meta, embedding_function=None)

    def settle(self) -> None:
        """Read one record of each collection, so a local ChromaDB applies now what it still holds only
        in its log (records a writer killed inside its write logged but did not apply): it does so on a
        collection's first read, writing to its files, and the reads that follow write nothing. Opening
        calls it before taking the files' stamp, which must move only for another process's writes."""
        for col in (self._tools, self._fields, self._history, self._meta):
            col.get(limit=1, include=[])

    def close(self) -> None:
        """Release the client this store made. ChromaDB keeps one system per directory for the
        whole process: one left behind by a failed open breaks every later open of that path
        (``'RustBindingsAPI' object has no attribute 'bindings'``), even after the files are restored."""
        close = getattr(self.client, "close", None)
        if self.owns_client and callable(close):
            try:
                close()
            except Exception as exc:  # noqa: BLE001 - a broken client is what is being released
                logger.debug("closing the ChromaDB client failed (%s)", exc)

    def drop(self) -> None:
        """Delete both collections (used to free in-memory knowledge bases)."""
        for suffix in ("_tools", "_fields", "_history", "_meta"):
            try:
                self.client.delete_collection(f"{self.name}{suffix}")
            except Exception:  # noqa: BLE001, S110 - already gone
                pass

    # ------------------------------------------------------------------ writes
    def _batches(self, n: int) -> Iterator[slice]:
        size = max(1, min(5000, int(self.client.get_max_batch_size())))
        for start in range(0, n, size):
            yield slice(start, start + size)

    def upsert(self, docs: Sequence[ToolDoc], vectors: Sequence[dict[str, np.ndarray]]) -> None:
        """Write tools and their field vectors; fields first, tool records last."""
        f_ids: list[str] = []
        f_emb: list[np.ndarray] = []  # stacked per batch: 100k tools as Python float lists would take GBs
        f_meta: list[dict[str, Any]] = []
        stale: list[str] = []
        for doc, fields in zip(docs, vectors):
            h = doc.content_hash
            for field in INDEX_FIELDS:
                rid = field_record_id(doc.id, field)
                if field in fields:
                    f_ids.append(rid)
                    f_emb.append(np.asarray(fields[field], dtype=np.float32))
                    f_meta.append({"tool_id": doc.id, "field": field, "hash": h})
                else:
                    stale.append(rid)
        if stale:
            self._fields.delete(ids=stale)
        for part in self._batches(len(f_ids)):
            self._fields.upsert(ids=f_ids[part], embeddings=np.stack(f_emb[part]), metadatas=f_meta[part])
        t_ids = [d.id for d in docs]
        t_docs = [d.model_dump_json() for d in docs]
        t_meta = [{"name": d.name, "hash": d.content_hash} for d in docs]
        t_emb = [np.asarray(_tool_vector(v), dtype=np.float32) for v in vectors]
        for part in self._batches(len(t_ids)):
            self._tools.upsert(
                ids=t_ids[part], embeddings=np.stack(t_emb[part]), documents=t_docs[part], metadatas=t_meta[part]
            )

    def delete(self, tool_ids: Sequence[str]) -> None:
        """Remove tools; tool records first, then their field records."""
        ids = list(tool_ids)
        for part in self._batches(len(ids)):
            self._tools.delete(ids=ids[part])
        f_ids = [field_record_id(t, f) for t in ids for f in INDEX_FIELDS]
        for part in self._batches(len(f_ids)):
            self._fields.delete(ids=f_ids[part])

    def add_history(self, bundles: Sequence[tuple[str, Sequence[str]]], vectors: np.ndarray) -> None:
        """Record (request, tools used) bundles with the request's embedding (idempotent per bundle)."""
        ids = [_history_id(q, t) for q, t in bundles]
        docs = [q for q, _ in bundles]
        metas = [{"tools": json.dumps(list(t), ensure_ascii=False)} for _, t in bundles]
        embs = [v.astype(float).tolist() for v in vectors]
        for part in self._batches(len(ids)):
            self._history.upsert(ids=ids[part], embeddings=embs[part], documents=docs[part], metadatas=metas[part])

    def put_meta(self, key: str, text: str) -> None:
        """Store a small JSON document (e.g. fitted weights) with the knowledge base."""
        self._meta.upsert(ids=[key], embeddings=[[1.0]], documents=[text], metadatas=[{"key": key}])

    def get_meta(self, key: str) -> str | None:
        got = self._meta.get(ids=[key], include=["documents"])
        docs = got.get("documents") or []
        return docs[0] if docs else None

    def read_meta(self) -> dict[str, str]:
        """Every small metadata document by key (fitted weights, the change marker...)."""
        got = self._meta.get(include=["documents"])
        return {rid: str(doc or "") for rid, doc in zip(got["ids"], got.get("documents") or [])}

    def clear_history(self) -> None:
        ids = self._history.get(include=[])["ids"]
        for part in self._batches(len(ids)):
            self._history.delete(ids=ids[part])

    def read_history(self) -> tuple[list[tuple[str, tuple[str, ...]]], np.ndarray]:
        bundles: list[tuple[str, tuple[str, ...]]] = []
        vectors: list[np.ndarray] = []
        for _rid, emb, document, meta in self._read(self._history, ["embeddings", "documents", "metadatas"]):
            try:
                tools = tuple(str(t) for t in json.loads((meta or {}).get("tools", "[]")))
            except (json.JSONDecodeError, TypeError):
                logger.warning("skipping a corrupt history record in %r", self.name)
                continue
            bundles.append((str(document or ""), tools))
            vectors.append(np.asarray(emb, dtype=np.float32))
        matrix = np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
        return bundles, matrix

    # ------------------------------------------------------------------ change marker
    def bump_generation(self) -> str:
        """Record that the registry changed; readers compare it in ``refresh()``.

        Written after the data, so a reader that sees a new generation sees the data too.
        """
        marker = uuid.uuid4().hex
        self.put_meta("generation", marker)
        return marker

    def generation(self) -> str | None:
        """The last write's marker, or None for a knowledge base written before markers existed."""
        return self.get_meta("generation")

    # ------------------------------------------------------------------ reads
    def read_index(self) -> dict[str, str]:
        """Every stored tool id with its content hash (metadata only: no documents, no vectors)."""
        return {rid: str((meta or {}).get("hash", "")) for rid, _e, _d, meta in self._read(self._tools, ["metadatas"])}

    def read_tools(self, tool_ids: Sequence[str]) -> list[StoredTool]:
        """The stored tools among ``tool_ids`` with their field vectors (missing ids are skipped)."""
        ids = list(tool_ids)
        docs: dict[str, ToolDoc] = {}
        vectors: dict[str, dict[str, np.ndarray]] = {}
        hashes: dict[str, dict[str, str]] = {}
        for part in self._batches(len(ids)):
            got = self._tools.get(ids=ids[part], include=["documents"])
            for rid, document in zip(got["ids"], got.get("documents") or []):
                try:
                    docs[rid] = ToolDoc.model_validate(json.loads(document))
                except (json.JSONDecodeError, TypeError, InvalidToolError) as exc:
                    raise KnowledgeBaseError(f"stored tool {rid!r} in {self.name!r} is corrupt ({exc})") from exc
                vectors[rid], hashes[rid] = {}, {}
        f_ids = [field_record_id(t, f) for t in docs for f in INDEX_FIELDS]
        for part in self._batches(len(f_ids)):
            got = self._fields.get(ids=f_ids[part], include=["embeddings", "metadatas"])
            embeddings = got.get("embeddings")
            for i, meta in enumerate(got.get("metadatas") or []):
                tid = (meta or {}).get("tool_id")
                if tid in docs and embeddings is not None:
                    vectors[tid][meta["field"]] = np.asarray(embeddings[i], dtype=np.float32)
                    hashes[tid][meta["field"]] = str(meta.get("hash", ""))
        return [StoredTool(docs[t], vectors[t], hashes[t]) for t in sorted(docs)]

    def _read(self, collection: Any, include: list[str]) -> Iterator[tuple[str, Any, Any, Any]]:
        total = collection.count()
        page = 5000
        for offset in range(0, total, page):
            got = collection.get(include=include, limit=page, offset=offset)
            embeddings = got.get("embeddings")
            documents = got.get("documents") or [None] * len(got["ids"])
            metadatas = got.get("metadatas") or [None] * len(got["ids"])
            for i, rid in enumerate(got["ids"]):
                emb = embeddings[i] if embeddings is not None else None
                yield rid, emb, documents[i], metadatas[i]

    def read_all(self) -> list[StoredTool]:
        """Every stored tool with its field vectors, in a stable (id-sorted) order."""
        docs: dict[str, ToolDoc] = {}
        for rid, _emb, document, _meta in self._read(self._tools, ["documents"]):
            try:
                docs[rid] = ToolDoc.model_validate(json.loads(document))
            except (json.JSONDecodeError, TypeError, InvalidToolError) as exc:
                raise KnowledgeBaseError(
                    f"stored tool {rid!r} in {self.name!r} is corrupt ({exc}); rebuild the knowledge base"
                ) from exc
        vectors: dict[str, dict[str, np.ndarray]] = {tid: {} for tid in docs}
        hashes: dict[str, dict[str, str]] = {tid: {} for tid in docs}
        for _rid, emb, _doc, meta in self._read(self._fields, ["embeddings", "metadatas"]):
            tid = (meta or {}).get("tool_id")
            if tid not in docs:
                continue  # orphan of an interrupted write
            vectors[tid][meta["field"]] = np.asarray(emb, dtype=np.float32)
            hashes[tid][meta["field"]] = str(meta.get("hash", ""))
        return [StoredTool(docs[t], vectors[t], hashes[t]) for t in sorted(docs)]


def _history_id(query: str, tools: Sequence[str]) -> str:
    import hashlib

    key = json.dumps([query, list(tools)], ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _tool_vector(fields: dict[str, np.ndarray]) -> np.ndarray:
    """The tool-level vector ChromaDB indexes: the description field's embedding."""
    if "description" in fields:
        return fields["description"]
    return next(iter(fields.values()))
