"""What every embedder hands the index: one finite, unit-length float32 row per text.

Any model's output (a list, a framework's floats, an API's response) goes through
:func:`unit_rows`, so a wrong shape or a NaN is an error naming the embedder, not a silent wrong
ranking, and dense scores are cosines whatever the model normalised.

Example:
    >>> unit_rows([[3.0, 4.0]], 1, "demo").tolist()
    [[0.6000000238418579, 0.800000011920929]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from toolret.errors import ToolRetError

__all__ = ["embed_rows", "unit_rows"]


def unit_rows(vectors: Any, n_texts: int, name: str) -> np.ndarray:
    """``vectors`` as unit-length float32 rows, checked: one per text, all finite (a zero row stays zero)."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[0] != n_texts:
        raise ToolRetError(
            f"embedder {name!r} returned shape {array.shape} for {n_texts} texts; expected one vector per text"
        )
    if not np.all(np.isfinite(array)):
        raise ToolRetError(f"embedder {name!r} returned NaN or infinite values")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return array / norms


def embed_rows(fn: Callable[[list[str]], Any], texts: list[str], name: str) -> np.ndarray:
    """``fn(texts)`` through :func:`unit_rows`; no texts give an empty (0, 0) matrix without calling ``fn``."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return unit_rows(fn(texts), len(texts), name)
