"""Leave one dataset out (docs/method.md, section 4b): choose defaults on all dev sets but one, score the one left out.

``toolret bench --lodo`` runs this. Each dev set's raw signals are extracted once and cached
(:mod:`toolret.eval.signals`); :func:`score_setting` then re-scores a parameter setting over the
cached arrays in numpy — the same formula as :func:`toolret.scoring.mftr.score_candidates` — so a grid
of settings costs seconds per set, not a pipeline run each. For every fold the setting that does
best on the other sets is chosen (:func:`choose`) and reported on the left-out set.

A setting is a :class:`Setting`: the fusion's numbers, named as :class:`~toolret.config.RetrievalConfig`
names them (``lexical_weight``, ``evidence_slope``, ``candidates_per_field``, ``name_match_boost``,
``lexical_sd_floor``, ``hubness_weight``, ``cosine_weight``, ...), plus the ``k="auto"`` margin.
:func:`grid` lists the settings searched; the shipped defaults are :func:`default_setting` (read
from :meth:`toolret.config.RetrievalConfig.preset` by :func:`setting_of`).

Why the formula is written twice, here and in :func:`toolret.scoring.mftr.score_candidates` (the
one place this is said): the engine scores one request's candidate pool per call (tens to hundreds
of candidates, a penalty per candidate from its parameters), while :func:`fused_scores` scores a
[queries x candidates x fields] array of cached signals at once, so a grid of thousands of settings
costs seconds instead of a pipeline run per setting. One definition for both would make the engine
build arrays it does not need per request, or make the grid re-run the pipeline. The learned fusion
shares its feature code between the two (:mod:`toolret.eval.fusion_signals`); the hand-set formula
is kept equal by ``tests/toolret/eval/test_lodo.py::test_cached_signals_rescore_like_the_engine``
(every term, query by query, to 1e-5), which fails on the query where the two part. The
``bound`` and ``minmax`` normalisations live only here, for the records: the engine has only z-scores.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from toolret.documents.tool_doc import INDEX_FIELDS
from toolret.eval.signals import QUERY_FEATURES, DatasetSignals
from toolret.index.hubness import HUB_FIELDS
from toolret.scoring.learned_fusion import pool_zscore as _zscore

__all__ = [
    "FoldResult",
    "Setting",
    "choose",
    "default_setting",
    "grid",
    "guard_margin",
    "lodo",
    "score_metrics",
    "score_setting",
    "setting_of",
]

_F = len(INDEX_FIELDS)
_LOG2 = 1.0 / np.log2(np.arange(2, 12))
_HUB_MASK = np.array([f in HUB_FIELDS for f in INDEX_FIELDS])


@dataclass(frozen=True)
class Setting:
    """One point of the search: every number the fused score and ``k="auto"`` depend on."""

    normalization: str = "minmax"  # "zscore" (the engine's) | "bound", "minmax" (earlier formulas, for the records)
    lexical_weight: float = 0.5  # FusionConfig.lexical_weight: the lexical share at neutral evidence
    evidence_slope: float = 0.0  # FusionConfig.evidence_slope: logit change of it per unit of evidence (evidence_of)
    strength_slope: float = 0.0  # FusionConfig.strength_slope: logit change per unit of strength (lexical_strength)
    strength_center: float = 0.0  # FusionConfig.strength_center: the strength where that term is 0
    field_weights: tuple[float, ...] = (0.35, 0.25, 0.15, 0.25, 0.15, 0.25, 0.1)  # FieldWeights, INDEX_FIELDS order
    candidates_per_field: int = 50
    name_match_boost: float = 0.2  # FusionConfig.name_match_boost
    penalty_scale: float = 0.05  # PenaltyConfig.scale
    lexical_floor: float = 0.0  # minmax only: lexical denominator >= lexical_floor x the query's BM25 bound
    auto_margin: float = 0.08  # AutoKConfig.margin
    lexical_sd_floor: float = 0.0  # FusionConfig.lexical_sd_floor (zscore)
    dense_sd_floor: float = 0.0  # FusionConfig.dense_sd_floor (zscore)
    min_field_pool: int = 0  # FusionConfig.min_field_pool (zscore)
    hubness_weight: float = 0.0  # FusionConfig.hubness_weight: cosine minus it x the tool's hubness
    hub_all_fields: bool = False  # measured only: every field's hubness, not just HUB_FIELDS (the engine's)
    cosine_weight: float = 0.0  # FusionConfig.cosine_weight: + it x (raw description cosine - pool mean)
    fusion_method: str = (
        "heuristic"  # FusionConfig.method; "learned": every number above unused but candidates_per_field
    )

    def label(self) -> str:
        w = "/".join(f"{x:g}" for x in self.field_weights)
        return (
            f"{self.normalization} lexical_weight={self.lexical_weight:g} evidence_slope={self.evidence_slope:g} "
            f"strength={self.strength_slope:g}@{self.strength_center:g} "
            f"w={w} candidates_per_field={self.candidates_per_field} name_match_boost={self.name_match_boost:g} "
            f"penalty.scale={self.penalty_scale:g} lexical_floor={self.lexical_floor:g} "
            f"auto_k.margin={self.auto_margin:g} sd_floors={self.lexical_sd_floor:g}/{self.dense_sd_floor:g} "
            f"hubness_weight={self.hubness_weight:g}{'(all fields)' if self.hub_all_fields else ''} "
            f"cosine_weight={self.cosine_weight:g}" + (" fusion=learned" if self.fusion_method == "learned" else "")
        )


def evidence_of(qfeat: np.ndarray) -> np.ndarray:
    """Per-query lexical evidence, centred near 0 (same formula as toolret.scoring.mftr.evidence_score)."""
    from toolret.scoring.mftr import evidence_score

    cols = {name: qfeat[:, i] for i, name in enumerate(QUERY_FEATURES)}
    return evidence_score(cols["oov_share"], cols["n_ident"])


def _zscore_shared(x: np.ndarray, mask: np.ndarray, sd_floor: np.ndarray | float, min_n: int) -> np.ndarray:
    """z-scores per field, but a field that fewer than ``min_n`` candidates have borrows the
    mean and deviation of all the query's (candidate, field) values of that signal."""
    per = _zscore(x, mask, sd_floor)
    n_f = mask.sum(axis=1, keepdims=True)
    n = np.maximum(mask.sum(axis=(1, 2), keepdims=True), 1)
    mean = np.where(mask, x, 0.0).sum(axis=(1, 2), keepdims=True) / n
    sd = np.sqrt(np.where(mask, (x - mean) ** 2, 0.0).sum(axis=(1, 2), keepdims=True) / n)
    floor = np.asarray(sd_floor)
    if floor.ndim == 3:
        floor = floor.max(axis=2, keepdims=True)
    sd = np.maximum(sd, floor)
    shared = np.where(mask & (sd > 0), (x - mean) / np.where(sd > 0, sd, 1.0), 0.0)
    return np.where(n_f < min_n, shared, per)


def _normalise(x: np.ndarray, mask: np.ndarray, how: str) -> np.ndarray:
    """Per query and field, over the candidates that have the field ([Q, C, F] arrays)."""
    big = np.where(mask, x, np.inf).min(axis=1, keepdims=True)
    top = np.where(mask, x, -np.inf).max(axis=1, keepdims=True)
    big = np.where(np.isfinite(big), big, 0.0)
    top = np.where(np.isfinite(top), top, 0.0)
    if how == "minmax":
        span = top - big
        return np.where(mask & (span > 0), (x - big) / np.where(span > 0, span, 1.0), 0.0)
    if how == "zscore":
        n = np.maximum(mask.sum(axis=1, keepdims=True), 1)
        mean = np.where(mask, x, 0.0).sum(axis=1, keepdims=True) / n
        var = np.where(mask, (x - mean) ** 2, 0.0).sum(axis=1, keepdims=True) / n
        sd = np.sqrt(var)
        return np.where(mask & (sd > 0), (x - mean) / np.where(sd > 0, sd, 1.0), 0.0)
    raise ValueError(how)


def fused_scores(sig: DatasetSignals, s: Setting, beta_q: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(score [Q, C] with -inf outside the pool, pool mask) of setting ``s`` on cached signals."""
    pool = sig.valid & (sig.rank < s.candidates_per_field)
    if s.fusion_method == "learned":
        from toolret.eval.fusion_signals import fusion_arrays, score_arrays
        from toolret.scoring.learned_fusion import shipped_fusion

        return score_arrays(shipped_fusion(), fusion_arrays(sig, s.candidates_per_field)), pool
    pres = sig.present & pool[:, :, None]
    lex = sig.lex.astype(np.float64)
    dense = sig.dense.astype(np.float64)
    if s.hubness_weight:
        hub = sig.hub if s.hub_all_fields else np.where(_HUB_MASK, sig.hub, 0.0)
        dense = dense - s.hubness_weight * hub
    if s.normalization == "bound":
        bound = sig.bound[:, None, :].astype(np.float64)
        ln = np.where(bound > 0, np.clip(lex / np.where(bound > 0, bound, 1.0), 0.0, 1.0), 0.0)
        dn = np.clip(dense, 0.0, 1.0)
    elif s.normalization == "minmax":
        dn = _normalise(dense, pres, "minmax")
        top = np.where(pres, lex, 0.0).max(axis=1, keepdims=True)
        denom = np.maximum(top, s.lexical_floor * sig.bound[:, None, :])
        ln = np.where(pres & (denom > 0), lex / np.where(denom > 0, denom, 1.0), 0.0)
    elif s.normalization == "zscore":
        ln = _zscore_shared(lex, pres, s.lexical_sd_floor * sig.bound[:, None, :].astype(np.float64), s.min_field_pool)
        dn = _zscore_shared(dense, pres, s.dense_sd_floor, s.min_field_pool)
    else:
        raise ValueError(s.normalization)
    share = np.full(lex.shape[0], s.lexical_weight)  # the lexical share beta_q of each request
    if (s.evidence_slope or s.strength_slope) and 0.0 < s.lexical_weight < 1.0:
        logit = math.log(s.lexical_weight / (1 - s.lexical_weight)) + s.evidence_slope * evidence_of(sig.qfeat)
        if s.strength_slope:  # mftr.lexical_strength: the pool's best description BM25 / log(N + 1)
            strength = np.where(pres[:, :, 0], lex[:, :, 0], 0.0).max(axis=1) / math.log(sig.n_tools + 1.0)
            logit = logit + s.strength_slope * (strength - s.strength_center)
        share = 1.0 / (1.0 + np.exp(-logit))
    if beta_q is not None:
        share = beta_q
    w = np.asarray(s.field_weights, dtype=np.float64)
    per_field = np.where(pres, share[:, None, None] * ln + (1 - share[:, None, None]) * dn, 0.0)
    num = (per_field * w).sum(axis=2)
    den = (pres * w).sum(axis=2)
    score = num / np.where(den > 0, den, 1.0)
    score = score + s.name_match_boost * sig.named - s.penalty_scale * sig.penalty
    if s.cosine_weight:
        score = score + s.cosine_weight * _cosine_anchor(sig, pool)
    return np.where(pool, score, -np.inf), pool


def _cosine_anchor(sig: DatasetSignals, pool: np.ndarray) -> np.ndarray:
    """[Q, C] raw description cosine (the best field's, floored at 0, where a tool has no description)
    minus its mean over the query's pool: :func:`toolret.scoring.mftr.cosine_anchor` on cached signals."""
    best = np.maximum(np.where(sig.present, sig.dense, 0.0).max(axis=2), 0.0)
    cos = np.where(sig.present[:, :, 0], sig.dense[:, :, 0], best).astype(np.float64)
    cos = np.where(pool, cos, 0.0)
    n = np.maximum(pool.sum(axis=1, keepdims=True), 1)
    return cos - cos.sum(axis=1, keepdims=True) / n


def score_setting(
    sig: DatasetSignals, s: Setting, *, name_level: bool = False, beta_q: np.ndarray | None = None
) -> dict[str, float]:
    """Mean R@5, NDCG@10, C@10 and TRACC (of the k='auto' cut) of setting ``s`` on one set."""
    return score_metrics(sig, fused_scores(sig, s, beta_q)[0], name_level=name_level, auto_margin=s.auto_margin)


def score_metrics(
    sig: DatasetSignals, score: np.ndarray, *, name_level: bool = False, auto_margin: float | None = None
) -> dict[str, float]:
    """Mean R@5, NDCG@10 and C@10 of any per-candidate ``score`` ([Q, C], -inf outside the pool) on
    one set, plus TRACC of the k='auto' cut when ``auto_margin`` is given."""
    rel, rel_group, group = sig.rel, sig.rel_group, sig.group
    if score.shape[1] < 40:  # a small registry: pad with empty slots so every cut-off exists
        extra = 40 - score.shape[1]
        score = np.pad(score, ((0, 0), (0, extra)), constant_values=-np.inf)
        rel = np.pad(rel, ((0, 0), (0, extra)))
        rel_group = np.pad(rel_group, ((0, 0), (0, extra)))
        group = np.pad(group, ((0, 0), (0, extra)), constant_values=-1)
    order = np.argsort(-score, axis=1, kind="stable")[:, :40]
    top_scores = np.take_along_axis(score, order, axis=1)
    finite = np.isfinite(top_scores)
    if name_level:
        r1, r5, nd, c10 = [], [], [], []
        for qi in range(sig.n_queries):
            seen: list[int] = []
            hits: list[bool] = []
            for j in range(order.shape[1]):
                if not finite[qi, j]:
                    break
                g = int(group[qi, order[qi, j]])
                if g in seen:
                    continue
                seen.append(g)
                hits.append(bool(rel_group[qi, order[qi, j]]))
                if len(seen) == 10:
                    break
            h = np.array(hits + [False] * (10 - len(hits)))
            n = int(sig.n_rel_group[qi])
            r1.append(h[:1].sum() / n)
            r5.append(h[:5].sum() / n)
            nd.append((h * _LOG2).sum() / _LOG2[: min(n, 10)].sum())
            c10.append(float(h.sum() >= n))
        out = {
            "recall@1": float(np.mean(r1)),
            "recall@5": float(np.mean(r5)),
            "ndcg@10": float(np.mean(nd)),
            "completeness@10": float(np.mean(c10)),
        }
    else:
        top_hits = np.take_along_axis(rel, order[:, :10], axis=1) & finite[:, :10]
        n_rel = sig.n_rel.astype(np.float64)
        idcg = np.cumsum(_LOG2)[np.minimum(sig.n_rel, 10) - 1]
        out = {
            "recall@1": float((top_hits[:, :1].sum(axis=1) / n_rel).mean()),
            "recall@5": float((top_hits[:, :5].sum(axis=1) / n_rel).mean()),
            "ndcg@10": float(((top_hits * _LOG2).sum(axis=1) / idcg).mean()),
            "completeness@10": float((top_hits.sum(axis=1) >= sig.n_rel).mean()),
        }
    if auto_margin is not None:
        out["tracc"] = _tracc_auto(rel, sig.n_rel, order, top_scores, finite, auto_margin)
    return out


def _tracc_auto(
    rel: np.ndarray,
    n_rel: np.ndarray,
    order: np.ndarray,
    top: np.ndarray,
    finite: np.ndarray,
    margin: float,
    max_k: int = 5,
) -> float:
    """TRACC of k='auto' without sub-tasks: the tools within ``margin`` of the best, at most ``max_k``."""
    keep = finite[:, :max_k] & (top[:, :max_k] >= top[:, :1] - margin)
    b = keep.sum(axis=1)
    hit = (np.take_along_axis(rel, order[:, :max_k], axis=1) & keep).sum(axis=1)
    a = n_rel
    union = a + b - hit
    return float(((hit / a) * (1 - np.abs(b - a) / np.maximum(union, 1))).mean())


def baseline_metrics(sig: DatasetSignals, method: str, *, name_level: bool = False) -> dict[str, float]:
    key = f"{method}@name" if name_level else method
    arr = sig.baselines[key]
    out = {
        "recall@5": float(arr[:, 0].mean()),
        "ndcg@10": float(arr[:, 1].mean()),
        "completeness@10": float(arr[:, 2].mean()),
    }
    if arr.shape[1] > 3:
        out["recall@1"] = float(arr[:, 3].mean())
    return out


# ----------------------------------------------------------------------------- choosing
def objective(m: dict[str, float]) -> float:
    """What a setting is chosen by on one set: the mean of R@5 and NDCG@10."""
    return 0.5 * (m["recall@5"] + m["ndcg@10"])


def guard_margin(sig: DatasetSignals, m: dict[str, float]) -> float:
    """The guard every default meets (docs/method.md, section 4b): the least of R@1 and R@5 over plain
    cosine's (same embedder) and R@5 over the better single signal's; negative = the guard is broken."""
    cos, bm25 = baseline_metrics(sig, "cosine"), baseline_metrics(sig, "bm25")
    margins = [m["recall@5"] - max(cos["recall@5"], bm25["recall@5"]), m["recall@5"] - cos["recall@5"]]
    if "recall@1" in cos:
        margins.append(m["recall@1"] - cos["recall@1"])
    return min(margins)


def evaluate_grid(sigs: Sequence[DatasetSignals], settings: Sequence[Setting]) -> tuple[np.ndarray, np.ndarray]:
    """Objective and guard margin (:func:`guard_margin`) of every setting on every set, each [G, S]."""
    out = np.zeros((len(settings), len(sigs)))
    guard = np.zeros((len(settings), len(sigs)))
    for gi, s in enumerate(settings):
        for si, sig in enumerate(sigs):
            m = score_setting(sig, s)
            out[gi, si] = objective(m)
            guard[gi, si] = guard_margin(sig, m)
    return out, guard


def choose(table: np.ndarray, floor: np.ndarray, train: Sequence[int], guard: np.ndarray | None = None) -> int:
    """The setting with the best mean over ``train`` among those that lose on none of them.

    "Lose" = below ``floor`` (the better single-signal baseline) on a training set, or, with
    ``guard`` ([G, S] margins, :func:`guard_margin`), a negative guard margin there; when every
    setting loses somewhere, the one whose worst margin is largest.
    """
    sub = table[:, train]
    margin = (sub - floor[train]).min(axis=1) if guard is None else guard[:, train].min(axis=1)
    ok = margin >= 0
    if ok.any():
        mean = np.where(ok, sub.mean(axis=1), -np.inf)
        return int(np.argmax(mean))
    return int(np.argmax(margin))


@dataclass
class FoldResult:
    left_out: str
    setting: Setting
    metrics: dict[str, float]
    default_metrics: dict[str, float]
    baselines: dict[str, dict[str, float]] = field(default_factory=dict)


def lodo(sigs: Sequence[DatasetSignals], settings: Sequence[Setting], default: Setting) -> list[FoldResult]:
    """For each set: choose on the others (:func:`choose`, under the cosine guard), score on it; plus
    the default's score."""
    table, guard = evaluate_grid(sigs, settings)
    floor = np.array(
        [max(objective(baseline_metrics(s, "bm25")), objective(baseline_metrics(s, "cosine"))) for s in sigs]
    )
    out = []
    for si, sig in enumerate(sigs):
        train = [j for j in range(len(sigs)) if j != si]
        best = settings[choose(table, floor, train, guard)]
        out.append(
            FoldResult(
                left_out=sig.name,
                setting=best,
                metrics=score_setting(sig, best),
                default_metrics=score_setting(sig, default),
                baselines={m: baseline_metrics(sig, m) for m in ("bm25", "cosine")},
            )
        )
    return out


# ----------------------------------------------------------------------------- the search space
def default_setting(preset: str = "fast") -> Setting:
    """The shipped defaults of ``preset`` as a :class:`Setting`."""
    from toolret.config import RetrievalConfig

    return setting_of(RetrievalConfig.preset(preset))


def setting_of(cfg: Any) -> Setting:
    """A :class:`~toolret.config.RetrievalConfig`'s fusion numbers as a :class:`Setting`."""
    w = cfg.field_weights.as_dict()
    return Setting(
        normalization="zscore",  # the engine's only normalisation
        lexical_weight=cfg.fusion.lexical_weight,
        evidence_slope=cfg.fusion.evidence_slope,
        strength_slope=cfg.fusion.strength_slope,
        strength_center=cfg.fusion.strength_center,
        field_weights=tuple(w[f] for f in INDEX_FIELDS),
        candidates_per_field=cfg.candidates_per_field,
        name_match_boost=cfg.fusion.name_match_boost,
        penalty_scale=cfg.penalty.scale,
        auto_margin=cfg.auto_k.margin,
        lexical_sd_floor=cfg.fusion.lexical_sd_floor,
        dense_sd_floor=cfg.fusion.dense_sd_floor,
        min_field_pool=cfg.fusion.min_field_pool,
        hubness_weight=cfg.fusion.hubness_weight,
        cosine_weight=cfg.fusion.cosine_weight,
        fusion_method=cfg.fusion.method,
    )


def grid(base: Setting, **axes: Iterable[Any]) -> list[Setting]:
    """Every combination of the values given per field of :class:`Setting`, from ``base``."""
    names = list(axes)
    return [replace(base, **dict(zip(names, combo))) for combo in itertools.product(*(list(axes[n]) for n in names))]
