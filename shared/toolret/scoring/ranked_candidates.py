"""A query's scored candidates, best first, made into :class:`CandidateScore` objects only when read.

:func:`toolret.scoring.mftr.score_candidates` scores every candidate of a query's pool (about
400 at 100k tools) with array operations; a search then reads only its head (the top ``depth``
for ``select``, the top 20 per list for fusion) and, for the dependency stage, the few producers
it looks up by tool. Building an object with rounded per-field scores and a feature tuple for
every candidate was about a sixth of a 100k-tool search beyond the query embedding, for objects
nobody read. :class:`RankedCandidates` holds the arrays and builds (and keeps) an object the first
time a position, a slice or a tool asks for it; the objects are the ones eager construction made.

Example:
    >>> import numpy as np
    >>> ranked = RankedCandidates(
    ...     candidates=np.array([4, 9]), order=[1, 0], scores=np.array([0.2, 0.7]),
    ...     per_field={"description": (np.array([0.2, 0.7]), np.array([True, True]))},
    ...     history=None, penalty=np.zeros(2), features=[np.zeros(2)], cosine=np.array([0.3, 0.6]))
    >>> [c.index for c in ranked], ranked[0].field_scores, ranked.by_tool()[4].score
    ([9, 4], {'description': 0.7}, 0.2)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

__all__ = ["CandidateScore", "RankedCandidates"]


@dataclass(frozen=True)
class CandidateScore:
    index: int
    score: float
    field_scores: dict[str, float]
    penalty: float
    features: tuple[float, ...] = ()
    #: The candidate's best raw cosine over its fields: an absolute, query-comparable confidence
    #: (the fused score is relative to the candidate pool), read by the balanced split gate.
    cosine: float = 0.0
    #: The part of ``score`` that is the embedder's anchor (:func:`toolret.scoring.mftr.cosine_anchor`).
    anchor: float = 0.0
    #: The part of ``score`` the request's strength term moved (:func:`toolret.scoring.mftr.strength_shift`).
    strength_shift: float = 0.0
    #: The part of ``score`` the ranking's BM25 floor moved (:func:`toolret.scoring.mftr.floor_shift`).
    floor_shift: float = 0.0


class RankedCandidates(Sequence[CandidateScore]):
    """Candidates in score order (``order``: rows of the candidate arrays, best first).

    ``per_field`` maps each scored field to (its per-candidate score, whether the candidate has
    the field); ``history`` is each candidate's tool-memory score (None without one);
    ``features`` the learned scorer's features (:data:`~toolret.scoring.mftr.FEATURE_NAMES`),
    a float64 array per feature with a value per candidate.
    """

    def __init__(
        self,
        *,
        candidates: np.ndarray,
        order: list[int],
        scores: np.ndarray,
        per_field: dict[str, tuple[np.ndarray, np.ndarray]],
        history: np.ndarray | None,
        penalty: np.ndarray,
        features: Sequence[np.ndarray],
        cosine: np.ndarray,
        anchor: np.ndarray | None = None,
        strength_shift: np.ndarray | None = None,
        floor_shift: np.ndarray | None = None,
    ) -> None:
        self._candidates = candidates
        self._order = order
        self._scores = scores
        self._per_field = per_field
        self._history = history
        self._penalty = penalty
        self._features = features
        self._cosine = cosine
        self._anchor = anchor
        self._strength_shift = strength_shift
        self._floor_shift = floor_shift
        self._made: list[CandidateScore | None] = [None] * len(order)
        self._position: dict[int, int] | None = None

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, position: int) -> CandidateScore: ...

    @overload
    def __getitem__(self, position: slice) -> list[CandidateScore]: ...

    def __getitem__(self, position: int | slice) -> CandidateScore | list[CandidateScore]:
        if isinstance(position, slice):
            return [self._at(p) for p in range(*position.indices(len(self._order)))]
        if position < 0:
            position += len(self._order)
        if not 0 <= position < len(self._order):
            raise IndexError("candidate position out of range")
        return self._at(position)

    def __iter__(self) -> Iterator[CandidateScore]:
        return (self._at(p) for p in range(len(self._order)))

    def __repr__(self) -> str:
        return f"RankedCandidates({len(self)} candidates)"

    def by_tool(self) -> Mapping[int, CandidateScore]:
        """The candidates by tool index (``in`` and ``[]``), built one by one as they are read."""
        if self._position is None:
            rows = self._candidates[self._order].tolist()
            self._position = dict(zip(rows, range(len(rows))))
        return _ByTool(self, self._position)

    def _at(self, position: int) -> CandidateScore:
        made = self._made[position]
        if made is None:
            made = self._made[position] = self._make(self._order[position])
        return made

    def _make(self, row: int) -> CandidateScore:
        shown = {f: round(float(s_f[row]), 6) for f, (s_f, present) in self._per_field.items() if present[row]}
        if self._history is not None and self._history[row]:
            shown["history"] = float(self._history[row])
        return CandidateScore(
            int(self._candidates[row]),
            float(self._scores[row]),
            shown,
            round(float(self._penalty[row]), 6),
            tuple(float(column[row]) for column in self._features),
            float(self._cosine[row]),
            0.0 if self._anchor is None else float(self._anchor[row]),
            0.0 if self._strength_shift is None else float(self._strength_shift[row]),
            0.0 if self._floor_shift is None else float(self._floor_shift[row]),
        )


class _ByTool(Mapping[int, CandidateScore]):
    def __init__(self, ranked: RankedCandidates, position: dict[int, int]) -> None:
        self._ranked = ranked
        self._position = position

    def __getitem__(self, tool: int) -> CandidateScore:
        return self._ranked[self._position[tool]]

    def __contains__(self, tool: object) -> bool:
        return tool in self._position

    def __iter__(self) -> Iterator[int]:
        return iter(self._position)

    def __len__(self) -> int:
        return len(self._position)
