"""An immutable view of a knowledge base that searches run against.

Searches read one snapshot; writes build a new one and swap it in with a single
assignment. Readers therefore see the registry before or after a write, never a mix,
without taking a lock on the hot path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from toolret.documents.identifiers import DependencyIndex
from toolret.documents.text import humanize_name
from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc
from toolret.index.ann import ANN_MIN_ROWS, HalfScanIndex
from toolret.index.hubness import tool_hubness
from toolret.index.lexical import LexicalIndex
from toolret.scoring.param_table import ParamTable

__all__ = ["Snapshot", "build_snapshot"]


@dataclass(frozen=True)
class Snapshot:
    """Documents, per-field lexical indexes and per-field vectors of one registry state.

    Vectors are stored per field for the tools that have the field only (most registries have
    no examples, few responses): ``vectors[f]`` holds one row per such tool, ``rows[f]`` the
    tool index of each row (ascending), ``present[f]`` a per-tool mask and ``slot[f]`` each
    tool's row in ``vectors[f]`` (-1 where absent); a field no tool has holds zero rows.

    A field with at least ``ANN_MIN_ROWS`` rows is stored as float16 (half the memory; at 100k
    tools float32 vectors were a quarter of the process): ``vectors[f]`` is then a read-only view
    of the storage of ``ann[f]``, the faiss index that scans it (:mod:`toolret.index.ann`).
    Smaller fields stay float32 and numpy scans them (numpy's own float16 arithmetic casts at
    ~60M values/s here, far slower than a float32 BLAS scan of a small matrix). Dense search
    over them is :func:`toolret.index.dense.dense_search`.
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
    #: Per field, each tool's neighbourhood density in this registry (toolret.index.hubness),
    #: computed with the snapshot so it always describes exactly these tools.
    hubness: dict[str, np.ndarray] = field(default_factory=dict)
    ann: dict[str, HalfScanIndex] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.docs)

    @cached_property
    def params(self) -> ParamTable:
        """Every tool's parameters as flat arrays (the per-query penalty reads them), built on first use."""
        return ParamTable.build(self.docs)

    @cached_property
    def dependencies(self) -> DependencyIndex:
        """Every tool's identifier needs and each entity's producers (the dependency stage reads them), built on first use."""
        return DependencyIndex.build(self.docs)

    def field_vectors(self, i: int) -> dict[str, np.ndarray]:
        """Tool ``i``'s vector per field it has."""
        return {f: self.vectors[f][self.slot[f][i]] for f in self.vectors if self.slot[f][i] >= 0}

    def vector_bytes(self) -> dict[str, int]:
        """Bytes of vectors held per field (a float16 field's matrix is its index's storage: counted once)."""
        return {f: m.nbytes for f, m in self.vectors.items()}


def _name_keys(doc: ToolDoc) -> set[str]:
    """Strings whose literal presence in a query means the user named this tool."""
    keys = {doc.name.lower()}
    words = humanize_name(doc.name)
    if " " in words or len(words) >= 4:
        keys.add(words)
    return {k for k in keys if len(k) >= 3}


def _blocks(vectors: Sequence[dict[str, np.ndarray]], f: str, have: np.ndarray) -> Iterator[np.ndarray]:
    """The field's rows, 4096 at a time (float32 for that block only)."""
    for start in range(0, len(have), 4096):
        yield np.stack([vectors[i][f] for i in have[start : start + 4096].tolist()]).astype(np.float32)


def _field_matrix(
    vectors: Sequence[dict[str, np.ndarray]], f: str, have: np.ndarray, dim: int, ann_min_rows: int
) -> tuple[np.ndarray, HalfScanIndex | None]:
    """One field's matrix; from ``ann_min_rows`` rows on, float16 inside its scan index."""
    if len(have) >= ann_min_rows:
        index = HalfScanIndex.build(_blocks(vectors, f, have), dim)
        return index.matrix, index
    mat = np.empty((len(have), dim), dtype=np.float32)
    start = 0
    for block in _blocks(vectors, f, have):
        mat[start : start + len(block)] = block
        start += len(block)
    return mat, None


def build_snapshot(
    docs: Sequence[ToolDoc],
    vectors: Sequence[dict[str, np.ndarray]],
    dim: int,
    lexical: dict[str, LexicalIndex] | None = None,
    hubness: dict[str, np.ndarray] | None = None,
    ann_min_rows: int = ANN_MIN_ROWS,
) -> Snapshot:
    """Assemble the per-field matrices and indexes for a list of tools (order kept).

    ``lexical`` and ``hubness`` are reused when given (read back from a saved knowledge base whose
    registry hash matches); otherwise they are computed here. Fields with ``ann_min_rows`` rows or
    more are stored as float16 in a faiss scan index (:mod:`toolret.index.ann`); tests lower the
    threshold to exercise that path on small data.
    """
    n = len(docs)
    mats: dict[str, np.ndarray] = {}
    present: dict[str, np.ndarray] = {}
    rows: dict[str, np.ndarray] = {}
    slot: dict[str, np.ndarray] = {}
    ann: dict[str, HalfScanIndex] = {}
    for f in INDEX_FIELDS:
        have = np.asarray([i for i, vecs in enumerate(vectors) if f in vecs], dtype=np.int64)
        mats[f], index = _field_matrix(vectors, f, have, dim, ann_min_rows)
        if index is not None:
            ann[f] = index
        rows[f] = have
        present[f] = np.zeros(n, dtype=bool)
        present[f][have] = True
        slot[f] = np.full(n, -1, dtype=np.int32)
        slot[f][have] = np.arange(len(have), dtype=np.int32)
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
        ann=ann,
    )
    snap.params  # noqa: B018 - built with the snapshot, not by the first search after a write
    return snap
