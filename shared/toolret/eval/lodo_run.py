"""``toolret bench --lodo``: the settings searched, the folds run over every dev set's cached signals,
and the tables printed (docs/method.md, section 4b). The scoring and the choice itself are
:mod:`toolret.eval.lodo`; this module is the verb around them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from toolret.eval.lodo import Setting, baseline_metrics, default_setting, grid, lodo, score_setting
from toolret.eval.signals import DatasetSignals

__all__ = ["AUTO_MARGINS", "HUB_WEIGHTS", "STRENGTH_SLOPES", "choose_margin", "run_lodo", "search_space"]


# ----------------------------------------------------------------------------- the bench verb
def search_space(base: Setting) -> list[Setting]:
    """The settings ``toolret bench --lodo`` chooses among (every tunable the fusion has).

    Kept small enough to score in seconds per set; each axis brackets the shipped value.
    """
    profiles = [
        base.field_weights,
        (0.35, 0.25, 0.15, 0.25, 0.15, 0.25, 0.1),  # the MFTR paper's heuristic defaults
        (0.5, 0.25, 0.1, 0.15, 0.1, 0.15, 0.05),  # description-led, the earlier default
        (0.5, 0.1, 0.1, 0.15, 0.05, 0.15, 0.05),  # lighter parameters and profile
    ]
    out: list[Setting] = []
    # zscore only: the engine has no other normalisation ("bound" and "minmax" stay in lodo for the
    # records), and a fold that chose one would name a setting nobody can ship.
    for weights in dict.fromkeys(profiles):
        out += grid(
            replace(base, normalization="zscore", field_weights=weights, lexical_floor=0.0),
            lexical_weight=(0.2, 0.25, 0.35),
            evidence_slope=(0.0, 0.5, 1.0),
        )
    out += grid(
        base, candidates_per_field=(25, 50, 100), name_match_boost=(0.0, 0.2, 0.5), penalty_scale=(0.0, 0.05, 0.1)
    )
    out += grid(base, lexical_sd_floor=(0.02, 0.05, 0.1, 0.2), dense_sd_floor=(0.05, 0.08), min_field_pool=(0, 5))
    # the registry's density prior (toolret.index.hubness), on the description or every field
    out += grid(base, hubness_weight=HUB_WEIGHTS, lexical_weight=(0.2, 0.25, 0.35), hub_all_fields=(False, True))
    # the embedder's own cosine on its absolute scale (mftr.cosine_anchor), with the lexical share it trades against
    out += grid(base, cosine_weight=COSINE_WEIGHTS, lexical_weight=(0.25, 0.27, 0.29, 0.31, 0.35))
    # the strength of the best word match (mftr.lexical_strength), with the anchor and share it trades against
    out += grid(
        base,
        strength_slope=STRENGTH_SLOPES,
        strength_center=(0.6, 0.8, 1.0, 1.2),
        cosine_weight=(2.5, 5.0, 7.5),
        lexical_weight=(0.15, 0.2, 0.25, 0.29),
    )
    return list(dict.fromkeys(out))


def choose_margin(
    sigs: Sequence[DatasetSignals], base: Setting, margins: Sequence[float], train: Sequence[int]
) -> float:
    """The ``k="auto"`` margin with the best mean TRACC over the multi-tool sets among ``train``
    (all of ``train`` when none of them is multi-tool)."""
    multi = [i for i in train if float(sigs[i].n_rel.mean()) > 1.2] or list(train)
    scores = [np.mean([score_setting(sigs[i], replace(base, auto_margin=m))["tracc"] for i in multi]) for m in margins]
    return float(margins[int(np.argmax(scores))])


#: Hubness weights tried: negative favours tools in dense regions of the registry, positive demotes hubs (CSLS).
HUB_WEIGHTS = (-0.6, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2)

#: Weights of the embedder's anchor tried (0 = the fused z-scores alone).
COSINE_WEIGHTS = (0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.5)

#: Slopes of the lexical share on the strength of the best word match tried (0 = off).
STRENGTH_SLOPES = (0.0, 1.5, 2.5, 3.5, 5.0)

#: k="auto" margins tried (on the scale of the fused score).
AUTO_MARGINS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5)


def run_lodo(
    root: str, out: str, *, limit: int | None, seed: int = 0, model_for: Callable[[str], Any] | None = None
) -> dict[str, Any]:
    """Extract (or load) every dev set's signals, run the folds, print and return the tables.

    ``model_for(dataset name)`` gives the embedding model to extract a set's signals with (default:
    the default model for every set). With a trained embedder, pass the fold model that never saw
    the set (:func:`toolret.training.benchmarks.fold_model_for`): every set's signals then come
    from a model blind to it, and the fusion is re-chosen on top of that model. Its signals are
    cached apart (``OUT/lodo-models``).
    """
    from pathlib import Path

    from toolret.eval.scale import ComposedEmbedder
    from toolret.eval.signals import load_or_extract
    from toolret.eval.tables import format_table
    from toolret.index.embedding import resolve_embedder

    cache = Path(out) / ("lodo" if model_for is None else "lodo-models")
    folders = sorted(p for p in Path(root).iterdir() if (p / "tools.jsonl").is_file())
    sigs = []
    for folder in folders:
        model = resolve_embedder(None if model_for is None else model_for(folder.name))
        tag = "" if model_for is None else "-" + hashlib.sha1(model.name.encode()).hexdigest()[:8]
        embedder = ComposedEmbedder(model, cache_path=cache / f"embeddings{tag}.npz")
        sigs.append(load_or_extract(folder, cache / tag.strip("-") if tag else cache, embedder, limit=limit, seed=seed))
        embedder.save()
    default = default_setting("fast")
    settings = [default, *search_space(default)]
    folds = lodo(sigs, settings, default)
    for si, fold in enumerate(folds):  # then the k="auto" margin, by TRACC, on the same training sets
        train = [j for j in range(len(sigs)) if j != si]
        fold.setting = replace(fold.setting, auto_margin=choose_margin(sigs, fold.setting, AUTO_MARGINS, train))
        fold.metrics = score_setting(sigs[si], fold.setting)
    rows: list[list[Any]] = []
    for fold, sig in zip(folds, sigs):
        b, c = fold.baselines["bm25"], fold.baselines["cosine"]
        d, m = fold.default_metrics, fold.metrics
        rows.append(
            [
                fold.left_out,
                sig.n_queries,
                b["recall@5"],
                c["recall@5"],
                d["recall@5"],
                m["recall@5"],
                b["ndcg@10"],
                c["ndcg@10"],
                d["ndcg@10"],
                m["ndcg@10"],
                d["completeness@10"],
                m["completeness@10"],
                d["tracc"],
                m["tracc"],
            ]
        )
        if sig.has_names:
            bn, cn = baseline_metrics(sig, "bm25", name_level=True), baseline_metrics(sig, "cosine", name_level=True)
            dn = score_setting(sig, default, name_level=True)
            mn = score_setting(sig, fold.setting, name_level=True)
            rows.append(
                [
                    f"{fold.left_out} (by name)",
                    sig.n_queries,
                    bn["recall@5"],
                    cn["recall@5"],
                    dn["recall@5"],
                    mn["recall@5"],
                    bn["ndcg@10"],
                    cn["ndcg@10"],
                    dn["ndcg@10"],
                    mn["ndcg@10"],
                    dn["completeness@10"],
                    mn["completeness@10"],
                    None,
                    None,
                ]
            )
    headers = [
        "left out",
        "n",
        "R@5 bm25",
        "cos",
        "fast",
        "lodo",
        "NDCG@10 bm25",
        "cos",
        "fast",
        "lodo",
        "C@10 fast",
        "lodo",
        "TRACC fast",
        "lodo",
    ]
    table = format_table(headers, rows)
    margins = [(r[5] - max(r[2], r[3]), r[0]) for r in rows if not r[0].endswith("(by name)")]
    worst = min(margins)
    ids = list(zip(*[r for r in rows if not r[0].endswith("(by name)")]))
    print(
        "Leave one dataset out (fusion chosen on the other sets, scored on the one left out; "
        "'fast' = the shipped defaults, chosen on all sets):"
    )
    print(table)
    print(
        f"worst left-out set: {worst[1]} (R@5 {worst[0]:+.3f} over the better of bm25 and cosine); "
        f"left-out mean R@5 {np.mean(ids[5]):.3f} vs cosine {np.mean(ids[3]):.3f}, bm25 {np.mean(ids[2]):.3f}"
    )
    for fold in folds:
        print(f"  without {fold.left_out}: {fold.setting.label()}")
    return {
        "table": table,
        "worst": worst[1],
        "folds": [
            {
                "left_out": f.left_out,
                "setting": f.setting.label(),
                "metrics": f.metrics,
                "default": f.default_metrics,
                "baselines": f.baselines,
            }
            for f in folds
        ],
    }
