"""An immutable view of a knowledge base that searches run against.

Searches read one snapshot; writes build a new one and swap it in with a single
assignment. Readers therefore see the registry before or after a write, never a mix,
without taking a lock on the hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from toolret.documents.text import humanize_name
from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc
from toolret.index.lexical import LexicalIndex

__all__ = ["Snapshot", "build_snapshot"]


@dataclass(frozen=True)
class Snapshot:
    docs: tuple[ToolDoc, ...]
    index_of: dict[str, int]
    lexical: dict[str, LexicalIndex]
    vectors: dict[str, np.ndarray]
    present: dict[str, np.ndarray]
    names: dict[str, tuple[int, ...]] = field(default_factory=dict)
    dim: int = 0

    def __len__(self) -> int:
        return len(self.docs)


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
) -> Snapshot:
    """Assemble the per-field matrices and indexes for a list of tools (order kept)."""
    n = len(docs)
    mats: dict[str, np.ndarray] = {}
    present: dict[str, np.ndarray] = {}
    for f in INDEX_FIELDS:
        mat = np.zeros((n, dim), dtype=np.float32)
        mask = np.zeros(n, dtype=bool)
        for i, vecs in enumerate(vectors):
            vec = vecs.get(f)
            if vec is not None:
                mat[i] = vec
                mask[i] = True
        mats[f] = mat
        present[f] = mask
    if lexical is None:
        lexical = {f: LexicalIndex.build([d.field_text(f) for d in docs]) for f in INDEX_FIELDS}
    names: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        for key in _name_keys(doc):
            names.setdefault(key, []).append(i)
    return Snapshot(
        docs=tuple(docs),
        index_of={d.id: i for i, d in enumerate(docs)},
        lexical=lexical,
        vectors=mats,
        present=present,
        names={k: tuple(v) for k, v in names.items()},
        dim=dim,
    )
