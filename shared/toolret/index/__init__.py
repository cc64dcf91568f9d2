"""The index side: the ChromaDB store, immutable snapshots, per-field lexical and dense indexes, expansion,
and the writer and persistence the knowledge base delegates to.

Every name below is importable from this package (``from toolret.index import ...``); each
module is loaded on first use (:mod:`toolret._exports`).
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "ANN_MIN_ROWS": "ann",
    "CallableEmbedder": "embedding",
    "Changes": "refresh",
    "DenseHits": "dense",
    "ChromaStore": "store",
    "DEFAULT_EMBEDDER_NAME": "embedding",
    "Embedder": "embedding",
    "ExpansionCache": "expansion",
    "ExpansionOutput": "expansion",
    "ExpansionReport": "expansion",
    "FORMAT_VERSION": "store",
    "FaithfulnessVerdict": "expansion",
    "GENERATED_FIELDS": "expansion",
    "HUB_FIELDS": "hubness",
    "HalfScanIndex": "ann",
    "IndexWriter": "writer",
    "LLMExpander": "expansion",
    "LexicalIndex": "lexical",
    "LiveTools": "live_tools",
    "LocalStore": "local_store",
    "MANIFEST": "persistence",
    "InMemoryStore": "in_memory_store",
    "ONNX_DYNAMIC_EMBEDDER_NAME": "onnx_dynamic",
    "ONNX_EMBEDDER_NAME": "onnx_embedding",
    "SHIPPED_EMBEDDER_NAME": "embedding",
    "SNAPSHOT_FILE": "snapshot_file",
    "STOCK_EMBEDDER_NAME": "embedding",
    "OnnxEmbedder": "onnx_embedding",
    "SavedState": "snapshot_file",
    "SentenceTransformerEmbedder": "embedding",
    "Snapshot": "snapshot",
    "StoredTool": "store",
    "SyncReport": "writer",
    "TORCH_EMBEDDER_NAME": "embedding",
    "analyze": "lexical",
    "build_snapshot": "snapshot",
    "damaged_message": "persistence",
    "default_model_path": "embedding",
    "shipped_model_dir": "embedding",
    "dense_scores": "dense",
    "dense_search": "dense",
    "expand_offline": "expansion",
    "field_record_id": "store",
    "http_client": "store",
    "load_snapshot": "persistence",
    "make_dir": "persistence",
    "one_blas_thread": "blas",
    "open_store": "persistence",
    "opened": "persistence",
    "read_changes": "refresh",
    "registry_hash": "persistence",
    "resolve_embedder": "embedding",
    "rows_float32": "dense",
    "save": "persistence",
    "saved_folder": "persistence",
    "tool_hubness": "hubness",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
