"""The int8-activation embedder: same model, int8 weight products, its own name."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx  # the fast-index extra, part of the dev install make test uses
import pytest

from toolret import ModelMismatchError, ToolKnowledgeBase
from toolret.index import onnx_dynamic
from toolret.index.embedding import resolve_embedder
from toolret.index.onnx_dynamic import (
    ONNX_DYNAMIC_EMBEDDER_NAME,
    dynamic_int8_model,
    dynamic_int8_session,
    fold_dequantized_weights,
    rewrite_key,
)
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
    exact = resolve_embedder(ONNX_EMBEDDER_NAME).embed(TEXTS * 5)  # the stock model it rewrites
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


def _options() -> object:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return options


def _vector(session: object) -> np.ndarray:
    ids = np.array([[101, 4633, 1999, 3000, 4826, 102]], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    return session.run(None, feed)[0]  # type: ignore[attr-defined]


def test_the_rewritten_model_is_saved_once_and_then_loaded_without_rewriting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = OnnxEmbedder.model_files()[0]
    first = dynamic_int8_session(source, _options(), cache=tmp_path)
    files = list(tmp_path.iterdir())
    assert [f.name for f in files] == [f"minilm-int8-dynamic-{rewrite_key(source)[:16]}.onnx"]
    assert first.get_modelmeta().custom_metadata_map["toolret.rewrite_key"] == rewrite_key(source)

    def no_rewrite(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("the cached model should have been used")

    monkeypatch.setattr(onnx_dynamic, "dynamic_int8_model", no_rewrite)
    again = dynamic_int8_session(source, _options(), cache=tmp_path)
    np.testing.assert_array_equal(_vector(again), _vector(first))


def test_a_cached_file_not_made_from_the_installed_model_is_never_used(tmp_path: Path) -> None:
    source = OnnxEmbedder.model_files()[0]
    path = tmp_path / f"minilm-int8-dynamic-{rewrite_key(source)[:16]}.onnx"
    reference = _vector(dynamic_int8_session(source, _options(), cache=tmp_path / "ref"))
    # Another model's rewrite under this model's file name (a stale or copied cache), then a damaged file.
    for planted in (dynamic_int8_model(source, key="made from another model"), b"not an onnx model"):
        path.write_bytes(planted)
        session = dynamic_int8_session(source, _options(), cache=tmp_path)
        assert session.get_modelmeta().custom_metadata_map["toolret.rewrite_key"] == rewrite_key(source)
        np.testing.assert_array_equal(_vector(session), reference)
        assert path.read_bytes() != planted  # replaced by the right rewrite


def test_writing_a_rewrite_prunes_other_rewrites_unused_for_a_month_and_loading_marks_use(tmp_path: Path) -> None:
    source = OnnxEmbedder.model_files()[0]
    month_ago = time.time() - (onnx_dynamic.STALE_AFTER_DAYS + 5) * 86_400
    old = tmp_path / "minilm-int8-dynamic-0000000000000000.onnx"  # an earlier onnxruntime's rewrite
    recent = tmp_path / "minilm-int8-dynamic-1111111111111111.onnx"  # another environment's, still in use
    leftover = tmp_path / "minilm-int8-dynamic-2222.onnx.abc.tmp"  # a write that was killed
    foreign = tmp_path / "someone-elses.onnx"
    for planted in (old, recent, leftover, foreign):
        planted.write_bytes(b"x")
    for aged in (old, leftover, foreign):
        os.utime(aged, (month_ago, month_ago))
    dynamic_int8_session(source, _options(), cache=tmp_path)
    ours = tmp_path / f"minilm-int8-dynamic-{rewrite_key(source)[:16]}.onnx"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([ours.name, recent.name, foreign.name])
    # A load marks the file as used, so the next prune (from another key's write) keeps it.
    os.utime(ours, (month_ago, month_ago))
    dynamic_int8_session(source, _options(), cache=tmp_path)
    assert ours.stat().st_mtime > time.time() - 3_600
    assert onnx_dynamic.prune_stale(tmp_path, keep=recent) == []


def test_a_cache_folder_that_cannot_be_written_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    source = OnnxEmbedder.model_files()[0]
    session = dynamic_int8_session(source, _options(), cache=blocker / "cache")
    assert session.get_modelmeta().custom_metadata_map["toolret.rewrite_key"] == rewrite_key(source)
    assert blocker.read_text() == "not a folder"


def test_a_fresh_process_with_a_cached_model_does_not_import_onnx(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from toolret.index.embedding import resolve_embedder\n"
        f"resolve_embedder({ONNX_DYNAMIC_EMBEDDER_NAME!r}).embed(['weather in Paris'])\n"
        "print('onnx' in sys.modules)\n"
    )
    env = {**os.environ, "TOOLRET_CACHE_DIR": str(tmp_path)}
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        for _ in range(2)
    ]
    assert [r.stdout.split() for r in runs] == [["True"], ["False"]]
    assert len(list(tmp_path.iterdir())) == 1
