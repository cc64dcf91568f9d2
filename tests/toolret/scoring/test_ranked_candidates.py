import numpy as np
import pytest

from toolret.scoring.ranked_candidates import CandidateScore, RankedCandidates


def _ranked() -> RankedCandidates:
    # Rows 0..3 are tools 10, 11, 12, 13; best first: rows 2, 0, 3, 1.
    scores = np.array([0.5, -0.25, 0.9, 0.1])
    present = np.array([True, False, True, True])
    return RankedCandidates(
        candidates=np.array([10, 11, 12, 13]),
        order=[2, 0, 3, 1],
        scores=scores,
        per_field={"description": (scores * 2, np.ones(4, dtype=bool)), "examples": (scores / 3, present)},
        history=np.array([0.0, 0.0, 0.4, 0.0]),
        penalty=np.array([0.0, 1.23456789, 0.0, 0.5]),
        features=[scores, np.array([1.0, 0.0, 1.0, 1.0])],
        cosine=np.array([0.3, 0.1, 0.8, 0.2]),
    )


def test_candidates_are_read_in_score_order_with_their_own_values():
    ranked = _ranked()
    assert len(ranked) == 4
    assert [c.index for c in ranked] == [12, 10, 13, 11]
    assert ranked[0] == CandidateScore(
        12, 0.9, {"description": 1.8, "examples": 0.3, "history": 0.4}, 0.0, (0.9, 1.0), 0.8
    )
    assert ranked[-1] == CandidateScore(11, -0.25, {"description": -0.5}, 1.234568, (-0.25, 0.0), 0.1)


def test_positions_slices_and_tools_give_the_same_objects():
    ranked = _ranked()
    head = ranked[:2]
    assert isinstance(head, list) and [c.index for c in head] == [12, 10]
    assert head[1] is ranked[1] is ranked.by_tool()[10]
    assert ranked[1:][-1] is ranked[3] is ranked[-1]
    by_tool = ranked.by_tool()
    assert 13 in by_tool and 99 not in by_tool and len(by_tool) == 4
    assert sorted(by_tool) == [10, 11, 12, 13]
    with pytest.raises(IndexError):
        ranked[4]
    with pytest.raises(KeyError):
        by_tool[99]
