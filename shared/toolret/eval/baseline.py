"""Plain one-signal baselines: BM25 over ``name + " " + description``, MiniLM cosine over ``name: description``.

Every benchmark README in ``../shared/benchmarks`` reports this exact "plain" run (bm25s
'lucene' BM25, k1=1.5, b=0.75, bm25s' default tokenizer with English stopwords, no
stemming), so comparing toolret against :class:`BM25Baseline` on the same files tells
whether the fields, the dense signal and the fusion earn their cost. It is deliberately
not the engine's lexical index: that one is per field and splits identifiers.

Example:
    >>> from toolret.documents.tool_doc import ToolDoc
    >>> bm25 = BM25Baseline([
    ...     ToolDoc(name="get_weather", description="Current weather for a city."),
    ...     ToolDoc(name="send_email", description="Send an e-mail message."),
    ... ])
    >>> bm25.search("what is the weather in Paris", k=1).ids
    ['get_weather']
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import InvalidToolError
from toolret.results import ScoredTool, SearchResult, TraceStep

__all__ = ["BM25Baseline", "CosineBaseline"]

logger = logging.getLogger("toolret")


def _id_name_description(tool: ToolDoc | Mapping[str, Any], position: int) -> tuple[str, str, str]:
    """Read id, name and description from a ToolDoc or a raw benchmark record."""
    if isinstance(tool, ToolDoc):
        return tool.id, tool.name, tool.description
    if isinstance(tool, Mapping):
        name = str(tool.get("name") or "")
        tool_id = str(tool.get("id") or name)
        if not tool_id:
            raise InvalidToolError(f"<tool #{position}>", "id", "a record needs an 'id' or a 'name'")
        return tool_id, name or tool_id, str(tool.get("description") or "")
    raise InvalidToolError(f"<tool #{position}>", "tool", f"expected a ToolDoc or a dict, got {type(tool).__name__}")


class BM25Baseline:
    """BM25 over ``name + " " + description`` of each tool, as in the benchmark READMEs.

    Accepts :class:`~toolret.documents.tool_doc.ToolDoc` objects or raw ``tools.jsonl`` records
    (dicts with ``id``, ``name``, ``description``). ``search`` always returns
    ``min(k, len(tools))`` tools, best first; equal scores are ordered as bm25s orders them
    (deterministic), and a query made only of stopwords returns the first tools of the
    registry with score 0.
    Build time is one tokenize + index pass; a search scores every tool (fine for a
    baseline, which exists to be compared with, not to scale).
    """

    #: Label used by the evaluation harness and the CLI.
    name = "bm25"

    def __init__(self, tools: Iterable[ToolDoc | Mapping[str, Any]]) -> None:
        from toolret.index.lexical import import_bm25s  # bm25s, with its logger following the user's

        self._bm25s = bm25s = import_bm25s()
        rows = [_id_name_description(tool, i) for i, tool in enumerate(tools)]
        self._ids = [row[0] for row in rows]
        self._names = [row[1] for row in rows]
        self._retriever: Any = None
        corpus = [f"{name} {description}" for _, name, description in rows]
        tokens = bm25s.tokenize(corpus, stopwords="en", return_ids=False, show_progress=False)
        if any(tokens):  # bm25s cannot index a corpus without a single word
            self._retriever = bm25s.BM25()
            self._retriever.index(tokens, show_progress=False)
        logger.debug("BM25Baseline indexed %d tools", len(rows))

    def __len__(self) -> int:
        return len(self._ids)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every tool for ``query``, in registry order."""
        if self._retriever is None:
            return np.zeros(len(self._ids), dtype=np.float32)
        tokens = self._bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
        known = [token for token in tokens if token in self._retriever.vocab_dict]
        if not known:
            return np.zeros(len(self._ids), dtype=np.float32)
        return np.asarray(self._retriever.get_scores(known), dtype=np.float32)

    def search(self, query: str, k: int = 5) -> SearchResult:
        """The ``k`` best tools for ``query`` by BM25, with the score as ``field_scores["bm25"]``.

        Ranking goes through ``bm25s.BM25.retrieve`` — the call the READMEs' baseline used —
        so equal scores are ordered exactly as there and the published numbers reproduce.
        """
        start = time.perf_counter()
        n = min(max(k, 0), len(self._ids))
        positions: list[int] = []
        values: list[float] = []
        if n:
            tokens = self._bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0]
            if tokens and self._retriever is not None:
                # Unknown words stay in: bm25s ignores them, and its order for all-zero
                # scores is then the same as in the READMEs' run.
                docs, scores = self._retriever.retrieve([tokens], k=n, show_progress=False, n_threads=0)
                positions = [int(i) for i in docs[0]]
                values = [float(v) for v in scores[0]]
            else:
                # Only stopwords (or tools without words): nothing to rank by, keep registry order.
                positions, values = list(range(n)), [0.0] * n
        tools = [
            ScoredTool(id=self._ids[i], name=self._names[i], score=v, field_scores={"bm25": v})
            for i, v in zip(positions, values)
        ]
        ms = (time.perf_counter() - start) * 1000.0
        return SearchResult(query=query, tools=tools, trace=[TraceStep(stage="bm25", path="offline", ms=ms)])


class CosineBaseline:
    """Dense cosine over ``"name: description"`` of each tool: no fields, no BM25, no fusion.

    The plain-cosine reference point (MiniLM over "name: description"); ``toolret bench``
    prints it beside :class:`BM25Baseline` so the engine is compared with both single signals.
    ``embedder`` is anything :func:`toolret.index.embedding.resolve_embedder` accepts (None: the
    packaged all-MiniLM-L6-v2).

    Example:
        >>> docs = [ToolDoc(name="get_weather", description="Current weather for a city."),
        ...         ToolDoc(name="send_email", description="Send an e-mail message.")]
        >>> CosineBaseline(docs).search("is it going to rain in Paris?", k=1).ids  # doctest: +SKIP
        ['get_weather']
    """

    #: Label used by the evaluation harness and the CLI.
    name = "cosine"

    def __init__(self, tools: Iterable[ToolDoc | Mapping[str, Any]], embedder: Any = None) -> None:
        from toolret.index.embedding import resolve_embedder

        self.embedder = resolve_embedder(embedder)
        rows = [_id_name_description(tool, i) for i, tool in enumerate(tools)]
        self._ids = [row[0] for row in rows]
        self._names = [row[1] for row in rows]
        texts = [f"{name}: {description}" for _, name, description in rows]
        chunks = [self.embedder.embed(texts[i : i + 512]) for i in range(0, len(texts), 512)]
        self._matrix = np.vstack(chunks) if chunks else np.zeros((0, 1), dtype=np.float32)
        logger.debug("CosineBaseline embedded %d tools", len(rows))

    def __len__(self) -> int:
        return len(self._ids)

    def scores(self, query: str) -> np.ndarray:
        """Cosine of every tool to ``query``, in registry order."""
        if not self._ids:
            return np.zeros(0, dtype=np.float32)
        return self._matrix @ self.embedder.embed([query])[0]

    def search_vector(self, qvec: np.ndarray, k: int = 5, query: str = "") -> SearchResult:
        """The ``k`` tools closest to an already embedded query (ties: registry order)."""
        start = time.perf_counter()
        n = min(max(k, 0), len(self._ids))
        scores = self._matrix @ np.asarray(qvec, dtype=np.float32) if self._ids else np.zeros(0)
        order = np.argsort(-scores, kind="stable")[:n]
        tools = [
            ScoredTool(
                id=self._ids[i], name=self._names[i], score=float(scores[i]), field_scores={"cosine": float(scores[i])}
            )
            for i in order.tolist()
        ]
        ms = (time.perf_counter() - start) * 1000.0
        return SearchResult(
            query=query or "(vector)", tools=tools, trace=[TraceStep(stage="cosine", path="offline", ms=ms)]
        )

    def search(self, query: str, k: int = 5) -> SearchResult:
        """The ``k`` best tools for ``query`` by cosine, with the score as ``field_scores["cosine"]``."""
        start = time.perf_counter()
        qvec = self.embedder.embed([query])[0]
        embed_ms = (time.perf_counter() - start) * 1000.0
        result = self.search_vector(qvec, k=k, query=query)
        trace = [TraceStep(stage="embed_query", path="offline", ms=embed_ms), *result.trace]
        return result.model_copy(update={"trace": trace})
