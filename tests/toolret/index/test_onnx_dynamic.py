"""The int8-activation embedder: same model, int8 weight products, its own name."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx  # the fast-index extra, part of the dev install make test uses
import pytest

from toolret import ModelMismatchError, ToolKnowledgeBase
from toolret.index.embedding import resolve_embedder
from toolret.index.onnx_dynamic import ONNX_DYNAMIC_EMBEDDER_NAME, fold_dequantized_weights
from toolret.index.onnx_embedding import ONNX_EMBEDDER_NAME, OnnxEmbedder
from toolret.sources.stdlib_registry import stdlib_tools

TEXTS = [
    "weather in Paris tomorrow",
    "convert an amount of money between two currencies at today's rate",
    "math.factorial: Return the factorial of n, an exact integer >= 0.",
    "base (integer, required): The base of the triangle.\nheight (integer, required): The height of the triangle.",
]


def _run(model_bytes: bytes, ids: list[int]) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    input_ids = np.array([ids], dtype=np.int64)
    feed = {
        "input_ids": input_ids,
        "attention_mask": np.ones_like(input_ids),
        "token_type_ids": np.zeros_like(input_ids),
    }
    return session.run(None, feed)[0]


def test_folding_keeps_the_model_exact_and_finds_every_weight_product() -> None:
    model = onnx.load(OnnxEmbedder.model_files()[0])
    before = model.SerializeToString()
    weighted = fold_dequantized_weights(model)
    assert len(weighted) == 36  # 6 layers x (query, key, value, output, two feed-forward)
    ids = [101, 4633, 1999, 3000, 4826, 102]
    np.testing.assert_allclose(_run(model.SerializeToString(), ids), _run(before, ids), atol=1e-4)
    assert not [n for n in model.graph.node if n.op_type == "Cast" and n.output[0].endswith("_q")]


def test_dynamic_embedder_has_its_own_name_and_close_vectors() -> None:
    emb = resolve_embedder(ONNX_DYNAMIC_EMBEDDER_NAME)
    assert isinstance(emb, OnnxEmbedder) and emb.dynamic_int8
    assert emb.name == ONNX_DYNAMIC_EMBEDDER_NAME != ONNX_EMBEDDER_NAME
    fast = emb.embed(TEXTS * 5)
    exact = resolve_embedder(None).embed(TEXTS * 5)
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    cosine = (fast * exact).sum(axis=1)
    # Measured on bfcl's 8,056 field texts: mean 0.995, min 0.983.
    assert cosine.min() > 0.97, cosine.min()
    assert not np.allclose(fast, exact, atol=1e-4)  # really a different computation


def test_a_knowledge_base_built_with_int8_activations_never_mixes_with_the_default(tmp_path: Path) -> None:
    tools = [t for t in stdlib_tools() if t.name.startswith("math.")][:8]
    kb = ToolKnowledgeBase(tmp_path / "dq.kb", embedder=ONNX_DYNAMIC_EMBEDDER_NAME)
    kb.add(tools)
    kb.save()
    kb.close()
    reopened = ToolKnowledgeBase.load(tmp_path / "dq.kb")
    try:
        assert reopened.embedder.name == ONNX_DYNAMIC_EMBEDDER_NAME
        assert reopened.search("cube root of a number", k=1).tools[0].name == "math.cbrt"
    finally:
        reopened.close()
    with pytest.raises(ModelMismatchError):
        ToolKnowledgeBase.load(tmp_path / "dq.kb", embedder=ONNX_EMBEDDER_NAME)


def test_building_leaves_the_users_root_logger_alone() -> None:
    """onnxruntime's quantizer would otherwise install a root handler (and basicConfig) in a fresh process."""
    code = (
        "import logging\n"
        "from toolret.index.onnx_dynamic import dynamic_int8_model\n"
        "from toolret.index.onnx_embedding import OnnxEmbedder\n"
        "dynamic_int8_model(OnnxEmbedder.model_files()[0])\n"
        "root = logging.getLogger()\n"
        "print(root.level, len(root.handlers))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [str(logging.WARNING), "0"]
    assert "pre-processing" not in done.stderr
