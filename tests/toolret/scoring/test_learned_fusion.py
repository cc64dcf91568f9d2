"""The learned fusion: the shipped coefficients, the features, and what a malformed file does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from toolret import RetrievalConfig, ToolKnowledgeBase, ToolRetError
from toolret.eval.folds import EVAL_ONLY_SETS
from toolret.scoring.learned_fusion import (
    CANDIDATE_FEATURES,
    FUSION_FILE,
    REQUEST_FEATURES,
    FusionModel,
    fusion_features,
    shipped_fusion,
)

F = 7


def _request(n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    lex = np.where(rng.random((1, n, F)) < 0.4, rng.random((1, n, F)) * 5, 0.0)
    dense = rng.random((1, n, F)) * 0.8
    present = rng.random((1, n, F)) < 0.8
    present[:, :, 0] = True
    return lex, dense, present


def _features(lex, dense, present, pool, n_tools: int = 100):
    q, n = pool.shape
    return fusion_features(
        lex,
        dense,
        present,
        np.full((q, F), 6.0),
        pool,
        np.zeros((q, n)),
        np.zeros((q, n)),
        np.zeros((q, n)),
        np.array([[0.6, 0.2, 1.0, 5.0]] * q),
        n_tools,
    )


def test_the_shipped_coefficients_load_and_were_never_fitted_on_an_eval_only_set() -> None:
    model = shipped_fusion()
    assert len(model.weights) == len(CANDIDATE_FEATURES) and len(model.request_mean) == len(REQUEST_FEATURES)
    fitted = {name.removesuffix(".train") for name in model.card["fitted_on"]}
    assert fitted and not fitted & set(EVAL_ONLY_SETS)
    assert {"banking77.train", "hwu64.train", "snips.train"} <= set(model.card["fitted_on"])  # train splits only
    assert {row["set"] for row in model.card["folds"]} >= set(EVAL_ONLY_SETS)


def test_padding_outside_the_pool_changes_no_score() -> None:
    lex, dense, present = _request(12)
    x, r = _features(lex, dense, present, np.ones((1, 12), dtype=bool))
    pad = lambda a: np.concatenate([a, np.full((1, 5) + a.shape[2:], 9.0, dtype=a.dtype)], axis=1)  # noqa: E731
    pool = np.concatenate([np.ones((1, 12), bool), np.zeros((1, 5), bool)], axis=1)
    xp, rp = _features(pad(lex), pad(dense), pad(present), pool)
    model = shipped_fusion()
    assert np.allclose(model.scores(x, r), model.scores(xp, rp)[:, :12])
    assert np.allclose(r, rp)


def test_the_request_features_read_words_and_meaning() -> None:
    lex = np.zeros((1, 3, F))
    lex[0, 0, 0] = 6.0  # the only tool matching the request's words matches all of them
    dense = np.zeros((1, 3, F))
    dense[0, :, 0] = [0.2, 0.7, 0.1]
    present = np.zeros((1, 3, F), dtype=bool)
    present[:, :, 0] = True
    x, r = _features(lex, dense, present, np.ones((1, 3), bool))
    named = dict(zip(REQUEST_FEATURES, r[0]))
    assert named["lexical_coverage"] == pytest.approx(1.0) and named["lexical_margin"] == pytest.approx(1.0)
    assert named["agreement"] == pytest.approx(0.2 - 0.7)  # BM25's best is not cosine's best
    assert named["cosine_margin"] == pytest.approx(0.5)
    assert x[0, 0, CANDIDATE_FEATURES.index("lexical_rank_gain")] == pytest.approx(1.0)
    assert x[0, 1, CANDIDATE_FEATURES.index("lexical_rank_gain")] == 0.0  # no word matched: no lexical gain


def test_a_malformed_coefficient_file_is_a_clear_error(tmp_path: Path) -> None:
    data = json.loads(FUSION_FILE.read_text())
    data["weights"] = data["weights"][:-1]
    bad = tmp_path / "fusion.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ToolRetError, match="fusion.json: fusion coefficients have the wrong shape"):
        FusionModel.load(bad)
    with pytest.raises(ToolRetError, match="cannot read"):
        FusionModel.load(tmp_path / "missing.json")


@pytest.mark.slow
def test_the_learned_fusion_is_opt_in_and_scores_differently(embedder) -> None:
    from toolret import ToolDoc

    docs = [
        ToolDoc(id="read_inbox", name="read_inbox", description="List the newest messages in the mailbox."),
        ToolDoc(id="send_email", name="send_email", description="Send an email to a recipient."),
        ToolDoc(id="get_weather", name="get_weather", description="Current weather for a city."),
    ]
    kb = ToolKnowledgeBase(None, embedder=embedder)
    kb.add(docs)
    assert RetrievalConfig.preset("fast").fusion.method == "heuristic"
    heuristic = kb.search("any new mail for me?", k=3)
    learned = kb.search("any new mail for me?", k=3, config=RetrievalConfig.preset("fast").with_(fusion="learned"))
    assert learned.ids[0] == "read_inbox" and heuristic.ids[0] == "read_inbox"
    assert [t.score for t in learned.tools] != pytest.approx([t.score for t in heuristic.tools])
