"""What the experiment scripts share: the engine's own metrics on a score array, and the order
of a set's tools in a snapshot (the order the cached signals' candidate indices refer to)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from toolret import ToolKnowledgeBase
from toolret.documents.tool_doc import ToolDoc
from toolret.eval.datasets import load_dataset
from toolret.eval.lodo import score_metrics
from toolret.eval.signals import DatasetSignals


def recall_ndcg(score: np.ndarray, sig: DatasetSignals) -> tuple[float, float]:
    """R@5 and NDCG@10 of ``score`` ([Q, C]), computed as ``toolret bench --lodo`` computes them."""
    m = score_metrics(sig, score)
    return m["recall@5"], m["ndcg@10"]


def snapshot_docs(root: Path, name: str, embedder: Any) -> list[ToolDoc]:
    """The set's tools in snapshot order (``DatasetSignals.cand`` indexes this list)."""
    kb = ToolKnowledgeBase(None, embedder=embedder)
    kb.add(load_dataset(root / name).tool_docs())
    docs = list(kb._writer.snapshot.docs)
    kb.close()
    return docs
