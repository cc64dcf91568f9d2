"""What every embedder hands the index: one finite, unit-length float32 row per text.

Any model's output (a list, a framework's floats, an API's response) goes through
:func:`unit_rows`, so a wrong shape, rows of different lengths or a NaN is an error naming the
embedder, not a silent wrong ranking or numpy's "setting an array element with a sequence", and
dense scores are cosines whatever the model normalised. :func:`check_dim` says, naming the model
and both sizes, when vectors cannot be compared with a knowledge base's (another model under the
same recorded name, or an asymmetric model whose query side has another size than its document
side), before numpy's ``matmul`` would.

Example:
    >>> unit_rows([[3.0, 4.0]], 1, "demo").tolist()
    [[0.6000000238418579, 0.800000011920929]]
    >>> unit_rows([[1.0, 0.0], [1.0]], 2, "demo")
    Traceback (most recent call last):
    ...
    toolret.errors.ToolRetError: embedder 'demo' returned vectors of different lengths (2 and 1) for 2 texts; every vector of one model must have the same dimension
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from toolret.errors import ToolRetError

__all__ = ["check_dim", "embed_rows", "unit_rows"]


def _lengths(vectors: Any) -> list[int]:
    """The length of each row of ``vectors`` that has one (a list of lists, of arrays...)."""
    try:
        return [len(row) for row in vectors]
    except TypeError:
        return []


def unit_rows(vectors: Any, n_texts: int, name: str) -> np.ndarray:
    """``vectors`` as unit-length float32 rows, checked: one per text, all finite (a zero row stays zero)."""
    try:
        array = np.asarray(vectors, dtype=np.float32)
    except (ValueError, TypeError) as exc:
        sizes = sorted(set(_lengths(vectors)), reverse=True)
        if len(sizes) > 1:
            raise ToolRetError(
                f"embedder {name!r} returned vectors of different lengths ({' and '.join(map(str, sizes[:4]))}) "
                f"for {n_texts} texts; every vector of one model must have the same dimension"
            ) from None
        raise ToolRetError(
            f"embedder {name!r} returned {type(vectors).__name__} that is not a matrix of numbers "
            f"({type(exc).__name__}: {str(exc)[:200]}); expected one vector of floats per text"
        ) from None
    if array.ndim != 2 or array.shape[0] != n_texts:
        raise ToolRetError(
            f"embedder {name!r} returned shape {array.shape} for {n_texts} texts; expected one vector per text"
        )
    if not np.all(np.isfinite(array)):
        raise ToolRetError(f"embedder {name!r} returned NaN or infinite values")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return array / norms


def check_dim(vectors: np.ndarray, dim: int, name: str, *, side: str = "query", built_with: str = "") -> np.ndarray:
    """``vectors`` unchanged when their rows have ``dim`` values (or either is empty), else a
    :class:`ToolRetError` naming the model and both dimensions.

    ``side`` says what was embedded ("query": a request; "tool": a tool's fields) and
    ``built_with`` the model the knowledge base recorded, when it is known.

    >>> check_dim(np.zeros((1, 3), dtype=np.float32), 4, "demo", built_with="demo")
    Traceback (most recent call last):
    ...
    toolret.errors.ToolRetError: embedder 'demo' gives 3-dimensional query vectors, but this knowledge base holds 4-dimensional tool vectors (embedded with 'demo'): a model of another size under the same name, or an asymmetric model whose query and document sides differ. Pass the embedding model the knowledge base was built with, or rebuild it with this one
    """
    got = int(vectors.shape[1]) if vectors.ndim == 2 else 0
    if not dim or not got or vectors.shape[0] == 0 or got == dim:
        return vectors
    by = f" (embedded with {built_with!r})" if built_with else ""
    raise ToolRetError(
        f"embedder {name!r} gives {got}-dimensional {side} vectors, but this knowledge base holds "
        f"{dim}-dimensional tool vectors{by}: a model of another size under the same name, or an asymmetric "
        "model whose query and document sides differ. Pass the embedding model the knowledge base was built "
        "with, or rebuild it with this one"
    )


def embed_rows(fn: Callable[[list[str]], Any], texts: list[str], name: str) -> np.ndarray:
    """``fn(texts)`` through :func:`unit_rows`; no texts give an empty (0, 0) matrix without calling ``fn``."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return unit_rows(fn(texts), len(texts), name)
