"""Fitting the learned fusion: it learns an interaction from a few hundred requests, and the command writes a
coefficient file the engine can load (CI never fits on the dev sets for real)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from toolret.eval.fusion_signals import FusionArrays
from toolret.scoring.learned_fusion import CANDIDATE_FEATURES, REQUEST_FEATURES, FusionModel
from toolret.training.fusion_fit import FitConfig, fit_fusion

pytest.importorskip("torch")

LEX = CANDIDATE_FEATURES.index("lexical_z_description")
DENSE = CANDIDATE_FEATURES.index("dense_z_description")
OOV = REQUEST_FEATURES.index("oov_share")


def _synthetic(n: int, seed: int) -> FusionArrays:
    """Requests where the right tool leads on words when few request words are unknown, on meaning otherwise."""
    rng = np.random.default_rng(seed)
    c = 20
    x = rng.normal(size=(n, c, len(CANDIDATE_FEATURES))) * 0.3
    request = rng.normal(size=(n, len(REQUEST_FEATURES)))
    request[:, OOV] = rng.random(n)
    words = request[:, OOV] < 0.5
    right = rng.integers(0, c, size=n)
    decoy = (right + 1) % c
    rows = np.arange(n)
    x[rows, right, np.where(words, LEX, DENSE)] += 2.0
    x[rows, decoy, np.where(words, DENSE, LEX)] += 2.0  # the other signal points at a decoy
    relevant = np.zeros((n, c), dtype=bool)
    relevant[rows, right] = True
    return FusionArrays("synthetic", x, request, np.ones((n, c), dtype=bool), relevant)


def _r1(model: FusionModel, a: FusionArrays) -> float:
    return float((model.scores(a.x, a.request).argmax(axis=1) == a.relevant.argmax(axis=1)).mean())


def test_the_fit_learns_when_words_count_more_than_meaning() -> None:
    train, test = _synthetic(300, 0), _synthetic(300, 1)
    model = fit_fusion([train], FitConfig(steps=150))
    interaction = np.asarray(model.interactions)
    row_lex = list(model.interacting).index(LEX)
    row_dense = list(model.interacting).index(DENSE)
    assert interaction[row_lex, OOV] < 0 < interaction[row_dense, OOV]  # unknown words: trust meaning
    assert _r1(model, test) > 0.9
    flat = model.model_copy(update={"interactions": tuple(tuple(0.0 for _ in r) for r in model.interactions)})
    assert _r1(model, test) > _r1(flat, test) + 0.2


@pytest.mark.slow
def test_train_fusion_writes_a_loadable_file_with_its_fold_rows(tmp_path: Path) -> None:
    from toolret.training.fusion_command import train_fusion

    from ..eval.test_datasets import write_dataset
    from ..eval.test_lodo import QUERIES, TOOLS

    root = tmp_path / "bench"
    write_dataset(root / "tiny", TOOLS, QUERIES)
    card = train_fusion(root, tmp_path / "out", limit=None, steps=20, sets=("tiny",))
    model = FusionModel.load(tmp_path / "out" / "fusion.json")
    assert card["fitted_on"] == ["tiny"] and model.card["folds"][0]["set"] == "tiny"
    assert (tmp_path / "out" / "fusion_folds.md").read_text().startswith("| set | fitted |")
    assert len(card["sha256"]) == 64


def test_the_scale_puts_learned_scores_in_the_hand_set_fusions_units() -> None:
    from dataclasses import replace

    from toolret.training.fusion_fit import spread_ratio

    arrays = _synthetic(200, 2)
    model = fit_fusion([arrays], FitConfig(steps=50))
    assert model.scale == 1.0  # no hand-set scores: nothing to scale to
    halved = replace(arrays, heuristic=model.scores(arrays.x, arrays.request) / 2.0)
    assert spread_ratio(model, [halved]) == pytest.approx(2.0)
    scaled = fit_fusion([halved], FitConfig(steps=50))
    assert scaled.scale == pytest.approx(2.0, rel=1e-3)
    order = np.argsort(-model.scores(arrays.x, arrays.request), axis=1)
    assert (np.argsort(-scaled.scores(arrays.x, arrays.request), axis=1) == order).all()  # the order is unchanged
