"""The learned fusion: how much words and meaning count, read from the request and its candidates.

No fixed balance of BM25 and cosine serves both kinds of request (issue 43, docs/method.md §4c).
When a request restates a tool's purpose in the registry's own words, rare shared words are the
best evidence; when a person asks in their own words, shared words are often accidents
("tickets" matching Jira tickets). This scorer weighs ten per-candidate signals with weights that
move with eleven per-request features, so the balance is read per request, against its registry:

    S(q, t) = sum_k c_k(q) * x_k(q, t),      c_k(q) = w_k + sum_j u_kj * r_j(q)   (k in INTERACTING)

``x`` (:data:`CANDIDATE_FEATURES`): the description's cosine and BM25 as z-scores over the pool, the
other fields' (their field weights' mix), the embedder's raw cosine minus the pool mean, the
name match, the parameter-missing penalty, the tool's neighbourhood density, and the rank gains
1/log2(rank + 2) of the description's BM25 and cosine orders. ``r`` (:data:`REQUEST_FEATURES`),
standardised with the training sets' mean and deviation: the share of request words no tool
contains, how far BM25's best stands above its second and above the pool, how much of the
request it matches, the same for cosine, whether the two agree on the best tool, identifier-like
words, request length, registry size and the mean rarity of the request's words.

The coefficients are fitted (:mod:`toolret.training.fusion_fit`, ``toolret train-fusion``) on the
train+eval dev registries' signals with a listwise loss and checked leaving one registry out; they
ship as ``toolret/models/fusion.json`` with their fold table (docs/models.md). The same code scores
the engine's single request (:func:`toolret.scoring.mftr.score_candidates`) and the cached signals of
a whole dev set (:mod:`toolret.eval.lodo`), so the two cannot drift apart.

Example:
    >>> import numpy as np
    >>> model = shipped_fusion()
    >>> lex = np.array([[[3.0, 0, 0, 0, 0, 0, 0], [0.0, 0, 0, 0, 0, 0, 0]]])
    >>> dense = np.array([[[0.7, 0, 0, 0, 0, 0, 0], [0.2, 0, 0, 0, 0, 0, 0]]])
    >>> present = np.zeros((1, 2, 7), dtype=bool); present[:, :, 0] = True
    >>> x, r = fusion_features(lex, dense, present, np.array([[4.0] * 7]), np.ones((1, 2), bool),
    ...     np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)), np.array([[0.5, 0.0, 0.0, 3.0]]), 2)
    >>> scores = model.scores(x, r)
    >>> bool(scores[0, 0] > scores[0, 1])
    True
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from toolret.errors import ConfigError

__all__ = [
    "ANCHOR",
    "CANDIDATE_FEATURES",
    "FUSION_FILE",
    "INTERACTING",
    "REQUEST_FEATURES",
    "FusionModel",
    "fusion_features",
    "pool_zscore",
    "shipped_fusion",
]

#: Per (request, candidate) signals the learned fusion weighs.
CANDIDATE_FEATURES: tuple[str, ...] = (
    "dense_z_description",
    "lexical_z_description",
    "dense_z_other_fields",
    "lexical_z_other_fields",
    "cosine_anchor",
    "name_match",
    "minus_penalty",
    "hubness_description",
    "lexical_rank_gain",
    "dense_rank_gain",
)
#: Per-request features that move the weights of :data:`INTERACTING` candidate signals.
REQUEST_FEATURES: tuple[str, ...] = (
    "oov_share",
    "lexical_margin",
    "lexical_coverage",
    "cosine_margin",
    "agreement",
    "identifiers",
    "log_tokens",
    "lexical_peak_z",
    "cosine_peak_z",
    "log_registry_size",
    "idf_mass",
)
#: The candidate signals whose weight depends on the request (indices into CANDIDATE_FEATURES).
INTERACTING: tuple[int, ...] = (0, 1, 2, 3, 8, 9)
#: The embedder's raw-cosine term (in cosine units, not z-units): k="auto" leaves it out when it
#: measures how far a tool stands out (toolret.search.auto_k).
ANCHOR = CANDIDATE_FEATURES.index("cosine_anchor")
#: z-score floors, as in the heuristic fusion (RetrievalConfig): BM25's deviation is at least this
#: share of the request's achievable BM25, cosine's at least this many cosine units.
LEXICAL_SD_FLOOR = 0.02
DENSE_SD_FLOOR = 0.05
#: Where the shipped coefficients live, beside the shipped embedder.
FUSION_FILE = Path(__file__).resolve().parent.parent / "models" / "fusion.json"


def pool_zscore(x: np.ndarray, mask: np.ndarray, floor: np.ndarray | float) -> np.ndarray:
    """[Q, C, F] standardised over the masked candidates of each request and field (population sd, floored);
    0 outside the mask. Also the cached-signal re-scorer's (toolret.eval.lodo)."""
    n = np.maximum(mask.sum(axis=1, keepdims=True), 1)
    mean = np.where(mask, x, 0.0).sum(axis=1, keepdims=True) / n
    sd = np.sqrt(np.where(mask, (x - mean) ** 2, 0.0).sum(axis=1, keepdims=True) / n)
    sd = np.maximum(sd, floor)
    return np.where(mask & (sd > 0), (x - mean) / np.where(sd > 0, sd, 1.0), 0.0)


def _rank_gain(score: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """1 / log2(rank + 2) of each pool candidate, rank = how many pool candidates score strictly higher.

    Tied candidates share a rank: two tools with the same description get the same gain, so a
    gain never depends on the order the candidates happen to be listed in.
    """
    keyed = np.where(pool, score, -np.inf)
    ordered = -np.sort(-keyed, axis=1)  # descending, per request
    rank = np.stack([np.searchsorted(-row, -k, side="left") for row, k in zip(ordered, keyed)]) if len(keyed) else keyed
    return np.where(pool, 1.0 / np.log2(np.asarray(rank, dtype=np.float64) + 2.0), 0.0)


def _top_two(x: np.ndarray, pool: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(best, second best, best's index) of ``x`` over each request's pool; second = best below two
    candidates, both 0 for an empty pool."""
    keyed = np.where(pool, x, -np.inf)
    order = np.argsort(-keyed, axis=1, kind="stable")
    best = np.take_along_axis(keyed, order[:, :1], axis=1)[:, 0]
    second = np.take_along_axis(keyed, order[:, 1:2], axis=1)[:, 0] if x.shape[1] > 1 else best
    best = np.where(np.isfinite(best), best, 0.0)
    return best, np.where(np.isfinite(second), second, best), order[:, 0]


def fusion_features(
    lexical: np.ndarray,
    dense: np.ndarray,
    present: np.ndarray,
    bound: np.ndarray,
    pool: np.ndarray,
    named: np.ndarray,
    penalty: np.ndarray,
    hubness: np.ndarray,
    query: np.ndarray,
    n_tools: int,
    other_weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(candidate signals [Q, C, 10], request features [Q, 11]) of ``Q`` requests over ``C`` candidates.

    ``lexical``, ``dense``, ``present``: [Q, C, F] BM25, cosine and whether the tool has the field, in
    ``INDEX_FIELDS`` order (description first); ``bound``: [Q, F] each field's achievable BM25;
    ``pool``: [Q, C] which candidates the request scores (padding is False); ``named``, ``penalty``
    (at scale 1), ``hubness`` (the description's): [Q, C]; ``query``: [Q, 4] idf mass, share of
    unknown words, identifier-like words, analysed tokens (:func:`toolret.scoring.evidence.query_evidence`);
    ``other_weights``: [F] field weights mixing the non-description fields (default: FieldWeights').
    """
    from toolret.config import FieldWeights

    lexical = lexical.astype(np.float64)
    dense = dense.astype(np.float64)
    pres = present & pool[:, :, None]
    lz = pool_zscore(lexical, pres, LEXICAL_SD_FLOOR * bound[:, None, :].astype(np.float64))
    dz = pool_zscore(dense, pres, DENSE_SD_FLOOR)
    if other_weights is None:
        other_weights = np.array(list(FieldWeights().as_dict().values()), dtype=np.float64)
    w_other = np.where(pres, other_weights[None, None, : lexical.shape[2]], 0.0)
    w_other[:, :, 0] = 0.0
    total = w_other.sum(axis=2)
    den = np.where(total > 0, total, 1.0)
    lex_other = (lz * w_other).sum(axis=2) / den
    dense_other = (dz * w_other).sum(axis=2) / den
    has_desc = pres[:, :, 0]
    cos = np.where(has_desc, dense[:, :, 0], 0.0)
    n_pool = np.maximum(pool.sum(axis=1, keepdims=True), 1)
    anchor = np.where(pool, cos - np.where(pool, cos, 0.0).sum(axis=1, keepdims=True) / n_pool, 0.0)
    lex_desc = np.where(has_desc, lexical[:, :, 0], 0.0)
    lex_gain = np.where(lex_desc > 0, _rank_gain(lz[:, :, 0], pool), 0.0)
    dense_gain = _rank_gain(dz[:, :, 0], pool)
    x = np.stack(
        [
            dz[:, :, 0],
            lz[:, :, 0],
            dense_other,
            lex_other,
            anchor,
            named.astype(np.float64),
            -penalty.astype(np.float64),
            np.where(has_desc, hubness, 0.0),
            lex_gain,
            dense_gain,
        ],
        axis=2,
    )
    x = np.where(pool[:, :, None], x, 0.0)
    top_bound = np.maximum(bound[:, 0].astype(np.float64), 1e-9)
    l1, l2, l_best = _top_two(lex_desc, pool)
    c1, c2, c_best = _top_two(cos, pool)
    rows = np.arange(len(pool))
    lex_mean = np.where(pool, lex_desc, 0.0).sum(axis=1) / n_pool[:, 0]
    lex_sd = np.sqrt(np.where(pool, (lex_desc - lex_mean[:, None]) ** 2, 0.0).sum(axis=1) / n_pool[:, 0])
    cos_mean = np.where(pool, cos, 0.0).sum(axis=1) / n_pool[:, 0]
    cos_sd = np.sqrt(np.where(pool, (cos - cos_mean[:, None]) ** 2, 0.0).sum(axis=1) / n_pool[:, 0])
    query = query.astype(np.float64)
    r = np.stack(
        [
            query[:, 1],
            (l1 - l2) / top_bound,
            l1 / top_bound,
            c1 - c2,
            cos[rows, l_best] - cos[rows, c_best],
            np.minimum(query[:, 2], 2.0),
            np.log1p(query[:, 3]),
            np.minimum((l1 - lex_mean) / np.maximum(lex_sd, 1e-9), 20.0),
            np.minimum((c1 - cos_mean) / np.maximum(cos_sd, 1e-9), 20.0),
            np.full(len(pool), math.log(max(n_tools, 1))),
            query[:, 0],
        ],
        axis=1,
    )
    return x, r


class FusionModel(BaseModel):
    """Fitted coefficients of the learned fusion (see the module docstring for the formula)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidate_features: tuple[str, ...] = CANDIDATE_FEATURES
    request_features: tuple[str, ...] = REQUEST_FEATURES
    interacting: tuple[int, ...] = INTERACTING
    weights: tuple[float, ...] = Field(description="w: one per candidate feature.")
    interactions: tuple[tuple[float, ...], ...] = Field(description="u: one row per interacting feature.")
    request_mean: tuple[float, ...]
    request_sd: tuple[float, ...]
    scale: float = Field(
        default=1.0,
        gt=0,
        description="Scores are divided by this: the fitted scores' spread over a pool in units of the hand-set "
        "fusion's (median over the training requests), so what is added to a score (the tool-use memory, the "
        "exact-name boost) and k='auto''s margin mean what they mean with fusion='heuristic'. The order is unchanged.",
    )
    card: dict[str, object] = Field(default_factory=dict, description="How it was fitted (docs/models.md).")

    def check(self, origin: str) -> FusionModel:
        """Raise ConfigError naming ``origin`` when the shapes do not match this version's features."""
        want = (CANDIDATE_FEATURES, REQUEST_FEATURES, INTERACTING)
        if (self.candidate_features, self.request_features, self.interacting) != want:
            raise ConfigError(
                f"{origin}: fusion features differ from this toolret's ({len(CANDIDATE_FEATURES)} / "
                f"{len(REQUEST_FEATURES)}); refit it with `toolret train-fusion`"
            )
        shapes = (len(self.weights), len(self.interactions), len(self.request_mean), len(self.request_sd))
        if shapes != (len(CANDIDATE_FEATURES), len(INTERACTING), len(REQUEST_FEATURES), len(REQUEST_FEATURES)) or any(
            len(row) != len(REQUEST_FEATURES) for row in self.interactions
        ):
            raise ConfigError(f"{origin}: fusion coefficients have the wrong shape {shapes}")
        return self

    def coefficients(self, request: np.ndarray) -> np.ndarray:
        """[Q, 10] the weight of each candidate signal for each request."""
        rz = (request - np.asarray(self.request_mean)) / np.asarray(self.request_sd)
        coef = np.repeat(np.asarray(self.weights, dtype=np.float64)[None, :], len(request), axis=0)
        coef[:, list(self.interacting)] += rz @ np.asarray(self.interactions, dtype=np.float64).T
        return coef / self.scale

    def scores(self, x: np.ndarray, request: np.ndarray) -> np.ndarray:
        """[Q, C] fused scores of :func:`fusion_features`' output."""
        return (x * self.coefficients(request)[:, None, :]).sum(axis=2)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.model_dump(mode="json"), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> FusionModel:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path}: cannot read the fusion coefficients ({exc})") from exc
        return cls.model_validate(data).check(str(path))


@lru_cache(maxsize=1)
def shipped_fusion() -> FusionModel:
    """The fusion coefficients that ship with toolret (``toolret/models/fusion.json``)."""
    return FusionModel.load(FUSION_FILE)
