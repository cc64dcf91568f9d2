"""The tool knowledge base: every tool of a registry, indexed per field, searchable.

Example:
    >>> from toolret import ToolKnowledgeBase
    >>> def get_weather(city: str) -> str:
    ...     '''Current weather for a city.
    ...
    ...     Args:
    ...         city: City name, e.g. "Paris".
    ...     '''
    >>> def convert_currency(amount: float, to: str) -> float:
    ...     '''Convert an amount of money into another currency.'''
    >>> kb = ToolKnowledgeBase()                      # in memory; pass a path to persist
    >>> _ = kb.add([get_weather, convert_currency])
    >>> kb.search("is it raining in Paris?", k=1).tools[0].name
    'get_weather'
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from toolret.chat_history import as_chat_history
from toolret.config import LearnedWeights, RetrievalConfig
from toolret.documents import INDEX_FIELDS, ToolDoc
from toolret.embedding import Embedder, resolve_embedder
from toolret.errors import (
    InvalidToolError,
    KnowledgeBaseError,
    ToolNotFoundError,
    ToolRetError,
)
from toolret.guards import check_doc_size
from toolret.history import HistorySnapshot
from toolret.lexical import LexicalIndex
from toolret.pipeline import (
    SearchState,
    finish_search,
    stage_fuse,
    stage_plan,
    stage_reflect,
    stage_rerank,
    stage_retrieve,
    validate_query,
)
from toolret.results import SearchResult
from toolret.snapshot import Snapshot, build_snapshot
from toolret.store import FORMAT_VERSION, ChromaStore

__all__ = ["SyncReport", "ToolKnowledgeBase"]

logger = logging.getLogger("toolret")

_MANIFEST = "toolret.json"
_LEXICAL_DIR = "lexical"


class SyncReport(BaseModel):
    """What :meth:`ToolKnowledgeBase.sync` changed, by tool id."""

    model_config = ConfigDict(frozen=True)

    added: list[str]
    updated: list[str]
    removed: list[str]
    unchanged: int


def _registry_hash(docs: Iterable[ToolDoc]) -> str:
    h = hashlib.sha256()
    for doc in docs:
        h.update(doc.id.encode("utf-8", "surrogatepass") + b"\0" + doc.content_hash.encode() + b"\n")
    return h.hexdigest()


class ToolKnowledgeBase:
    """Tool documents, their per-field embeddings and lexical indexes, and the search over them.

    * ``path=None``: in memory (ChromaDB's in-process client). With a path: a ChromaDB
      ``PersistentClient`` directory, with the BM25 indexes saved beside it by :meth:`save`.
      ``client=`` takes any ChromaDB client instead, e.g. an ``HttpClient`` for a shared server.
    * ``embedder``: ``None`` for the packaged all-MiniLM-L6-v2 (offline), a sentence-transformers
      name or path, an :class:`~toolret.embedding.Embedder`, or a ``texts -> vectors`` callable.
    * ``config``: a :class:`RetrievalConfig` or a preset name (``"fast"``).
    * ``expander``: a :class:`toolret.expansion.LLMExpander` that writes profiles, hypothetical
      questions and key topics for every tool added (cached: an unchanged tool costs no call);
      ``offline_expansion=False`` turns off the offline profile (first sentence, name keywords).

    Searches are safe from many threads at once: they read an immutable snapshot, and
    writes (``add``, ``remove``, ``sync``) swap in a new one when complete.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        embedder: Embedder | str | Any = None,
        config: RetrievalConfig | str | None = None,
        client: Any = None,
        collection: str = "toolret",
        llm: Any = None,
        expander: Any = None,
        offline_expansion: bool = True,
    ) -> None:
        self.path = Path(path) if path is not None else None
        #: The LLM (``toolret.llm.LLM``) the ``full`` preset plans with; None runs offline.
        self.llm = llm
        #: A :class:`toolret.expansion.LLMExpander` run on tools as they are added (None: offline only).
        self.expander = expander
        #: Derive the offline profile (first sentence, name keywords) of every tool added.
        self.offline_expansion = offline_expansion
        self.config = RetrievalConfig.resolve(config)
        self._write_lock = threading.RLock()
        self._lock = threading.Lock()
        self._rerankers: dict[tuple[str, int, float], Any] = {}
        self._live: dict[str, Any] = {}
        if self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)
        try:
            self._open(embedder, client, collection)
        except ToolRetError:
            raise
        except Exception as exc:  # ChromaDB reports damaged files with many exception types
            if self.path is None and client is None:
                raise  # in memory there is no stored data to blame
            raise KnowledgeBaseError(_damaged(self.path, exc)) from exc

    def _open(self, embedder: Any, client: Any, collection: str) -> None:
        self._store = ChromaStore(path=str(self.path) if self.path else None, client=client, name=collection)
        stored_name = self._store.existing_embedder()
        if embedder is None and stored_name and not stored_name.startswith("packaged:"):
            if stored_name.startswith("callable:"):
                raise KnowledgeBaseError(
                    f"knowledge base was built with the custom embedder {stored_name!r}; pass it again as embedder="
                )
            embedder = stored_name
        self.embedder: Embedder = resolve_embedder(embedder)
        self._store.open(self.embedder.name)
        self._generation = self._store.generation()  # read before the data: a later write re-triggers refresh
        self._snap = self._load_snapshot()
        self._history = HistorySnapshot.build(*self._store.read_history())
        self.learned: LearnedWeights | None = self._load_learned()

    # ------------------------------------------------------------------ construction
    @classmethod
    def load(cls, path: str | os.PathLike[str], **kwargs: Any) -> ToolKnowledgeBase:
        """Reopen a knowledge base saved at ``path``; an empty or missing directory is an error."""
        folder = Path(path)
        if not folder.is_dir() or not (folder / _MANIFEST).exists():
            raise KnowledgeBaseError(
                f"no toolret knowledge base at {str(folder)!r}; build one with `toolret index` or ToolKnowledgeBase(path).add(...)"
            )
        return cls(folder, **kwargs)

    @classmethod
    def connect(
        cls, host: str = "127.0.0.1", port: int = 8000, *, ssl: bool = False,
        headers: dict[str, str] | None = None, **kwargs: Any,
    ) -> ToolKnowledgeBase:
        """Open (or create) a knowledge base on a ChromaDB server (``chroma run``).

        Many processes may connect to one registry: each searches its own in-memory snapshot
        and sees other processes' writes after :meth:`refresh`. ``collection=`` names the
        registry on the server (several can live side by side); other keyword arguments are
        those of the constructor.
        """
        from toolret.store import http_client

        return cls(client=http_client(host, port, ssl=ssl, headers=headers), **kwargs)

    @classmethod
    def from_tools(cls, tools: Iterable[Any], **kwargs: Any) -> ToolKnowledgeBase:
        """Build an in-memory (or, with ``path=``, persistent) knowledge base from tools."""
        kb = cls(**kwargs)
        kb.add(tools)
        return kb

    def _load_snapshot(self) -> Snapshot:
        stored = self._store.read_all()
        docs = [s.doc for s in stored]
        vectors = [s.vectors for s in stored]
        repair = [i for i, s in enumerate(stored) if not _fields_complete(s.doc, s.vectors, s.field_hashes)]
        if repair:
            logger.warning("re-embedding %d tool(s) whose stored fields were incomplete", len(repair))
            fresh = self._embed_docs([docs[i] for i in repair])
            for i, vecs in zip(repair, fresh):
                vectors[i] = vecs
            self._store.upsert([docs[i] for i in repair], fresh)
        dim = next((v.shape[0] for vecs in vectors for v in vecs.values()), 0)
        lexical = self._load_lexical(docs)
        return build_snapshot(docs, vectors, dim, lexical)

    def _load_lexical(self, docs: list[ToolDoc]) -> dict[str, LexicalIndex] | None:
        if self.path is None or not docs:
            return None
        manifest = self.path / _MANIFEST
        try:
            meta = json.loads(manifest.read_text())
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError) as exc:
            logger.warning("ignoring unreadable %s (%s); rebuilding the lexical index", manifest, exc)
            return None
        if meta.get("registry_hash") != _registry_hash(docs) or meta.get("format") != FORMAT_VERSION:
            return None
        try:
            return {f: LexicalIndex.load(self.path / _LEXICAL_DIR / f) for f in INDEX_FIELDS}
        except Exception as exc:  # a partial or damaged folder: the index is derived data  # noqa: BLE001
            logger.warning("rebuilding the lexical index: saved copy unreadable (%s)", exc)
            return None

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self._snap)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._snap.index_of

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self._snap.docs]

    def docs(self) -> list[ToolDoc]:
        return list(self._snap.docs)

    def get(self, tool_id: str) -> ToolDoc:
        """The ToolDoc stored under ``tool_id``."""
        snap = self._snap
        try:
            return snap.docs[snap.index_of[tool_id]]
        except KeyError:
            raise ToolNotFoundError(f"no tool with id {tool_id!r} in the knowledge base") from None

    def tool(self, tool_id: str) -> Any:
        """The live object (callable, framework tool...) given for ``tool_id``, or None."""
        self.get(tool_id)
        return self._live.get(tool_id)

    def bind(self, objects: Iterable[Any]) -> int:
        """Re-attach live tool objects after reopening a saved knowledge base; returns how many matched."""
        from toolret.ingest import to_tool_doc

        count = 0
        for obj in objects:
            doc = to_tool_doc(obj)
            if doc.id in self._snap.index_of:
                self._live[doc.id] = obj
                count += 1
        return count

    # ------------------------------------------------------------------ search
    def search(
        self, query: str, k: int | Literal["auto"] = 5, *, config: RetrievalConfig | str | None = None,
        history: Iterable[Any] | None = None, llm: Any = None,
    ) -> SearchResult:
        """The ``k`` tools that best serve ``query``, best first, with per-field evidence.

        ``k="auto"`` returns a precise set instead: the tools within ``config.auto_margin``
        of the best score (per sub-task), at most ``config.auto_max_k``. ``history`` is the
        conversation before ``query`` (toolret/LangChain/LlamaIndex chat messages, role/content
        mappings or pairs; see :mod:`toolret.chat_history`): the LLM planner uses it to resolve
        references such as "book a table *there*"; offline searches ignore it. ``llm`` is the
        model this search's LLM steps use instead of the knowledge base's ``llm`` (several
        agents sharing one knowledge base can each bring their own; the knowledge base is not
        changed).
        """
        return finish_search(self._drive(self.begin_search(query, k, config=config, history=history, llm=llm)))

    def begin_search(
        self, query: str, k: int | Literal["auto"] = 5, *, config: RetrievalConfig | str | None = None,
        history: Iterable[Any] | None = None, llm: Any = None,
    ) -> SearchState:
        """A validated, not yet run search, for driving :mod:`toolret.pipeline`'s stages one by one.

        :meth:`search` is ``finish_search`` of every stage run in order on this state; the
        LangGraph subgraph of ``langchain_toolret`` runs the same stages as graph nodes.
        """
        cfg = RetrievalConfig.resolve(config, self.config)
        if cfg.use_learned and self.learned is not None and cfg.learned is None:
            cfg = cfg.model_copy(update={"learned": self.learned})
        text = validate_query(query, k, cfg)
        auto = k == "auto"
        return SearchState(
            snap=self._snap, embedder=self.embedder, query=text, k=cfg.auto_max_k if auto else int(k),
            config=cfg, llm=self.llm if llm is None else llm, history=self._history, cross_encoder=self._cross_encoder(cfg), auto=auto,
            chat=as_chat_history(history),
        )

    @staticmethod
    def _drive(state: SearchState) -> SearchState:
        stage_plan(state)
        stage_retrieve(state)
        stage_fuse(state)
        stage_rerank(state)
        while stage_reflect(state):
            stage_retrieve(state)
        return state

    def _cross_encoder(self, cfg: RetrievalConfig) -> Any:
        """The configured cross-encoder reranker, loaded once per knowledge base (None when unset)."""
        if cfg.reranker == "none" or not cfg.cross_encoder:
            return None
        key = (cfg.cross_encoder, cfg.rerank_top_n, cfg.rerank_weight)
        with self._lock:
            if key not in self._rerankers:
                from toolret.rerank import CrossEncoderReranker

                self._rerankers[key] = CrossEncoderReranker(cfg.cross_encoder, top_n=cfg.rerank_top_n,
                                                            weight=cfg.rerank_weight)
            return self._rerankers[key]

    async def asearch(
        self, query: str, k: int | Literal["auto"] = 5, *, config: RetrievalConfig | str | None = None,
        history: Iterable[Any] | None = None, llm: Any = None,
    ) -> SearchResult:
        """:meth:`search` without blocking the event loop (runs in a worker thread)."""
        return await asyncio.to_thread(self.search, query, k, config=config, history=history, llm=llm)

    # ------------------------------------------------------------------ tool-use memory
    def record(self, query: str, tool_ids: Sequence[str]) -> None:
        """Remember that ``query`` was served by ``tool_ids`` (the tools the agent actually used)."""
        self.record_many([(query, tool_ids)])

    def record_many(self, bundles: Iterable[tuple[str, Sequence[str]]], *, progress: bool = False) -> int:
        """Record many (request, tools used) bundles; each tool id must be in the knowledge base.

        Recorded bundles are persisted with the knowledge base and used by presets whose
        ``history_weight`` is above 0 (``balanced``, ``full``): see :mod:`toolret.history`.
        """
        clean: list[tuple[str, tuple[str, ...]]] = []
        known = self._snap.index_of
        for query, tool_ids in bundles:
            if not isinstance(query, str) or not query.strip():
                raise KnowledgeBaseError("a recorded bundle needs a non-empty request text")
            ids = tuple(dict.fromkeys(tool_ids))
            missing = [t for t in ids if t not in known]
            if missing or not ids:
                raise ToolNotFoundError(
                    f"cannot record {query[:60]!r}: unknown tool id(s) {', '.join(map(repr, missing[:5])) or '(none given)'}"
                )
            clean.append((query.strip(), ids))
        clean = list(dict.fromkeys(clean))
        if not clean:
            return 0
        with self._write_lock:
            vectors = np.concatenate(
                [self.embedder.embed([q for q, _ in clean[i : i + 512]]) for i in range(0, len(clean), 512)]
            )
            self._store.add_history(clean, vectors)
            self._mark_written()
            seen = set(self._history.bundles)
            fresh = [(b, v) for b, v in zip(clean, vectors) if b not in seen and not seen.add(b)]  # type: ignore[func-returns-value]
            if fresh:
                old = self._history
                matrix = np.stack([v for _, v in fresh])
                if len(old):
                    matrix = np.concatenate([old.vectors, matrix])
                self._history = HistorySnapshot.build([*old.bundles, *(b for b, _ in fresh)], matrix)
        return len(clean)

    def fit(
        self, bundles: Iterable[tuple[str, Sequence[str]]] | None = None, *, max_queries: int = 2000
    ) -> LearnedWeights:
        """Learn the scorer's weights from bundles (default: the recorded tool-use memory).

        Pairwise logistic loss over MFTR features with hard negatives (:mod:`toolret.learn`).
        The weights are stored with the knowledge base and used by presets with
        ``use_learned`` (``balanced``, ``full``).
        """
        from toolret.learn import fit_weights

        pairs = list(bundles) if bundles is not None else list(self._history.bundles)
        if not pairs:
            raise KnowledgeBaseError("nothing to fit on: record bundles first (record/record_many) or pass them")
        config = RetrievalConfig.preset("balanced")
        weights = fit_weights(self._snap, self.embedder, self._history, pairs, config, max_queries=max_queries)
        with self._write_lock:
            self._store.put_meta("learned_weights", weights.model_dump_json())
            self._mark_written()
            self.learned = weights
        return weights

    def _load_learned(self) -> LearnedWeights | None:
        text = self._store.get_meta("learned_weights")
        if not text:
            return None
        try:
            weights = LearnedWeights.model_validate_json(text)
        except ValueError as exc:
            logger.warning("ignoring unreadable fitted weights (%s); run fit() again", exc)
            return None
        from toolret.scoring import FEATURE_NAMES

        if weights.features != list(FEATURE_NAMES):
            logger.warning("ignoring fitted weights for other features; run fit() again")
            return None
        return weights

    def clear_history(self) -> None:
        """Forget every recorded bundle."""
        with self._write_lock:
            self._store.clear_history()
            self._mark_written()
            self._history = HistorySnapshot()

    @property
    def history_size(self) -> int:
        return len(self._history)

    # ------------------------------------------------------------------ writing
    def _to_docs(self, tools: Iterable[Any]) -> tuple[list[ToolDoc], dict[str, Any]]:
        from toolret.ingest import to_tool_doc

        docs: list[ToolDoc] = []
        live: dict[str, Any] = {}
        seen: set[str] = set()
        limit = self.config.max_tools
        for position, obj in enumerate(tools):
            if position == limit:  # stop a runaway generator before it is read (and embedded) whole
                raise KnowledgeBaseError(_too_many(f"more than {limit} tools were given", limit))
            doc = check_doc_size(to_tool_doc(obj), self.config.max_doc_chars)
            if doc.id in seen:
                raise InvalidToolError(doc.name, "id", f"id {doc.id!r} appears twice (second at position {position})")
            seen.add(doc.id)
            docs.append(doc)
            if not isinstance(obj, (ToolDoc, dict)):
                live[doc.id] = obj
        return self._expand(docs), live

    def _expand(self, docs: list[ToolDoc]) -> list[ToolDoc]:
        """Pre-retrieval expansion (toolret.expansion): offline profile, then the LLM expander if set."""
        if self.offline_expansion:
            from toolret.expansion import expand_offline

            docs = [expand_offline(d) for d in docs]
        if self.expander is not None and docs:
            docs = self.expander.expand(docs)
        return docs

    def _embed_docs(self, docs: Sequence[ToolDoc], progress: bool = False) -> list[dict[str, np.ndarray]]:
        """Embed every non-empty field of every doc, in batches (one encoder call per batch)."""
        jobs: list[tuple[int, str, str]] = []
        for i, doc in enumerate(docs):
            for f in INDEX_FIELDS:
                text = doc.field_text(f)
                if text:
                    jobs.append((i, f, text))
        out: list[dict[str, np.ndarray]] = [{} for _ in docs]
        batch = 512
        bar = _progress(len(jobs), "embedding tool fields", progress)
        for start in range(0, len(jobs), batch):
            chunk = jobs[start : start + batch]
            vecs = self.embedder.embed([t for _, _, t in chunk])
            for (i, f, _), vec in zip(chunk, vecs):
                out[i][f] = vec
            bar.update(len(chunk))
        bar.close()
        return out

    def _rebuild(self, docs: list[ToolDoc], vectors: list[dict[str, np.ndarray]]) -> None:
        order = sorted(range(len(docs)), key=lambda i: docs[i].id)
        docs = [docs[i] for i in order]
        vectors = [vectors[i] for i in order]
        dim = next((v.shape[0] for vecs in vectors for v in vecs.values()), self._snap.dim)
        self._snap = build_snapshot(docs, vectors, dim)

    def _current(self) -> tuple[dict[str, ToolDoc], dict[str, dict[str, np.ndarray]]]:
        snap = self._snap
        docs = {d.id: d for d in snap.docs}
        vecs = {d.id: {f: snap.vectors[f][i] for f in INDEX_FIELDS if snap.present[f][i]} for i, d in enumerate(snap.docs)}
        return docs, vecs

    def add(self, tools: Iterable[Any], *, progress: bool = False) -> list[str]:
        """Index tools (ToolDocs, function dicts, callables...); an existing id is replaced."""
        new_docs, live = self._to_docs(tools)
        with self._write_lock:
            docs, vecs = self._current()
            total = len(docs.keys() | {d.id for d in new_docs})
            if total > self.config.max_tools:
                raise KnowledgeBaseError(_too_many(f"adding these tools would make {total}", self.config.max_tools))
            changed = [d for d in new_docs if d.id not in docs or docs[d.id].content_hash != d.content_hash]
            fresh = self._embed_docs(changed, progress)
            self._store.upsert(changed, fresh)
            if changed:
                self._mark_written()
            for doc, v in zip(changed, fresh):
                docs[doc.id] = doc
                vecs[doc.id] = v
            self._live.update(live)
            self._rebuild(list(docs.values()), [vecs[i] for i in docs])
        return [d.id for d in new_docs]

    def remove(self, tool_ids: Iterable[str]) -> None:
        """Remove tools by id; an unknown id is an error and nothing is removed."""
        ids = list(tool_ids)
        with self._write_lock:
            docs, vecs = self._current()
            missing = [t for t in ids if t not in docs]
            if missing:
                raise ToolNotFoundError(f"cannot remove unknown tool id(s): {', '.join(map(repr, missing[:5]))}")
            self._store.delete(ids)
            self._mark_written()
            for t in ids:
                docs.pop(t)
                vecs.pop(t)
                self._live.pop(t, None)
            self._rebuild(list(docs.values()), [vecs[i] for i in docs])

    def sync(self, tools: Iterable[Any], *, progress: bool = False, prefix: str | None = None) -> SyncReport:
        """Make the knowledge base hold exactly ``tools``: add new, update changed, remove gone.

        Only added or changed tools are embedded (compared by content hash). With ``prefix``,
        only tools whose id starts with it are managed: the others stay as they are, and
        every given tool must carry the prefix. That is how one source (an MCP server, an
        API) is synced into a registry it shares with others.
        """
        new_docs, live = self._to_docs(tools)
        if prefix is not None:
            stray = [d.id for d in new_docs if not d.id.startswith(prefix)]
            if stray:
                raise InvalidToolError(stray[0], "id", f"sync(prefix={prefix!r}) was given a tool outside that prefix")
        with self._write_lock:
            docs, vecs = self._current()
            kept = [d for t, d in docs.items() if prefix is not None and not t.startswith(prefix)]
            wanted = {d.id: d for d in [*kept, *new_docs]}
            if len(wanted) > self.config.max_tools:
                raise KnowledgeBaseError(_too_many(f"this sync would make {len(wanted)}", self.config.max_tools))
            added = [d for d in new_docs if d.id not in docs]
            updated = [d for d in new_docs if d.id in docs and docs[d.id].content_hash != d.content_hash]
            removed = [t for t in docs if t not in wanted]
            changed = added + updated
            fresh = self._embed_docs(changed, progress)
            self._store.upsert(changed, fresh)
            if removed:
                self._store.delete(removed)
            if changed or removed:
                self._mark_written()
            for doc, v in zip(changed, fresh):
                vecs[doc.id] = v
            self._live = {t: o for t, o in self._live.items() if t in wanted}
            self._live.update(live)
            self._rebuild(list(wanted.values()), [vecs[t] for t in wanted])
        return SyncReport(
            added=[d.id for d in added], updated=[d.id for d in updated], removed=removed,
            unchanged=len(new_docs) - len(changed),
        )

    def refresh(self) -> SyncReport:
        """Take in what other processes wrote to this knowledge base since it was opened.

        For a registry shared on a ChromaDB server: searches run on this process's snapshot
        and never see another process's writes on their own; ``refresh()`` does, by
        difference (only new or changed tools are read, nothing is re-embedded). It is cheap
        when nothing changed (one read of the change marker), so call it on a timer or when
        told of a change. Returns what changed, as :meth:`sync` does.
        """
        from toolret.refresh import read_changes

        with self._write_lock:
            generation = self._store.generation()
            if generation is not None and generation == self._generation:
                return SyncReport(added=[], updated=[], removed=[], unchanged=len(self._snap))
            changes = read_changes(self._store, self._snap)
            if changes.changed:
                self._rebuild(changes.docs, changes.vectors)
                self._live = {t: o for t, o in self._live.items() if t in self._snap.index_of}
            self._history = HistorySnapshot.build(*self._store.read_history())
            self.learned = self._load_learned()
            self._generation = generation if changes.consistent else None
        return SyncReport(
            added=changes.added, updated=changes.updated, removed=changes.removed,
            unchanged=len(changes.docs) - len(changes.added) - len(changes.updated),
        )

    def _mark_written(self) -> None:
        """Publish a new change marker after a write (readers' ``refresh`` looks for it)."""
        before = self._store.generation()
        marker = self._store.bump_generation()
        # Another writer got in since our last look: our snapshot may lack its change.
        self._generation = marker if before == self._generation else None

    def save(self) -> None:
        """Write the lexical indexes and manifest beside the ChromaDB data (atomically).

        ChromaDB persists documents and embeddings as they are written; this saves the
        derived BM25 indexes so reopening skips rebuilding them. A crash mid-save leaves the
        previous files or none, and reopening rebuilds whatever is missing.
        """
        if self.path is None:
            raise KnowledgeBaseError("this knowledge base lives in memory; create it with a path to save it")
        with self._write_lock:
            snap = self._snap
            tmp = self.path / f".{_LEXICAL_DIR}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            for f in INDEX_FIELDS:
                snap.lexical[f].save(tmp / f)
            final = self.path / _LEXICAL_DIR
            old = self.path / f".{_LEXICAL_DIR}.old"
            shutil.rmtree(old, ignore_errors=True)
            if final.exists():
                final.rename(old)
            tmp.rename(final)
            shutil.rmtree(old, ignore_errors=True)
            manifest = {
                "format": FORMAT_VERSION,
                "embedder": self.embedder.name,
                "n_tools": len(snap),
                "registry_hash": _registry_hash(snap.docs),
                "config": self.config.name,
            }
            tmp_manifest = self.path / f".{_MANIFEST}.tmp"
            tmp_manifest.write_text(json.dumps(manifest, indent=2))
            os.replace(tmp_manifest, self.path / _MANIFEST)

    def close(self) -> None:
        """Free an in-memory knowledge base's collections (a persistent one keeps its data)."""
        if not self._store.persistent:
            self._store.drop()

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "memory"
        return f"ToolKnowledgeBase({len(self)} tools, {where}, embedder={self.embedder.name!r})"


def _damaged(path: Path | None, exc: Exception) -> str:
    where = f"at {str(path)!r}" if path is not None else "on the ChromaDB server"
    rebuild = f"`toolret index TOOLS --kb {path}`" if path is not None else "ToolKnowledgeBase.connect(...).sync(tools)"
    return (f"cannot open the knowledge base {where}: {type(exc).__name__}: {exc}. Its ChromaDB data is damaged "
            "or unreadable (a copy or disk write that did not finish, another program writing it, a full disk). "
            f"Restore it from a backup, or delete it and rebuild: {rebuild} or ToolKnowledgeBase(path).add(tools)")


def _too_many(what: str, limit: int) -> str:
    return (f"{what}; a knowledge base holds at most max_tools={limit} tools (RetrievalConfig.max_tools). "
            "Raise it with ToolKnowledgeBase(config=RetrievalConfig(max_tools=...)) or split the registry")


def _fields_complete(doc: ToolDoc, vectors: dict[str, np.ndarray], hashes: dict[str, str]) -> bool:
    h = doc.content_hash
    for f in INDEX_FIELDS:
        has_text = bool(doc.field_text(f))
        if has_text and (f not in vectors or hashes.get(f) != h):
            return False
    return True


class _NullBar:
    def update(self, n: int) -> None: ...
    def close(self) -> None: ...


def _progress(total: int, desc: str, enabled: bool) -> Any:
    if not enabled or total == 0:
        return _NullBar()
    import sys

    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="text", disable=not sys.stderr.isatty())
