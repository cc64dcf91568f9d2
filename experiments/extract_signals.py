"""Extract every dev set's cached signals (500-query samples, seed 0) as toolret bench --lodo does, and the
training splits: experiments/extract_signals.py [CACHE] [MODEL] (INTENT=all|words|off, 1 = all: where argument values count as intent, RetrievalConfig.intent_without_arguments)."""

import os
import sys
import time
from pathlib import Path

from toolret.eval.scale import ComposedEmbedder
from toolret.eval.signals import load_or_extract
from toolret.index.embedding import resolve_embedder

root = Path("../shared/benchmarks")
cache = Path(sys.argv[1] if len(sys.argv) > 1 else ".bench/lodo")
model = resolve_embedder(sys.argv[2] if len(sys.argv) > 2 else None)
for folder in sorted(p for p in root.iterdir() if (p / "tools.jsonl").is_file()):
    t = time.time()
    emb = ComposedEmbedder(model, cache_path=cache / "embeddings.npz")
    intent = {"1": "all", "0": "off"}.get(os.environ.get("INTENT", ""), os.environ.get("INTENT") or "words")
    for split in ("test", "train") if (folder / "train_queries.jsonl").is_file() else ("test",):
        sig = load_or_extract(folder, cache, emb, limit=500, seed=0, split=split, intent_without_arguments=intent)
        print(folder.name, split, sig.n_queries, f"{time.time() - t:.0f}s", flush=True)
    emb.save()
