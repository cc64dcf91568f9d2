"""Label-free adaptation to the registry, computed at index time from the tools themselves.

**Neighbourhood density** (:func:`hubness`): ``r_d`` = the mean cosine of tool ``d``'s description
vector to its ``k`` nearest other tools' (:data:`HUB_FIELDS`), a copy of the tool (cosine above
:data:`HUB_DUPLICATE`) not counting as a neighbour. Scoring uses ``cos(q, d) - w * r_d``
(``RetrievalConfig.fusion.hubness_weight``): ``w > 0`` is CSLS hubness reduction (Conneau et al., 2018),
``w < 0`` — the default, chosen leaving one dev set out — favours tools in dense regions of the
registry over isolated ones of equal cosine (docs/method.md, section 4d). ``r_d`` needs no query
and no label and describes exactly the current tool set: it is recomputed with every snapshot
(a stale value would re-rank tools by neighbours that are gone), and saved beside a saved
knowledge base (``adaptation.npz``, tagged with the registry hash) to be reused on load only for
exactly that registry.

A z-score over the query's pool is invariant to any per-query shift or scale of the cosine, so a
query-side correction does nothing; ``r_d`` is per *tool* and does change the order.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = [
    "HUB_DUPLICATE",
    "HUB_FIELDS",
    "HUB_NEIGHBOURS",
    "HUB_REFERENCE_CAP",
    "hubness",
    "load_hubness",
    "save_hubness",
    "tool_hubness",
]

#: Fields whose density is computed and used. The description only: the offline profile is its
#: first sentence again (a second copy of the same prior), and parameters / responses of one API
#: share schema boilerplate (ids, paging), so their density measures the schema, not the need.
#: Measured leaving one set out (docs/decisions/2026-11-23-registry-density-prior.md): all fields was worse.
HUB_FIELDS: tuple[str, ...] = ("description",)

#: Neighbours averaged per tool (CSLS uses 10).
HUB_NEIGHBOURS = 10
#: A tool more similar than this is a copy of the tool (BFCL's ``name#n`` variants), not a
#: neighbour: copies would make a duplicated tool look central. (0.9 also drops true neighbours.)
HUB_DUPLICATE = 0.95
#: Above this many tools in a field, neighbours are looked for among a fixed sample of this many
#: (seeded, so every process computes the same values): cost O(n * cap * dim).
HUB_REFERENCE_CAP = 4096
_BLOCK = 1024


def hubness(
    vectors: np.ndarray,
    k: int = HUB_NEIGHBOURS,
    *,
    cap: int = HUB_REFERENCE_CAP,
    duplicate: float = HUB_DUPLICATE,
) -> np.ndarray:
    """Mean cosine of each row of ``vectors`` (unit length, [n, dim]) to its ``k`` nearest other rows.

    Rows are compared with the others only (never with themselves), and a row more similar than
    ``duplicate`` is a copy, not a neighbour; a row with no neighbour left gets 0 (so does every row
    when there are fewer than two). Above ``cap`` rows the neighbours come from a seeded sample of
    ``cap`` rows.
    """
    x = vectors  # float16 for large fields (toolret.index.ann): converted a block at a time, never whole
    n = len(x)
    out = np.zeros(n, dtype=np.float32)
    if n < 2 or k <= 0:
        return out
    if n > cap:
        ref_idx = np.sort(np.random.default_rng(0).choice(n, size=cap, replace=False))
    else:
        ref_idx = np.arange(n)
    ref = np.asarray(x[ref_idx], dtype=np.float32)
    kk = min(k, len(ref_idx) - 1)
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        sims = np.asarray(x[start:stop], dtype=np.float32) @ ref.T
        rows = np.arange(start, stop)
        # a row never counts itself: find it among the reference rows and mask it
        pos = np.searchsorted(ref_idx, rows)
        pos_ok = pos < len(ref_idx)
        self_hit = np.zeros(stop - start, dtype=bool)
        self_hit[pos_ok] = ref_idx[pos[pos_ok]] == rows[pos_ok]
        sims[np.flatnonzero(self_hit), pos[self_hit]] = -np.inf
        sims[sims > duplicate] = -np.inf
        top = np.partition(sims, sims.shape[1] - kk, axis=1)[:, -kk:]
        real = np.isfinite(top)
        count = real.sum(axis=1)
        total = np.where(real, top, 0.0).sum(axis=1)
        out[start:stop] = np.where(count > 0, total / np.maximum(count, 1), 0.0)
    return out


def tool_hubness(
    vectors: dict[str, np.ndarray],
    rows: dict[str, np.ndarray],
    n_tools: int,
    k: int = HUB_NEIGHBOURS,
    fields: tuple[str, ...] = HUB_FIELDS,
) -> dict[str, np.ndarray]:
    """:func:`hubness` per field (of ``fields``) of a registry, one value per tool (0 where the tool lacks the field).

    ``vectors[f]`` holds one row per tool that has field f, ``rows[f]`` those tools' indexes (the
    layout of :class:`toolret.index.snapshot.Snapshot`).
    """
    out: dict[str, np.ndarray] = {}
    for f in fields:
        mat = vectors.get(f, np.zeros((0, 0), dtype=np.float32))
        values = np.zeros(n_tools, dtype=np.float32)
        if len(mat):
            values[rows[f]] = hubness(mat, k)
        out[f] = values
    return out


def save_hubness(path: Path, hubness: dict[str, np.ndarray], registry: str) -> None:
    """Write ``hubness`` beside a saved knowledge base, tagged with its registry hash (atomically)."""
    tmp = path.with_name(f".{path.name}.tmp.npz")
    meta = np.array([registry, _settings()])
    np.savez(tmp, __meta=meta, **{f"field__{f}": v for f, v in hubness.items()})  # type: ignore[arg-type]
    os.replace(tmp, path)


def load_hubness(path: Path, registry: str, n_tools: int) -> dict[str, np.ndarray] | None:
    """The saved values when they were computed for exactly this registry (and these settings), else None."""
    try:
        with np.load(path) as data:
            meta = [str(x) for x in data["__meta"]]
            if meta != [registry, _settings()]:
                return None
            out = {k.split("__", 1)[1]: data[k] for k in data.files if k.startswith("field__")}
    except (OSError, KeyError, ValueError):
        return None
    return out if all(len(v) == n_tools for v in out.values()) else None


def _settings() -> str:
    return f"k={HUB_NEIGHBOURS} cap={HUB_REFERENCE_CAP} duplicate={HUB_DUPLICATE} fields={','.join(HUB_FIELDS)}"
