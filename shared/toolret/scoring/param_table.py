"""Every tool's parameters as flat arrays, built once per snapshot.

The MFTR parameter penalty (:mod:`toolret.scoring.penalty`) visits each parameter of each
candidate on every query: a few hundred pydantic objects, read attribute by attribute, were
a tenth of a search's time on bfcl. Laid out once here — a row per parameter, tools' rows
contiguous and in order, each row naming its distinct ``(name, type)`` — a query reads the rows
of its candidates with a few array operations and works out each distinct parameter once.

Example:
    >>> from toolret.documents.tool_doc import ToolDoc, ToolParam
    >>> docs = [ToolDoc(name="a", parameters=[ToolParam(name="city", type="string", required=True)]),
    ...         ToolDoc(name="b"), ToolDoc(name="c", parameters=[ToolParam(name="city", type="string")])]
    >>> table = ParamTable.build(docs)
    >>> table.keys, table.key.tolist(), table.start.tolist()
    ((('city', 'string', ()),), [0, 0], [0, 1, 1, 2])
    >>> [a.tolist() for a in table.rows(np.array([2, 0]))]
    [[0, 1], [1, 0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolret.documents.tool_doc import ToolDoc

__all__ = ["ParamTable"]


@dataclass(frozen=True, eq=False)
class ParamTable:
    """Tool ``i``'s parameters are rows ``start[i]:start[i + 1]``, in the tool's own order.

    ``key[r]`` indexes ``keys``, the distinct ``(name, type, enum)`` triples (``enum``: the
    lowercased text of each allowed value, ``()`` for none — all a parameter's score reads);
    ``required[r]`` is the row's flag. Tables compare (and hash) by identity: query-time
    structures derived from one (:mod:`toolret.scoring.param_match`) are kept per table.
    """

    start: np.ndarray
    key: np.ndarray
    keys: tuple[tuple[str, str, tuple[str, ...]], ...]
    required: np.ndarray

    @classmethod
    def build(cls, docs: Sequence[ToolDoc]) -> ParamTable:
        index: dict[tuple[str, str, tuple[str, ...]], int] = {}
        start = np.zeros(len(docs) + 1, dtype=np.int64)
        key: list[int] = []
        required: list[bool] = []
        for i, doc in enumerate(docs):
            for param in doc.parameters:
                enum = tuple(str(v).lower() for v in param.enum or () if str(v))
                key.append(index.setdefault((param.name, param.type, enum), len(index)))
                required.append(param.required)
            start[i + 1] = len(key)
        return cls(
            start=start,
            key=np.asarray(key, dtype=np.int64),
            keys=tuple(index),
            required=np.asarray(required, dtype=bool),
        )

    def rows(self, tools: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(owner, row) of every parameter of ``tools``: ``owner`` is the position in ``tools``,
        rows follow the order of ``tools``, then each tool's parameter order."""
        tools = np.asarray(tools, dtype=np.int64)
        first = self.start[tools]
        counts = self.start[tools + 1] - first
        owner = np.repeat(np.arange(len(tools), dtype=np.int64), counts)
        block = np.cumsum(counts) - counts  # where each tool's rows begin in the output
        row = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(first - block, counts)
        return owner, row
