"""Label-free adaptation to the registry, computed at index time from the tools themselves.

**Hubness** (:func:`hubness`): in a registry of near-duplicate tools (BFCL's thousands of
``get_*`` functions, API Bench's model zoo) some tool vectors sit close to many others and come
out near the top of almost every query's cosine ranking — "hubs". CSLS (Conneau et al., 2018)
corrects a cosine by the item's neighbourhood density: ``cos(q, d) - gamma * r_d`` with ``r_d``
the mean cosine of ``d`` to its ``k`` nearest neighbours. Here the neighbours are the other
tools' vectors of the same field (the registry is its own sample of what lies near a tool), so
``r_d`` needs no query and no label, and is a property of the registry state: it is recomputed
whenever the tool set changes (a stale value would re-rank tools by neighbours that are gone).

The values are saved beside a saved knowledge base (``adaptation.npz``, tagged with the registry
hash) and reused on load only for exactly that registry.

A z-score over the query's pool is invariant to any per-query shift or scale of the cosine, so a
query-side correction does nothing; ``r_d`` is per *tool* and does change the order.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = [
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
#: Measured leaving one set out (docs/method.md, section 4c): all fields was worse.
HUB_FIELDS: tuple[str, ...] = ("description",)

#: Neighbours averaged per tool (CSLS uses 10).
HUB_NEIGHBOURS = 10
#: Above this many tools in a field, neighbours are looked for among a fixed sample of this many
#: (seeded, so every process computes the same values): cost O(n * cap * dim).
HUB_REFERENCE_CAP = 4096
_BLOCK = 1024


def hubness(vectors: np.ndarray, k: int = HUB_NEIGHBOURS, *, cap: int = HUB_REFERENCE_CAP) -> np.ndarray:
    """Mean cosine of each row of ``vectors`` (unit length, [n, dim]) to its ``k`` nearest other rows.

    Rows are compared with the others only (never with themselves); with fewer than two rows
    every value is 0. Above ``cap`` rows the neighbours come from a seeded sample of ``cap`` rows.
    """
    x = np.asarray(vectors, dtype=np.float32)
    n = len(x)
    out = np.zeros(n, dtype=np.float32)
    if n < 2 or k <= 0:
        return out
    if n > cap:
        ref_idx = np.sort(np.random.default_rng(0).choice(n, size=cap, replace=False))
    else:
        ref_idx = np.arange(n)
    ref = x[ref_idx]
    kk = min(k, len(ref_idx) - 1)
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        sims = x[start:stop] @ ref.T
        rows = np.arange(start, stop)
        # a row never counts itself: find it among the reference rows and mask it
        pos = np.searchsorted(ref_idx, rows)
        pos_ok = pos < len(ref_idx)
        self_hit = np.zeros(stop - start, dtype=bool)
        self_hit[pos_ok] = ref_idx[pos[pos_ok]] == rows[pos_ok]
        sims[np.flatnonzero(self_hit), pos[self_hit]] = -np.inf
        top = np.partition(sims, sims.shape[1] - kk, axis=1)[:, -kk:]
        out[start:stop] = top.mean(axis=1)
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
    meta = np.array([registry, str(HUB_NEIGHBOURS), str(HUB_REFERENCE_CAP)])
    np.savez(tmp, __meta=meta, **{f"field__{f}": v for f, v in hubness.items()})  # type: ignore[arg-type]
    os.replace(tmp, path)


def load_hubness(path: Path, registry: str, n_tools: int) -> dict[str, np.ndarray] | None:
    """The saved values when they were computed for exactly this registry (and these settings), else None."""
    try:
        with np.load(path) as data:
            meta = [str(x) for x in data["__meta"]]
            if meta != [registry, str(HUB_NEIGHBOURS), str(HUB_REFERENCE_CAP)]:
                return None
            out = {k.split("__", 1)[1]: data[k] for k in data.files if k.startswith("field__")}
    except (OSError, KeyError, ValueError):
        return None
    return out if all(len(v) == n_tools for v in out.values()) else None
