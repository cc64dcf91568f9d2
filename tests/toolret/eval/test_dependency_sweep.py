"""The dependency stage's leave-one-dataset-out choice (toolret.eval.dependency_sweep)."""

from __future__ import annotations

from toolret.eval.dependency_sweep import grid, label, lodo_choice


def _row(r5: float, ndcg: float, tracc: float) -> dict[str, float]:
    return {"r@5": r5, "ndcg@10": ndcg, "c@10": 0.0, "tracc": tracc, "set_recall": 0.0, "set_size": 0.0}


def test_the_grid_starts_with_the_stage_off_and_labels_are_unique():
    settings = grid()
    assert not settings[0].enabled and label(settings[0]) == "off"
    assert len({label(s) for s in settings}) == len(settings)


def test_a_setting_that_loses_on_a_training_set_is_never_chosen():
    results = {
        "rest": {"n": 1, "off": _row(0.5, 0.5, 0.3), "a": _row(0.7, 0.6, 0.4), "b": _row(0.6, 0.55, 0.35)},
        "calls": {"n": 1, "off": _row(0.7, 0.6, 0.3), "a": _row(0.69, 0.6, 0.3), "b": _row(0.7, 0.6, 0.3)},
        "plain": {"n": 1, "off": _row(0.7, 0.6, 0.5), "a": _row(0.7, 0.6, 0.5), "b": _row(0.7, 0.6, 0.5)},
    }
    choice = lodo_choice(results)
    # "a" gains most on rest but loses on calls: over all sets "b" wins.
    assert choice["all"] == "b"
    # Without rest nothing gains on the training sets: a tie with "off" goes to "off".
    assert choice["folds"]["rest"]["setting"] == "off"
    # Left out, calls is scored with what the other sets chose ("a"): the loss shows in the fold.
    assert choice["folds"]["calls"]["setting"] == "a" and choice["folds"]["calls"]["r@5"] == 0.69
    assert choice["folds"]["plain"]["setting"] == "b"
