"""Benchmark datasets: a tool registry and labelled queries, read from one folder.

A dataset folder follows ``../shared/benchmarks/FORMAT.md``: ``tools.jsonl`` holds every tool
of the registry (raw records, kept as dicts so each retriever converts them its own way) and
``queries.jsonl`` the test queries with the ids of the tools they need. Loading checks what
the metrics rely on — every query has a non-empty ``relevant`` list and every relevant id
exists among the tools — and stops at the first problem with the file and line to fix,
because a silently skipped query changes every mean.

Example:
    >>> ds = load_dataset("../shared/benchmarks/restbench_tmdb")    # doctest: +SKIP
    >>> len(ds.tools), len(ds.queries)                              # doctest: +SKIP
    (54, 100)
    >>> small = sample_queries(ds.queries, 20)                      # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from toolret.errors import DatasetError

if TYPE_CHECKING:
    from toolret.documents.tool_doc import ToolDoc

__all__ = [
    "QUERIES_FILE",
    "TOOLS_FILE",
    "TRAIN_QUERIES_FILE",
    "Dataset",
    "EvalQuery",
    "has_training_split",
    "load_dataset",
    "sample_queries",
]

logger = logging.getLogger("toolret")

TOOLS_FILE = "tools.jsonl"
QUERIES_FILE = "queries.jsonl"
#: A set's training split (FORMAT.md): a model trains on it and is scored on ``queries.jsonl``.
TRAIN_QUERIES_FILE = "train_queries.jsonl"


class EvalQuery(BaseModel):
    """One labelled test query: the request and the ids of the tools it needs.

    ``args`` carries the gold calls when the source has them
    (``{"calls": [{"tool": id, "arguments": {...}}]}``); retrieval metrics ignore it.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    query: str
    relevant: list[str] = Field(min_length=1)
    args: dict[str, Any] | None = None


class Dataset(BaseModel):
    """A tool registry plus the labelled queries to evaluate retrieval on it.

    ``tools`` are the raw records of ``tools.jsonl`` (dicts with at least ``id``), so the
    BM25 baseline can read ``name``/``description`` as the benchmark READMEs do while the
    knowledge base converts them into :class:`~toolret.documents.tool_doc.ToolDoc` through ingest.
    """

    name: str
    tools: list[dict[str, Any]]
    queries: list[EvalQuery]

    @property
    def tool_ids(self) -> list[str]:
        """Tool ids in file order."""
        return [str(t["id"]) for t in self.tools]

    def tool_docs(self) -> list[ToolDoc]:
        """The tools as ToolDocs, converted by :func:`toolret.sources.ingest.from_record`.

        Imported lazily: reading a dataset and running the BM25 baseline need no ingest.
        """
        from toolret.sources.ingest import from_record

        return [from_record(record) for record in self.tools]

    def sample(self, limit: int | None, seed: int = 0) -> Dataset:
        """The same registry with a reproducible sample of at most ``limit`` queries."""
        return self.model_copy(update={"queries": sample_queries(self.queries, limit, seed=seed)})


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for every non-blank line of a JSON Lines file."""
    if not path.is_file():
        raise DatasetError(f"{path}: file not found; a dataset folder needs {TOOLS_FILE} and {QUERIES_FILE}")
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(obj, dict):
                raise DatasetError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def _load_tools(path: Path) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    for lineno, record in _read_jsonl(path):
        tool_id = record.get("id")
        if not isinstance(tool_id, str) or not tool_id:
            raise DatasetError(f"{path}:{lineno}: tool has no 'id' (a non-empty string is required)")
        if tool_id in seen:
            raise DatasetError(f"{path}:{lineno}: tool id {tool_id!r} appears twice; ids must be unique")
        seen.add(tool_id)
        tools.append(record)
    return tools


def _load_queries(path: Path, tool_ids: set[str], tools_path: Path) -> list[EvalQuery]:
    queries: list[EvalQuery] = []
    seen: set[str] = set()
    for lineno, record in _read_jsonl(path):
        where = f"{path}:{lineno}"
        query_id = record.get("id")
        if not isinstance(query_id, str) or not query_id:
            raise DatasetError(f"{where}: query has no 'id' (a non-empty string is required)")
        if query_id in seen:
            raise DatasetError(f"{where}: query id {query_id!r} appears twice; ids must be unique")
        seen.add(query_id)
        text = record.get("query")
        if not isinstance(text, str) or not text.strip():
            raise DatasetError(f"{where}: query {query_id!r} has no 'query' text")
        relevant = record.get("relevant")
        if not isinstance(relevant, list) or not relevant or not all(isinstance(r, str) for r in relevant):
            raise DatasetError(f"{where}: query {query_id!r} needs 'relevant', a non-empty list of tool ids")
        for tool_id in relevant:
            if tool_id not in tool_ids:
                raise DatasetError(
                    f"{where}: query {query_id!r} lists relevant tool {tool_id!r}, which is not an id in {tools_path}"
                )
        args = record.get("args")
        if args is not None and not isinstance(args, dict):
            raise DatasetError(f"{where}: query {query_id!r} has 'args' that is not an object")
        # dict.fromkeys: drop duplicate ids but keep the source's (call) order.
        queries.append(EvalQuery(id=query_id, query=text, relevant=list(dict.fromkeys(relevant)), args=args))
    return queries


def has_training_split(folder: str | Path) -> bool:
    """Whether ``folder`` holds a training split (``train_queries.jsonl``) beside its test queries."""
    return (Path(folder) / TRAIN_QUERIES_FILE).is_file()


def load_dataset(folder: str | Path, *, name: str | None = None, split: str = "test") -> Dataset:
    """Read ``tools.jsonl`` and ``queries.jsonl`` from ``folder`` and check them.

    ``split="train"`` reads the training split (``train_queries.jsonl``) where the folder has one
    and ``queries.jsonl`` where it has none (FORMAT.md: a model trained on such a set is scored
    in-sample on it). The dataset's name defaults to the folder's name. Raises
    :class:`~toolret.errors.DatasetError` naming the file and line for a missing file,
    invalid JSON, a query without ``relevant``, or a relevant id that is not a tool.

    Example:
        >>> ds = load_dataset("../shared/benchmarks/bfcl")     # doctest: +SKIP
        >>> ds.queries[0].relevant                              # doctest: +SKIP
        ['calculate_triangle_area#v1']
    """
    root = Path(folder)
    if not root.is_dir():
        raise DatasetError(f"{root}: dataset folder not found (expected {TOOLS_FILE} and {QUERIES_FILE} inside)")
    tools_path = root / TOOLS_FILE
    tools = _load_tools(tools_path)
    if split not in ("test", "train"):
        raise DatasetError(f"split must be 'test' or 'train', got {split!r}")
    queries_file = TRAIN_QUERIES_FILE if split == "train" and has_training_split(root) else QUERIES_FILE
    queries = _load_queries(root / queries_file, {t["id"] for t in tools}, tools_path)
    dataset_name = name or root.resolve().name
    logger.info("loaded dataset %s: %d tools, %d queries", dataset_name, len(tools), len(queries))
    return Dataset(name=dataset_name, tools=tools, queries=queries)


def sample_queries(queries: Sequence[EvalQuery], limit: int | None, seed: int = 0) -> list[EvalQuery]:
    """A reproducible sample of at most ``limit`` queries, in their original order.

    ``random.Random(seed).sample`` picks the positions, which are then sorted, so the same
    ``limit`` and ``seed`` give the same queries on every machine and run. ``None`` (or a
    limit at least the number of queries) keeps them all.

    Example:
        >>> qs = [EvalQuery(id=str(i), query=f"q{i}", relevant=["t"]) for i in range(10)]
        >>> [q.id for q in sample_queries(qs, 3)]
        ['0', '6', '9']
    """
    if limit is None or limit >= len(queries):
        return list(queries)
    if limit < 0:
        raise DatasetError(f"query limit must be >= 0, got {limit}")
    positions = sorted(random.Random(seed).sample(range(len(queries)), limit))
    return [queries[i] for i in positions]


def split_queries(queries: Sequence[EvalQuery]) -> tuple[list[EvalQuery], list[EvalQuery]]:
    """The fixed fit/test split of ``toolret eval --fit-split``: (80 % to fit on, 20 % to test).

    A query goes to the test part when the SHA-1 of its id, read as an integer, is divisible
    by 5: stable across machines, runs and sampling, and independent of file order.

    Example:
        >>> qs = [EvalQuery(id=f"q{i}", query="x", relevant=["t"]) for i in range(1000)]
        >>> fit, test = split_queries(qs)
        >>> len(fit), len(test)
        (799, 201)
    """
    import hashlib

    fit: list[EvalQuery] = []
    test: list[EvalQuery] = []
    for query in queries:
        digest = int(hashlib.sha1(query.id.encode("utf-8")).hexdigest(), 16)
        (test if digest % 5 == 0 else fit).append(query)
    return fit, test
