"""The int8 export's embedding lookup: int8 rows scaled after the lookup, bit-identical to the dequantized table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from tokenizers import Tokenizer

from toolret.index.embedding import shipped_model_dir
from toolret.index.onnx_embedding import OnnxEmbedder, _batches, _encode
from toolret.sources.stdlib_registry import stdlib_tools
from toolret.training.export import int8_row_lookup


def _texts() -> list[str]:
    tools = stdlib_tools()[:60]
    return [t.field_text("description") or t.name for t in tools] + ["what is the factorial of 12?", "x", "a " * 300]


def _vectors(model: str | Path, tokenizer: str) -> np.ndarray:
    """The embedder's own batching and pooling over one session of ``model``."""
    tok = Tokenizer.from_file(tokenizer)
    tok.enable_truncation(256)
    tok.no_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    texts = _texts()
    ids = [e.ids for e in tok.encode_batch(texts)]
    out = np.empty((len(texts), 384), dtype=np.float32)
    for rows in _batches(sorted(range(len(texts)), key=lambda i: len(ids[i])), [len(r) for r in ids], 8):
        out[rows] = _encode(session, [ids[i] for i in rows])
    return out


def test_the_row_lookup_gives_the_dequantized_tables_vectors_bit_for_bit(tmp_path: Path) -> None:
    # The stock model still dequantizes its whole vocabulary table at load: rewrite a copy of it.
    stock, tokenizer = OnnxEmbedder.model_files()
    model = onnx.load(stock)
    rewritten = int8_row_lookup(model)
    assert any("word_embeddings" in name for name in rewritten), rewritten
    onnx.checker.check_model(model)
    onnx.save(model, tmp_path / "rows.onnx")
    assert np.array_equal(_vectors(stock, tokenizer), _vectors(tmp_path / "rows.onnx", tokenizer))
    assert int8_row_lookup(model) == []  # nothing left to rewrite


def test_the_shipped_model_looks_its_vocabulary_up_in_int8() -> None:
    folder = Path(shipped_model_dir())
    model = onnx.load(folder / "model.onnx")
    int8 = {i.name for i in model.graph.initializer if i.data_type == onnx.TensorProto.INT8}
    table = next(name for name in int8 if "word_embeddings" in name)
    readers = [n.op_type for n in model.graph.node if table in n.input]
    assert readers == ["Gather"], readers  # not Cast: no float copy of the 30,522 x 384 table at load
    assert int8_row_lookup(model) == []
