"""The tool knowledge base: every tool of a registry, indexed per field, searchable.

A facade: writes go through :class:`~toolret.index.writer.IndexWriter` (one locked change-set
path), files through :mod:`toolret.index.persistence`, the tool-use memory through
:class:`~toolret.memory.usage_log.UsageLog`, and every search through one
:class:`~toolret.search.search.Search`.

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

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typing_extensions import Unpack

from toolret.errors import KnowledgeBaseError, ToolNotFoundError, ToolRetError
from toolret.index.embedding import warm_up_saved

if TYPE_CHECKING:  # the rest is imported where it is used: opening starts the model's load first (cold start)
    from toolret.config import K, LearnedWeights, RetrievalConfig
    from toolret.documents.tool_doc import ToolDoc
    from toolret.index.embedding import Embedder
    from toolret.index.writer import SyncReport
    from toolret.results import SearchResult
    from toolret.search.search import Search, SearchOptions

__all__ = ["ToolKnowledgeBase"]  # SyncReport, which it returns, is toolret.SyncReport (toolret.index.writer)


class ToolKnowledgeBase:
    """Tool documents, their per-field embeddings and lexical indexes, and the search over them.

    * ``path=None``: in memory. With a path: a ChromaDB directory, BM25 indexes saved beside it by
      :meth:`save`. ``client=`` takes any ChromaDB client, e.g. an ``HttpClient`` (shared server).
    * ``embedder``: ``None`` for the packaged toolret-embed-mini (offline; ``"packaged:all-MiniLM-L6-v2-onnx-int8"``
      for the stock MiniLM), a sentence-transformers
      name or path, an :class:`~toolret.index.embedding.Embedder`, or a ``texts -> vectors`` callable.
    * ``config``: a :class:`RetrievalConfig` or a preset name (``"fast"``).
    * ``expander``: a :class:`toolret.index.expansion.LLMExpander` that writes profiles, hypothetical
      questions and key topics for every tool added (cached: an unchanged tool costs no call);
      ``offline_expansion=False`` turns off the offline profile (first sentence, name keywords).

    Searches are safe from many threads: they read an immutable snapshot that writes swap whole.
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
        warm_up_saved(self.path, embedder=embedder, client=client)  # its model loads while the rest opens
        from toolret.config import RetrievalConfig
        from toolret.index import persistence
        from toolret.index.writer import IndexWriter
        from toolret.memory.usage_log import UsageLog

        #: The LLM (``toolret.llm.LLM``) the ``full`` preset plans with; None runs offline.
        self.llm = llm
        self.config = RetrievalConfig.resolve(config)
        self._rerankers: Any = None  # the cross-encoders loaded, made by the first search that reranks
        persistence.make_dir(self.path)
        store = None
        try:
            store, self.embedder = persistence.open_store(self.path, client, collection, embedder)
            if warm := getattr(self.embedder, "warm_up_in_background", None):
                warm()  # e.g. a model given by name or path: it loads while the rest opens
            self._writer = IndexWriter(
                store, self.embedder, self.config, expander=expander, offline_expansion=offline_expansion
            )
            self._writer.snapshot = persistence.load_snapshot(self._writer, self.path)
            self._memory = UsageLog(self._writer)
            persistence.opened(self._writer)  # from here on ChromaDB is read (lazily), not the snapshot file
        except Exception as exc:  # ChromaDB reports damaged files with many exception types
            persistence.release(store)  # so that reopening after a restore works in this process
            if isinstance(exc, ToolRetError) or (self.path is None and client is None):
                raise  # ours names the fault; in memory there is no stored data to blame
            raise KnowledgeBaseError(persistence.damaged_message(self.path, exc)) from exc

    @classmethod
    def load(cls, path: str | os.PathLike[str], **kwargs: Any) -> ToolKnowledgeBase:
        """Reopen a knowledge base saved at ``path``; an empty or missing directory is an error."""
        warm_up_saved(path, embedder=kwargs.get("embedder"), client=kwargs.get("client"))  # first: see __init__
        from toolret.index import persistence

        return cls(persistence.saved_folder(path), **kwargs)

    @classmethod
    def connect(
        cls,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        ssl: bool = False,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> ToolKnowledgeBase:
        """Open (or create) a knowledge base on a ChromaDB server (``chroma run``).

        Many processes may connect to one registry: each searches its own in-memory snapshot
        and sees other processes' writes after :meth:`refresh`. ``collection=`` names the
        registry on the server (several can live side by side); other keyword arguments are
        those of the constructor.
        """
        from toolret.index.store import http_client

        return cls(client=http_client(host, port, ssl=ssl, headers=headers), **kwargs)

    @classmethod
    def from_tools(cls, tools: Iterable[Any], **kwargs: Any) -> ToolKnowledgeBase:
        """Build an in-memory (or, with ``path=``, persistent) knowledge base from tools."""
        (kb := cls(**kwargs)).add(tools)
        return kb

    def __len__(self) -> int:
        return len(self._writer.snapshot)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._writer.snapshot.index_of

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self._writer.snapshot.docs]

    def docs(self) -> list[ToolDoc]:
        return list(self._writer.snapshot.docs)

    def get(self, tool_id: str) -> ToolDoc:
        """The ToolDoc stored under ``tool_id``."""
        snap = self._writer.snapshot
        try:
            return snap.docs[snap.index_of[tool_id]]
        except KeyError:
            raise ToolNotFoundError(f"no tool with id {tool_id!r} in the knowledge base") from None

    def tool(self, tool_id: str) -> Any:
        """The live object (callable, framework tool...) given for ``tool_id``; for a tool given as data, its
        OpenAI definition. A live tool not re-attached after reopening raises ToolNotAttachedError (see ``bind``)."""
        return self._writer.live.resolve(self.get(tool_id))

    @property
    def live_tools(self) -> Any:
        """The :class:`~toolret.index.live_tools.LiveTools` map (id/name -> live object) adapters share."""
        return self._writer.live

    def bind(self, objects: Iterable[Any] | Any) -> int:
        """Re-attach live tool objects after reopening a saved knowledge base; returns how many matched."""
        return self._writer.bind(objects)

    def search(self, query: str, k: K = 5, **options: Unpack[SearchOptions]) -> SearchResult:
        """The ``k`` tools that best serve ``query``, best first, with per-field evidence.

        ``k="auto"`` returns a precise set instead. The options (``config``, ``conversation``, ``llm``,
        ``token_budget``, ``definition``, ``allowed_ids``, ``where``) are :class:`~toolret.search.search.SearchRequest`'s
        fields, documented there; e.g. ``allowed_ids`` restricts every stage to an agent's own tools, ``where``
        to the tools whose metadata fits a :class:`~toolret.scope.tool_scope.ToolScope` (a user's servers, read-only ones)."""
        return self.begin_search(query, k, **options).run()

    async def asearch(self, query: str, k: K = 5, **options: Unpack[SearchOptions]) -> SearchResult:
        """:meth:`search` without blocking the event loop: the same stages, in a worker thread."""
        return await self.begin_search(query, k, **options).arun()

    def begin_search(self, query: str, k: K = 5, **options: Unpack[SearchOptions]) -> Search:
        """A validated, not yet run :class:`~toolret.search.search.Search` over the current snapshot
        (:func:`toolret.search.search.begin` assembles it; the enclosing ``scoped`` block is read here)."""
        from toolret.scope.tool_scope import current_scope
        from toolret.search.search import SearchRequest, begin

        return begin(
            SearchRequest(query, k, **options),
            snapshot=self._writer.snapshot,
            embedder=self.embedder,
            config=self.config,
            llm=self.llm,
            memory=self._memory,
            cross_encoders=self._cross_encoders,
            enclosing_scope=current_scope(),
        )

    def _cross_encoders(self) -> Any:
        """This knowledge base's cross-encoder cache, made on first use: a search that reranks with
        none never imports the reranker (cold start)."""
        if self._rerankers is None:
            from toolret.search.rerank import CrossEncoderCache

            self._rerankers = CrossEncoderCache()
        return self._rerankers

    def record(self, query: str, tool_ids: Sequence[str]) -> None:
        """Remember that ``query`` was served by ``tool_ids`` (the tools the agent actually used)."""
        self.record_many([(query, tool_ids)])

    def record_many(self, bundles: Iterable[tuple[str, Sequence[str]]], *, progress: bool = False) -> int:
        """Record (request, tools used) bundles, persisted and used by presets with ``history_weight`` > 0."""
        return self._memory.record_many(bundles)

    def fit(
        self, bundles: Iterable[tuple[str, Sequence[str]]] | None = None, *, max_queries: int = 2000
    ) -> LearnedWeights:
        """Learn the scorer's weights from bundles (default: the recorded ones; :mod:`toolret.memory.learn`)."""
        return self._memory.fit(bundles, max_queries=max_queries)

    @property
    def learned(self) -> LearnedWeights | None:
        return self._memory.learned

    def clear_history(self) -> None:
        """Forget every recorded bundle."""
        self._memory.clear()

    @property
    def history_size(self) -> int:
        return len(self._memory.history)

    @property
    def expander(self) -> Any:
        """The :class:`toolret.index.expansion.LLMExpander` run on tools as they are added (None: offline only)."""
        return self._writer.expander

    def add(self, tools: Iterable[Any] | Any, *, progress: bool = True, upsert: bool = False) -> list[str]:
        """Index tools (ToolDocs, dicts, callables, LangChain/LlamaIndex tools; one, or a list); a changed tool whose id
        exists is replaced with a warning naming it, silently with ``upsert=True`` (``sync`` replaces a registry)."""
        return self._writer.add(tools, progress=progress, upsert=upsert)

    def remove(self, tool_ids: str | Iterable[str]) -> None:
        """Remove tools by id (one id, or a list); an unknown id is an error and nothing is removed."""
        self._writer.remove(tool_ids)

    def sync(self, tools: Iterable[Any] | Any, *, progress: bool = True, prefix: str | None = None) -> SyncReport:
        """Make the knowledge base hold exactly ``tools``: add new, update changed, remove gone.

        Only added or changed tools are embedded (compared by content hash). With ``prefix``, only tools whose
        id starts with it are managed (the others stay; every given tool must carry it): how one source (an
        MCP server, an API) is synced into a registry it shares with others.
        """
        return self._writer.sync(tools, progress=progress, prefix=prefix)

    def refresh(self) -> SyncReport:
        """Take in what other processes wrote since this one opened or refreshed, by difference: only new or
        changed tools are read (nothing is re-embedded); one read of the change marker when nothing changed."""
        with self._writer.lock:
            if (report := self._writer.refresh()) is None:
                from toolret.index.writer import SyncReport

                return SyncReport(added=[], updated=[], removed=[], unchanged=len(self))
            self._memory.reload()
        return report

    def save(self) -> None:
        """Write the BM25 indexes, snapshot file and manifest beside the ChromaDB data, atomically (:mod:`toolret.index.persistence`)."""
        if self.path is None:
            raise KnowledgeBaseError("this knowledge base lives in memory; create it with a path to save it")
        from toolret.index import persistence

        with self._writer.lock:
            persistence.save(self.path, self._writer, self.config.name)

    def close(self) -> None:
        """Free an in-memory knowledge base's collections (a persistent one keeps its data)."""
        if not self._writer.store.persistent:
            self._writer.store.drop()

    def __repr__(self) -> str:
        return f"ToolKnowledgeBase({len(self)} tools, {self.path or 'memory'}, embedder={self.embedder.name!r})"
