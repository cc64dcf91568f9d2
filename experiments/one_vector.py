"""Can one dense vector per tool replace the per-field vectors? (docs/models.md, "One vector per tool")

A measurement record, not part of the package. Indexing embeds every non-empty field of every
tool (up to seven texts a tool); one vector a tool would cut index time several-fold. This scores
``fast``'s fusion on the cached per-query signals (``toolret.eval.signals``) with BM25 on every
field as now, but the dense side from one vector only: the description field's, or one text
joining several fields. Pools are rebuilt the same way (each field's BM25 top ``depth`` plus the
one vector's top ``depth``), and the lexical share is tried at 0.35 (``fast``) and 0.45.

    .venv/bin/python experiments/one_vector.py --cache .bench/second-stage/eval

It reads (or extracts) the same 500-query samples as ``experiments/second_stage_lodo.py``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from common import recall_ndcg, snapshot_docs

from toolret.documents.tool_doc import INDEX_FIELDS
from toolret.eval.datasets import load_dataset
from toolret.eval.lodo import Setting, _zscore_shared, default_setting, evidence_of, fused_scores
from toolret.eval.scale import ComposedEmbedder
from toolret.eval.signals import DatasetSignals, load_or_extract
from toolret.index.embedding import resolve_embedder
from toolret.index.expansion import expand_offline
from toolret.training.benchmarks import DEV_SETS

DESCRIPTION = INDEX_FIELDS.index("description")


def top_mask(x: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    order = np.argsort(-np.where(mask, x, -np.inf), 1, kind="stable")[:, :k]
    out = np.zeros_like(mask)
    np.put_along_axis(out, order, np.take_along_axis(mask, order, 1), 1)
    return out


def one_vector_scores(sig: DatasetSignals, s: Setting, beta: float) -> np.ndarray:
    """``fast``'s fusion with every field's BM25 and the description slot's cosine as the only dense signal."""
    present = sig.present & sig.valid[:, :, None]
    pool = sig.named & sig.valid
    for f in range(len(INDEX_FIELDS)):
        pool |= top_mask(sig.lex[:, :, f], present[:, :, f] & (sig.lex[:, :, f] > 0), s.candidates_per_field)
    pool |= top_mask(sig.dense[:, :, DESCRIPTION], present[:, :, DESCRIPTION], s.candidates_per_field)
    pres = sig.present & pool[:, :, None]
    dense = sig.dense.astype(float)
    dense[:, :, DESCRIPTION] -= s.hubness_weight * sig.hub[:, :, DESCRIPTION]
    lex = _zscore_shared(
        sig.lex.astype(float), pres, s.lexical_sd_floor * sig.bound[:, None, :].astype(float), s.min_field_pool
    )
    dn = _zscore_shared(dense, pres, s.dense_sd_floor, s.min_field_pool)
    b = 1 / (1 + np.exp(-(math.log(beta / (1 - beta)) + s.evidence_slope * evidence_of(sig.qfeat))))
    w = np.asarray(s.field_weights)
    lex_term = (np.where(pres, lex, 0) * w).sum(2) / np.maximum((pres * w).sum(2), 1e-9)
    dense_term = np.where(pres[:, :, DESCRIPTION], dn[:, :, DESCRIPTION], 0)
    score = b[:, None] * lex_term + (1 - b[:, None]) * dense_term
    score = score + s.name_match_boost * sig.named - s.penalty_scale * sig.penalty
    return np.where(pool, score, -np.inf)


def with_joined_vector(
    sig: DatasetSignals, root: Path, embedder: ComposedEmbedder, fields: list[str]
) -> DatasetSignals:
    """The signals with the description slot's cosine replaced by one text joining ``fields``."""
    ds = load_dataset(root / sig.name)
    docs = snapshot_docs(root, sig.name, embedder)
    texts = [" ".join(t for t in (expand_offline(d).field_text(f) for f in fields) if t)[:2000] for d in docs]  # type: ignore[arg-type]
    tools = np.asarray(embedder.embed(texts))
    queries = np.asarray(embedder.embed([q.query for q in ds.sample(500, seed=0).queries]))
    tools /= np.linalg.norm(tools, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    cos = queries @ tools.T
    sig.dense[:, :, DESCRIPTION] = np.take_along_axis(cos, np.where(sig.cand >= 0, sig.cand, 0), 1)
    sig.present[:, :, DESCRIPTION] |= sig.valid
    return sig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path("../shared/benchmarks"))
    ap.add_argument("--cache", type=Path, default=Path(".bench/second-stage/eval"))
    a = ap.parse_args()
    embedder = ComposedEmbedder(resolve_embedder(None), cache_path=a.cache / "embeddings.npz")
    st = default_setting("fast")
    joins = [["description"], ["description", "parameters", "examples"], ["description", "profile"]]
    print("R@5 / NDCG@10 | fast (seven vectors) | one vector, lexical share 0.35 and 0.45, per text")
    for name in DEV_SETS:
        stored = load_or_extract(a.root / name, a.cache, embedder)
        base = recall_ndcg(fused_scores(stored, st)[0], stored)
        cells = [f"{name}: fast {base[0]:.3f}/{base[1]:.3f}"]
        for fields in joins:
            sig = load_or_extract(a.root / name, a.cache, embedder)
            if fields != ["description"]:
                sig = with_joined_vector(sig, a.root, embedder, fields)
            for beta in (0.35, 0.45):
                r = recall_ndcg(one_vector_scores(sig, st, beta), sig)
                cells.append(f"{'+'.join(fields)} {beta:g}: {r[0]:.3f}/{r[1]:.3f}")
        print(" | ".join(cells), flush=True)
    embedder.save()


if __name__ == "__main__":
    main()
