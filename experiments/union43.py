"""Issue 43: the union condition alone (every dev registry in one knowledge base), presets and reference fusions.

Usage: python experiments/union43.py OUT [LIMIT]   (toolret bench runs the same, after the per-set rows)
"""

import json
import sys
from pathlib import Path

from toolret.eval.bench import CachedIndexing
from toolret.eval.reference_fusions import REFERENCE_FUSIONS
from toolret.eval.union import bench_union, guard_table

out = Path(sys.argv[1])
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 300
root = Path("../shared/benchmarks")
folders = sorted(p for p in root.iterdir() if (p / "tools.jsonl").is_file())
emb = CachedIndexing(out / "lodo" / "embeddings.npz")
results = bench_union(folders, ["fast", "balanced", *REFERENCE_FUSIONS], emb, limit=limit, auto_k=True)
(out / "union.json").write_text(json.dumps(results))
for e in results:
    if e["level"] == "id":
        m = e["metrics"]
        print(
            f"{e['dataset']:<26} {e['preset']:<15} {m['recall@1']:.3f} {m['recall@5']:.3f} {m.get('tracc', float('nan')):.3f}"
        )
print(guard_table(results))
