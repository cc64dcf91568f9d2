"""Fitting the scorer: pairwise features, held-out choice of regularisation, persistence."""

from __future__ import annotations

import numpy as np
import pytest

from toolret import KnowledgeBaseError, RetrievalConfig, ToolDoc, ToolKnowledgeBase
from toolret.memory.learn import choose_l2, pair_diffs, recall_at
from toolret.scoring.mftr import FEATURE_NAMES

HEURISTIC = FEATURE_NAMES.index("heuristic")
NAME = FEATURE_NAMES.index("name_match")


def _init() -> np.ndarray:
    init = np.zeros(len(FEATURE_NAMES))
    init[HEURISTIC] = 1.0
    return init


def _queries(signal: str, n: int = 60, seed: int = 0) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Synthetic candidate lists of 20 tools, one relevant. ``signal`` says which feature finds it:
    'heuristic' (the hand-set formula already ranks it first) or 'name_match' (only a fit can)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        feats = rng.normal(size=(20, len(FEATURE_NAMES)))
        mask = np.zeros(20, dtype=bool)
        hit = int(rng.integers(20))
        mask[hit] = True
        col = HEURISTIC if signal == "heuristic" else NAME
        feats[hit, col] = feats[:, col].max() + 1.0
        out.append((f"request number {i}", feats, mask))
    return out


def test_pair_diffs_and_recall():
    feats = np.array([[0.0] * len(FEATURE_NAMES), [1.0] * len(FEATURE_NAMES), [2.0] * len(FEATURE_NAMES)])
    mask = np.array([False, True, False])
    diffs = pair_diffs([("q", feats, mask)], negatives=1)
    assert diffs.shape == (1, len(FEATURE_NAMES)) and diffs[0, 0] == 1.0  # 1 - first negative (row 0)
    assert recall_at([("q", feats, mask)], _init(), k=1) == 0.0  # row 2 scores highest
    assert recall_at([("q", feats, mask)], -_init(), k=2) == 1.0


def test_a_real_signal_is_learned_and_validated():
    queries = _queries("name_match")
    l2, val_fit, val_base, n_val = choose_l2(queries, _init())
    assert l2 is not None and n_val >= 5
    assert val_fit > val_base + 0.5  # the fitted scorer finds what the formula cannot


def test_noise_keeps_the_hand_set_formula():
    l2, val_fit, val_base, _ = choose_l2(_queries("heuristic"), _init())
    assert l2 is None and val_base == 1.0 and val_fit == val_base


@pytest.fixture()
def kb(embedder, tmp_path):
    base = ToolKnowledgeBase(tmp_path / "kb", embedder=embedder)
    base.add(
        [
            ToolDoc(name="get_weather", description="Current weather conditions and forecast for a city."),
            ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
            ToolDoc(name="send_email", description="Send an e-mail message to a recipient."),
            ToolDoc(name="search_flights", description="Find flights between two airports on a date."),
            ToolDoc(name="book_hotel", description="Reserve a hotel room in a city for given dates."),
            ToolDoc(name="translate_text", description="Translate text into another language."),
        ]
    )
    yield base
    base.close()


def test_fit_without_bundles_is_a_clear_error(kb):
    with pytest.raises(KnowledgeBaseError, match="nothing to fit on"):
        kb.fit()


def test_fit_on_recorded_bundles_is_used_by_balanced_and_kept_on_reopen(kb, embedder):
    bundles = [
        ("will it rain in Oslo tomorrow", ["get_weather"]),
        ("how many dollars is 30 euros", ["convert_currency"]),
        ("mail the report to Ana", ["send_email"]),
        ("flights from Paris to Rome on Friday", ["search_flights"]),
        ("a room in Berlin for two nights", ["book_hotel"]),
        ("say thank you in Japanese", ["translate_text"]),
    ] * 2
    kb.record_many([(f"{q} ({i})", t) for i, (q, t) in enumerate(bundles)])
    weights = kb.fit()
    assert weights.n_queries > 0 and weights.features == list(FEATURE_NAMES)
    assert kb.learned == weights
    balanced = kb.search("is it going to be sunny in Lisbon", k=3, config="balanced")
    assert balanced.ids[0] == "get_weather"
    # fitted state travels with the search, never in the user's config
    assert kb.begin_search("sunny in Lisbon", config="balanced").state.learned == weights
    assert kb.begin_search("sunny in Lisbon", config="fast").state.learned is None
    assert "learned" not in RetrievalConfig.model_fields

    kb.save()
    reopened = ToolKnowledgeBase.load(kb.path, embedder=embedder)
    try:
        assert reopened.learned == weights and reopened.history_size == kb.history_size
        again = reopened.search("is it going to be sunny in Lisbon", k=3, config="balanced")
        assert again.ids == balanced.ids
        # fast does not use what was learned
        fast = reopened.search("is it going to be sunny in Lisbon", k=3, config=RetrievalConfig.preset("fast"))
        assert fast.ids[0] == "get_weather"
    finally:
        reopened.close()


def test_memory_lifts_the_tool_a_similar_request_used(kb):
    query = "get me the numbers for tomorrow's trip"  # says nothing of which tool
    # The memory weight was chosen on the hand-set formula's scale; with the learned fusion it is not re-chosen yet.
    plain = RetrievalConfig.preset("fast").with_(fusion="heuristic")
    with_memory = plain.model_copy(update={"history_weight": RetrievalConfig.preset("balanced").memory.history_weight})
    before_result = kb.search(query, k=6, config=with_memory)
    before = before_result.ids
    kb.record("get me the numbers for my trip tomorrow", ["convert_currency"])
    after = kb.search(query, k=6, config=with_memory)
    # Lifted by history_weight x h (h in [0, 1]) from below the top two into them. (With the anchor's
    # weight at 5 since issue 43, the embedder keeps search_flights, 0.08 ahead, first here: the memory
    # weight, chosen when the anchor weighed 2.5, is not re-chosen yet.)
    assert before.index("convert_currency") > 1 and after.ids.index("convert_currency") <= 1
    lift = after.tools[after.ids.index("convert_currency")].field_scores["history"]
    assert 0.5 < lift <= 1.0
    assert kb.search(query, k=6, config=plain).ids == before  # history_weight 0: memory unused
    kb.clear_history()
    assert kb.history_size == 0 and kb.search(query, k=6, config=with_memory).ids == before


def test_recording_unknown_tools_or_empty_requests_is_refused(kb):
    from toolret import ToolNotFoundError

    with pytest.raises(ToolNotFoundError, match="unknown tool id"):
        kb.record("book a taxi", ["call_taxi"])
    with pytest.raises(KnowledgeBaseError, match="non-empty request"):
        kb.record("  ", ["get_weather"])
    assert kb.history_size == 0
