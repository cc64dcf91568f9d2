"""Issue 43: per set, the best fixed mix g of meaning (description cosine) and words (eefafaa fusion), and request features."""

import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kind43 import floors  # noqa: E402
from kind_fusion import eefafaa, load, meaning  # noqa: E402
from kind_gate import feats  # noqa: E402

from toolret.eval.lodo import fused_scores, score_metrics  # noqa: E402

sigs = load(Path(os.environ.get("CACHE", ".bench/lodo43")))
fl = floors(sigs)
by_meaning = meaning()
words = replace(eefafaa(), lexical_sd_floor=0.02)
G = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0]
print("set                " + " ".join(f"{g:>11}" for g in G) + "   idf   oov  args ident ntok   cov")
for s in sigs:
    sm = np.nan_to_num(fused_scores(s, by_meaning)[0], neginf=-1e9)
    sw = np.nan_to_num(fused_scores(s, words)[0], neginf=-1e9)
    cells = []
    for g in G:
        m = score_metrics(s, np.where(sm > -1e8, (1 - g) * sm + g * sw, -np.inf))
        ok = m["recall@1"] >= fl[s.name][0] and m["recall@5"] >= fl[s.name][1]
        cells.append(f"{m['recall@1']:.3f}/{m['recall@5']:.3f}{'*' if ok else ' '}")
    q = s.qfeat.mean(0)
    print(
        f"{s.name:<18} "
        + " ".join(cells)
        + f"  {q[0]:.3f} {q[1]:.3f} {q[2]:.2f} {q[3]:.2f} {q[4]:.1f} {feats(s)['cov'].mean():.3f}"
    )
