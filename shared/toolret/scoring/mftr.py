"""Multi-field tool retrieval (MFTR) scoring on a candidate set.

S(q, t) = sum_f w_f * S_f(q, t) - P(q, t)                         (MFTR, eq. 1; its bias b is 0)
          + kappa * (cos_desc(q, t) - mean_pool cos_desc)            (the embedder's anchor)
          (+ name_match_boost when the query names the tool, + history_weight * h(t),
           h from :mod:`toolret.memory.past_use`)
S_f     = beta_q * lex_f + (1 - beta_q) * dense_f,
          logit(beta_q) = logit(beta) + slope * evidence(q) + strength_slope * (strength(q) - center)
P       = scale * sum_p sigmoid(alpha * (tau - s_p)) * (w_req | w_opt)

Normalisation (:func:`normalize_field`), so BM25 and cosine combine sensibly: each field's BM25
scores and cosines are z-scores over the query's own candidate pool, so a signal counts by how far
it lifts a tool above the pool, whatever its raw scale on this query and registry (the earlier
absolute formula, ``bound``, and ``minmax`` live on only in :mod:`toolret.eval.lodo`, for the
records). ``beta_q`` follows the query's lexical evidence (:func:`query_beta`,
:mod:`toolret.scoring.evidence`). Field weights are renormalised over the fields a tool actually has.
Every default was chosen leaving one dev set out (``toolret bench --lodo``, docs/method.md).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolret.config import LearnedWeights, RetrievalConfig
from toolret.documents.tool_doc import INDEX_FIELDS, ToolDoc
from toolret.scoring.arguments import ArgumentFit, SpottedArgument
from toolret.scoring.param_table import ParamTable
from toolret.scoring.penalty import candidate_penalties, parameter_penalty, sigmoid
from toolret.scoring.ranked_candidates import CandidateScore, RankedCandidates

__all__ = [
    "FEATURE_NAMES",
    "CandidateScore",
    "FieldSignals",
    "cosine_anchor",
    "evidence_score",
    "floor_shift",
    "lexical_strength",
    "lexical_zscores",
    "normalize_field",
    "parameter_penalty",
    "pool_statistics",
    "query_beta",
    "score_candidates",
    "strength_shift",
]


@dataclass(frozen=True)
class FieldSignals:
    """Raw per-field signals for the candidate set, aligned with ``candidates``.

    ``lexical[f]`` are BM25 scores, ``dense[f]`` cosines, ``present[f]`` whether each
    candidate has any text in field f.
    """

    candidates: np.ndarray
    lexical: dict[str, np.ndarray]
    lexical_bound: dict[str, float]
    dense: dict[str, np.ndarray]
    present: dict[str, np.ndarray]
    #: The query's lexical evidence (:func:`evidence_score`); 0 = neutral.
    evidence: float = 0.0
    #: Per field, each candidate's neighbourhood density in the registry (Snapshot.hubness).
    hubness: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    #: The learned fusion's request features: idf mass, share of unknown words, identifier-like
    #: words, analysed tokens (toolret.scoring.evidence), and the registry's size.
    request: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    n_tools: int = 0
    #: Each candidate's description density, for the learned fusion (read whatever hubness_weight is).
    hub_description: np.ndarray | None = None
    #: The strength of the best word match to weigh by (:func:`lexical_strength`); None: these candidates'.
    strength: float | None = None


#: The features a learned scorer weighs (toolret.memory.learn); "heuristic" is the MFTR score itself,
#: so a fitted model starts from, and can only move away from, the hand-set formula.
FEATURE_NAMES: tuple[str, ...] = (
    *(f"lex_{f}" for f in INDEX_FIELDS),
    *(f"dense_{f}" for f in INDEX_FIELDS),
    *(f"has_{f}" for f in INDEX_FIELDS),
    "penalty",
    "name_match",
    "history",
    "heuristic",
)


#: :func:`evidence_score`: the share of query words the registry knows, centred on a typical share
#: of unknown words, plus identifier-like words (chosen leaving one dev set out; docs/method.md).
EVIDENCE_OOV_CENTER = 0.3
EVIDENCE_IDENT = 0.25


def evidence_score(oov_share: Any, n_ident: Any) -> Any:
    """How much lexical evidence a query carries, about 0 for a typical query (scalars or arrays).

    Measured on the dev sets (per query, NDCG@10 with a lexical-heavy minus a dense-heavy
    balance): the share of query words no tool contains is the clearest sign that exact matching
    will fail (a paraphrase), identifier-like words a sign that it will work. IDF mass and argument
    values did not predict it (toolret.scoring.evidence keeps them for inspection).
    """
    oov = np.asarray(oov_share, dtype=np.float64)
    return 2.0 * (EVIDENCE_OOV_CENTER - oov) + EVIDENCE_IDENT * np.minimum(n_ident, 2)


def query_beta(
    beta: float, slope: float, evidence: float, strength_slope: float = 0.0, strength: float = 0.0, center: float = 0.0
) -> float:
    """The lexical share for one query:
    logit(beta_q) = logit(beta) + slope * evidence + strength_slope * (strength - center).

    ``strength`` is the best BM25 any candidate's description reaches, in units of log(N + 1)
    (:func:`lexical_strength`). Unlike the z-scored fields it keeps its scale, which is what reads
    the kind of request: a request in the registry's own words shares several rare words with its
    tool and scores high (seal_dev: median 1.67); a request in the user's own words shares a common
    word or two by accident and scores low (banking77: 0.59, hwu64: 0.41). Chosen leaving one dev
    registry out (docs/method.md §4a).
    """
    if (not slope and not strength_slope) or beta <= 0.0 or beta >= 1.0:
        return beta
    logit = math.log(beta / (1.0 - beta)) + slope * float(evidence) + strength_slope * (float(strength) - center)
    return sigmoid(logit)


def strength_shift(
    delta_beta: float,
    weights: dict[str, float],
    lex_cols: Sequence[np.ndarray],
    dense_cols: Sequence[np.ndarray],
    weight_sum: np.ndarray,
) -> np.ndarray:
    """Per candidate, what the strength term added to the score: the fused evidence at the request's
    lexical share minus at the share without it (exact, the mix being linear in beta).

    ``k="auto"`` cuts on the evidence without it (:mod:`toolret.search.auto_k`): the strength
    decides whether words or meaning order the tools, not how many stand out. A request that leans
    on words has lexical z-scores of up to 12.5 sd, and the cut's ratio, chosen on the balance
    without the term, would keep fewer tools (nestful_nonexec TRACC .544 → .453 on cached signals;
    .549 cutting without it).
    """
    return _weighted_difference(delta_beta, weights, lex_cols, dense_cols, weight_sum)


def _weighted_difference(
    share: float,
    weights: dict[str, float],
    first: Sequence[np.ndarray],
    second: Sequence[np.ndarray],
    weight_sum: np.ndarray,
) -> np.ndarray:
    """share x the field-weighted mean of (first - second), per candidate: how much a change of one
    signal's z-scores (or of the share between two) moves the fused score, the mix being linear."""
    total = np.zeros_like(weight_sum)
    for field, a, b in zip(INDEX_FIELDS, first, second):
        total += weights[field] * (a - b)
    return share * total / weight_sum


def floor_shift(
    beta: float,
    weights: dict[str, float],
    lex_cols: Sequence[np.ndarray],
    evidence_lex_cols: Sequence[np.ndarray],
    weight_sum: np.ndarray,
) -> np.ndarray:
    """Per candidate, what the ranking's lower BM25 deviation floor added to the score: the fused evidence
    with the ranking's lexical z-scores minus with the evidence's (``fusion.evidence_sd_floor``), at the
    lexical share without the strength term (exact: the mix is linear in the z-scores).

    The two floors do two jobs. Ordering the tools, a low floor lets a request in the registry's own
    words, whose many shared words spread the pool's BM25 thinly against its achievable BM25, count
    them (seal_dev R@5 .815 -> .849 with .02 instead of .08). Counting the tools that stand out
    (``k="auto"``), the unit floor keeps one word among zeros from being ten deviations: cut on the
    low floor's scores, toole_multi's TRACC fell .465 -> .444.
    """
    return _weighted_difference(beta, weights, lex_cols, evidence_lex_cols, weight_sum)


def lexical_strength(signals: FieldSignals) -> float:
    """The request's best description BM25 over its candidates, in units of log(N + 1) for a registry
    of N tools (0 without a description field).

    The pool holds BM25's own best tools, so this is the registry's best match in the field. A word
    that one tool of N has weighs about log N in BM25, so the unit makes the strength about "how
    many words of full rarity the best tool shares with the request", the same on 77 tools and on
    18,000: unscaled, every request in one knowledge base of all the dev registries read as a
    strong match and leaned on words (the union's R@5 .550 → .536).
    """
    lexical = signals.lexical.get("description")
    present = signals.present.get("description")
    if lexical is None or present is None or not present.any():
        return 0.0
    n = signals.n_tools or len(signals.candidates)
    return float(np.max(np.where(present, lexical, 0.0))) / math.log(n + 1.0)


def pool_statistics(
    signals: FieldSignals, fields: Sequence[str], config: RetrievalConfig, lexical_sd_floor: float | None = None
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(mean, sd) of BM25 and of cosine over every (candidate, field) pair of the query's pool.

    Used by ``zscore`` for a field that fewer than ``min_field_pool`` candidates have: alone, a
    tool with LLM-written questions would be the whole pool of that field and score 0 on it.
    ``lexical_sd_floor``: the BM25 floor's share (default: the ranking's, ``fusion.lexical_sd_floor``).
    """
    share = config.fusion.lexical_sd_floor if lexical_sd_floor is None else lexical_sd_floor
    lex = [signals.lexical[f][signals.present[f]] for f in fields]
    cos = [signals.dense[f][signals.present[f]] for f in fields]
    lex_all = np.concatenate(lex).astype(np.float64) if lex else np.zeros(0)
    cos_all = np.concatenate(cos).astype(np.float64) if cos else np.zeros(0)
    lex_floor = share * max((signals.lexical_bound.get(f, 0.0) for f in fields), default=0.0)
    if not len(lex_all):
        return (0.0, lex_floor), (0.0, config.fusion.dense_sd_floor)
    return (
        (float(lex_all.mean()), max(float(lex_all.std()), lex_floor)),
        (float(cos_all.mean()), max(float(cos_all.std()), config.fusion.dense_sd_floor)),
    )


def normalize_field(
    lexical: np.ndarray,
    dense: np.ndarray,
    present: np.ndarray,
    bound: float,
    config: RetrievalConfig,
    shared: tuple[tuple[float, float], tuple[float, float]] | None = None,
    lexical_sd_floor: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One field's BM25 and cosine of the candidates, made comparable: z-scores over the candidates
    that have the field.

    A signal's spread is taken as at least ``dense_sd_floor`` / ``lexical_sd_floor`` x bound, so in
    a tiny or flat pool a difference below that floor is not stretched into a whole standard
    deviation; a field that fewer than ``min_field_pool`` candidates have is standardised with the
    statistics of all the query's fields (``shared``, :func:`pool_statistics`). ``lexical_sd_floor``
    overrides the BM25 floor's share (the field evidence's, ``fusion.evidence_sd_floor``).
    """
    few = _few(present, config, shared)
    lex = lexical_zscores(lexical, present, bound, config, shared, lexical_sd_floor)
    cos = _standardise(dense, present, config.fusion.dense_sd_floor, shared[1] if few else None)  # type: ignore[index]
    return lex, cos


def lexical_zscores(
    lexical: np.ndarray,
    present: np.ndarray,
    bound: float,
    config: RetrievalConfig,
    shared: tuple[tuple[float, float], tuple[float, float]] | None = None,
    lexical_sd_floor: float | None = None,
) -> np.ndarray:
    """The BM25 half of :func:`normalize_field`: what the field evidence needs at its own floor."""
    share = config.fusion.lexical_sd_floor if lexical_sd_floor is None else lexical_sd_floor
    few = _few(present, config, shared)
    return _standardise(lexical, present, share * bound, shared[0] if few else None)  # type: ignore[index]


def _few(
    present: np.ndarray, config: RetrievalConfig, shared: tuple[tuple[float, float], tuple[float, float]] | None
) -> bool:
    """Whether too few candidates have the field to standardise it over itself (``min_field_pool``)."""
    return shared is not None and int(present.sum()) < config.fusion.min_field_pool


def _standardise(x: np.ndarray, present: np.ndarray, floor: float, stats: tuple[float, float] | None) -> np.ndarray:
    """z-scores of ``x`` over the candidates ``present``, the deviation at least ``floor``, or with the
    pool-wide (mean, sd) ``stats``; 0 for absent candidates and for a pool with no spread at all."""
    x = x.astype(np.float64)
    if not present.any():
        return np.zeros(len(x))
    mean, sd = stats if stats is not None else (float(x[present].mean()), max(float(x[present].std()), floor))
    return np.where(present, (x - mean) / sd, 0.0) if sd > 0 else np.zeros(len(x))


def cosine_anchor(signals: FieldSignals, raw_dense: dict[str, np.ndarray], best: np.ndarray) -> np.ndarray:
    """The embedder's own opinion of each candidate: its raw description cosine (``best``, its best
    field's cosine floored at 0, where it has no description), minus the mean over the pool.

    Unlike the z-scores, a cosine means the same on 30 tools and on 30,000 (for one embedder), so
    ``cosine_weight`` x this term lets the field evidence reorder tools whose cosines are close and
    keeps it from overturning a wide gap: one matching word in a sparse field, or one shared word in
    a small source, no longer outvotes a clear description match.
    """
    own = best
    if "description" in signals.present:
        own = np.where(signals.present["description"], raw_dense["description"], best)
    own = own.astype(np.float64)
    return own - float(own.mean()) if len(own) else own


def _learned(
    signals: FieldSignals, raw_dense: dict[str, np.ndarray], named: np.ndarray, penalty: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(learned fusion score, its anchor term) of the candidates: :mod:`toolret.scoring.learned_fusion`
    on this one request, the same code that scores cached dev-set signals."""
    from toolret.scoring.learned_fusion import ANCHOR, fusion_features, shipped_fusion

    n = len(signals.candidates)
    if n == 0:
        return np.zeros(0), np.zeros(0)
    shape = (1, n, len(INDEX_FIELDS))
    lex, dense, present = np.zeros(shape), np.zeros(shape), np.zeros(shape, dtype=bool)
    bound = np.zeros((1, len(INDEX_FIELDS)))
    for i, field in enumerate(INDEX_FIELDS):
        if field in signals.present:
            lex[0, :, i] = signals.lexical[field]
            dense[0, :, i] = raw_dense[field]
            present[0, :, i] = signals.present[field]
            bound[0, i] = signals.lexical_bound.get(field, 0.0)
    hub = signals.hub_description if signals.hub_description is not None else np.zeros(n)
    x, request = fusion_features(
        lex,
        dense,
        present,
        bound,
        np.ones((1, n), dtype=bool),
        named[None, :],
        penalty[None, :],
        hub[None, :],
        np.array([signals.request], dtype=np.float64),
        signals.n_tools,
    )
    model = shipped_fusion()
    coef = model.coefficients(request)
    return (x * coef[:, None, :]).sum(axis=2)[0], (coef[:, ANCHOR] * x[:, :, ANCHOR])[0]


def score_candidates(
    signals: FieldSignals,
    docs: Sequence[ToolDoc],
    config: RetrievalConfig,
    *,
    args: list[SpottedArgument],
    query_words: set[str],
    name_matches: set[int],
    exact_matches: frozenset[int] | set[int] = frozenset(),
    history: dict[int, float] | None = None,
    params: ParamTable | None = None,
    learned: LearnedWeights | None = None,
) -> RankedCandidates:
    """MFTR scores of every candidate, best first (ties broken by knowledge-base order), as a
    :class:`~toolret.scoring.ranked_candidates.RankedCandidates` (each object is made when first read).

    ``params`` is the snapshot's table of ``docs``' parameters (:attr:`Snapshot.params
    <toolret.index.snapshot.Snapshot.params>`); without it one is built for the candidates.
    """
    raw_dense = signals.dense
    if config.fusion.hubness_weight and signals.hubness:  # cosine - weight x density (toolret.index.hubness)
        adjusted = {f: c - config.fusion.hubness_weight * signals.hubness.get(f, 0.0) for f, c in raw_dense.items()}
        signals = dataclasses.replace(signals, dense=adjusted)
    weights = config.field_weights.as_dict()
    fusion = config.fusion
    strength = 0.0
    if fusion.strength_slope:
        strength = signals.strength if signals.strength is not None else lexical_strength(signals)
    beta = query_beta(
        fusion.lexical_weight,
        fusion.evidence_slope,
        signals.evidence,
        fusion.strength_slope,
        strength,
        fusion.strength_center,
    )
    base_beta = query_beta(fusion.lexical_weight, fusion.evidence_slope, signals.evidence)
    n = len(signals.candidates)
    combined = np.zeros(n, dtype=np.float64)
    weight_sum = np.zeros(n, dtype=np.float64)
    per_field: dict[str, np.ndarray] = {}
    zeros = np.zeros(n, dtype=np.float64)
    active = [f for f in INDEX_FIELDS if f in signals.present]
    shared = pool_statistics(signals, active, config)
    evidence_floor = fusion.evidence_sd_floor
    split_floor = evidence_floor != fusion.lexical_sd_floor
    shared_e = pool_statistics(signals, active, config, evidence_floor) if split_floor else shared
    lex_cols: list[np.ndarray] = []
    evidence_lex_cols: list[np.ndarray] = []
    dense_cols: list[np.ndarray] = []
    present_cols: list[np.ndarray] = []
    for field in INDEX_FIELDS:
        if field not in signals.present:  # switched off (RetrievalConfig.fields): no signal, no weight
            lex_cols.append(zeros)
            evidence_lex_cols.append(zeros)
            dense_cols.append(zeros)
            present_cols.append(zeros)
            continue
        w = weights[field]
        present = signals.present[field]
        lex_norm, dense = normalize_field(
            signals.lexical[field], signals.dense[field], present, signals.lexical_bound.get(field, 0.0), config, shared
        )
        s_f = np.where(present, beta * lex_norm + (1.0 - beta) * dense, 0.0)
        lex_cols.append(np.where(present, lex_norm, 0.0))
        if split_floor:
            bound = signals.lexical_bound.get(field, 0.0)
            lex_e = lexical_zscores(signals.lexical[field], present, bound, config, shared_e, evidence_floor)
            evidence_lex_cols.append(np.where(present, lex_e, 0.0))
        dense_cols.append(np.where(present, dense, 0.0))
        present_cols.append(present.astype(np.float64))
        per_field[field] = s_f
        combined += w * s_f
        weight_sum += np.where(present, w, 0.0)
    weight_sum[weight_sum == 0] = 1.0
    raw_cos = np.zeros(n, dtype=np.float64)
    for name in per_field:
        raw_cos = np.maximum(raw_cos, np.where(signals.present[name], raw_dense[name], 0.0))
    base = combined / weight_sum
    anchor = (
        config.fusion.cosine_weight * cosine_anchor(signals, raw_dense, raw_cos)
        if config.fusion.cosine_weight
        else None
    )
    if anchor is not None:
        base = base + anchor
    shift = strength_shift(beta - base_beta, weights, lex_cols, dense_cols, weight_sum) if beta != base_beta else None
    moved = floor_shift(base_beta, weights, lex_cols, evidence_lex_cols, weight_sum) if split_floor else None

    cand = signals.candidates.tolist()
    fit = ArgumentFit(args, query_words)
    if params is None:
        penalty = candidate_penalties(ParamTable.build([docs[i] for i in cand]), np.arange(n), fit, config)
    else:
        penalty = candidate_penalties(params, signals.candidates, fit, config)
    named = np.array([i in name_matches for i in cand], dtype=bool).reshape(n)
    h = np.array([history.get(i, 0.0) for i in cand] if history else np.zeros(n), dtype=np.float64).reshape(n)
    # The same float64 operations, in the same order, as one candidate at a time.
    heuristic = base + np.where(named, config.fusion.name_match_boost, 0.0) + config.memory.history_weight * h - penalty
    if config.fusion.method == "learned":  # the request's own balance of words and meaning (learned_fusion)
        fused, anchor = _learned(signals, raw_dense, named, penalty / (config.penalty.scale or 1.0))
        heuristic = fused + config.memory.history_weight * h
    if exact_matches:
        exact = np.array([i in exact_matches for i in cand], dtype=bool).reshape(n)
        # plus the widest gap the anchor can open between two tools (cosines lie in [-1, 1]): asking for a
        # tool by name puts it first whatever the embedder thinks of the name as a sentence
        heuristic = np.where(
            exact, heuristic + config.fusion.exact_name_boost + 2.0 * config.fusion.cosine_weight, heuristic
        )
    pen_scale = config.penalty.scale if config.penalty.scale > 0 else 1.0
    columns = [*lex_cols, *dense_cols, *present_cols, penalty / pen_scale, named.astype(np.float64), h, heuristic]
    scores = heuristic
    if learned is not None:  # the knowledge base's fitted scorer (kb.fit) in place of the hand-set formula
        coef = np.asarray(learned.coef, dtype=np.float64)
        matrix = np.column_stack(columns) if n else np.zeros((0, len(columns)))
        scores = np.array([float(np.dot(coef, row)) for row in matrix])
    # Best first, ties by knowledge-base order. The CandidateScore objects are made when read
    # (toolret.scoring.ranked_candidates): a search at 100k tools scores ~400 candidates and reads a handful.
    order = np.lexsort((signals.candidates, -scores)).tolist()
    return RankedCandidates(
        candidates=signals.candidates,
        order=order,
        scores=scores,
        per_field={f: (s_f, signals.present[f]) for f, s_f in per_field.items()},
        history=h if history else None,
        penalty=penalty,
        features=columns,
        cosine=raw_cos,
        anchor=anchor if learned is None else None,
        strength_shift=shift if learned is None and config.fusion.method != "learned" else None,
        floor_shift=moved if learned is None and config.fusion.method != "learned" else None,
    )
