"""An immutable view of a knowledge base that searches run against.

Searches read one snapshot; writes build a new one and swap it in with a single
assignment. Readers therefore see the registry before or after a write, never a mix,
without taking a lock on the hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from toolret.documents.text import humanize_name
from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc
from toolret.index.adaptation import tool_hubness
from toolret.index.lexical import LexicalIndex
from toolret.index.param_table import ParamTable

__all__ = ["Snapshot", "build_snapshot"]


@dataclass(frozen=True)
class Snapshot:
    """Documents, per-field lexical indexes and per-field vectors of one registry state.

    Vectors are stored per field for the tools that have the field only (most registries have
    no examples, few responses): ``vectors[f]`` holds one row per such tool, ``rows[f]`` the
    tool index of each row (ascending), ``present[f]`` a per-tool mask and ``slot[f]`` each
    tool's row in ``vectors[f]`` (-1 where absent). Dense search over them is
    :func:`toolret.index.dense.dense_scores`.
    """

    docs: tuple[ToolDoc, ...]
    index_of: dict[str, int]
    lexical: dict[str, LexicalIndex]
    vectors: dict[str, np.ndarray]
    present: dict[str, np.ndarray]
    names: dict[str, tuple[int, ...]] = field(default_factory=dict)
    dim: int = 0
    rows: dict[str, np.ndarray] = field(default_factory=dict)
    slot: dict[str, np.ndarray] = field(default_factory=dict)
    #: Per field, each tool's neighbourhood density in this registry (toolret.index.adaptation),
    #: computed with the snapshot so it always describes exactly these tools.
    hubness: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.docs)

    @cached_property
    def params(self) -> ParamTable:
        """Every tool's parameters as flat arrays (the per-query penalty reads them), built on first use."""
        return ParamTable.build(self.docs)

    def field_vectors(self, i: int) -> dict[str, np.ndarray]:
        """Tool ``i``'s vector per field it has."""
        return {f: self.vectors[f][self.slot[f][i]] for f in self.vectors if self.slot[f][i] >= 0}


def _name_keys(doc: ToolDoc) -> set[str]:
    """Strings whose literal presence in a query means the user named this tool."""
    keys = {doc.name.lower()}
    words = humanize_name(doc.name)
    if " " in words or len(words) >= 4:
        keys.add(words)
    return {k for k in keys if len(k) >= 3}


def build_snapshot(
    docs: Sequence[ToolDoc],
    vectors: Sequence[dict[str, np.ndarray]],
    dim: int,
    lexical: dict[str, LexicalIndex] | None = None,
    hubness: dict[str, np.ndarray] | None = None,
) -> Snapshot:
    """Assemble the per-field matrices and indexes for a list of tools (order kept).

    ``lexical`` and ``hubness`` are reused when given (read back from a saved knowledge base whose
    registry hash matches); otherwise they are computed here.
    """
    n = len(docs)
    mats: dict[str, np.ndarray] = {}
    present: dict[str, np.ndarray] = {}
    rows: dict[str, np.ndarray] = {}
    slot: dict[str, np.ndarray] = {}
    for f in INDEX_FIELDS:
        have = [i for i, vecs in enumerate(vectors) if f in vecs]
        mat = np.zeros((len(have), dim), dtype=np.float32)
        for r, i in enumerate(have):
            mat[r] = vectors[i][f]
        mats[f] = mat
        rows[f] = np.asarray(have, dtype=np.int64)
        present[f] = np.zeros(n, dtype=bool)
        present[f][rows[f]] = True
        slot[f] = np.full(n, -1, dtype=np.int32)
        slot[f][rows[f]] = np.arange(len(have), dtype=np.int32)
    if lexical is None:
        lexical = {f: LexicalIndex.build([d.field_text(f) for d in docs]) for f in INDEX_FIELDS}
    names: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        for key in _name_keys(doc):
            names.setdefault(key, []).append(i)
    snap = Snapshot(
        docs=tuple(docs),
        index_of={d.id: i for i, d in enumerate(docs)},
        lexical=lexical,
        vectors=mats,
        present=present,
        names={k: tuple(v) for k, v in names.items()},
        dim=dim,
        rows=rows,
        slot=slot,
        hubness=hubness if hubness is not None else tool_hubness(mats, rows, n),
    )
    snap.params  # noqa: B018 - built with the snapshot, not by the first search after a write
    return snap
