"""Leave one dataset out: cached signals re-score exactly like the engine, and the fold protocol."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from toolret import RetrievalConfig, ToolKnowledgeBase
from toolret.eval.datasets import load_dataset
from toolret.eval.lodo import choose, default_setting, grid, score_setting, setting_of
from toolret.eval.signals import DatasetSignals, extract_signals, load_or_extract

from .test_datasets import write_dataset

TOOLS = [
    {
        "id": "get_weather",
        "name": "get_weather",
        "description": "Current weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
        "response": None,
        "examples": [],
        "category": None,
        "source": "t",
    },
    {
        "id": "send_email",
        "name": "send_email",
        "description": "Send an email message to a recipient.",
        "parameters": {
            "type": "object",
            "properties": {"to": {"type": "string", "description": "address"}},
            "required": ["to"],
        },
        "response": None,
        "examples": [],
        "category": None,
        "source": "t",
    },
    {
        "id": "convert_currency",
        "name": "convert_currency",
        "description": "Convert an amount of money.",
        "parameters": None,
        "response": None,
        "examples": [],
        "category": None,
        "source": "t",
    },
    {
        "id": "search_flights",
        "name": "search_flights",
        "description": "Search flights between two airports.",
        "parameters": None,
        "response": None,
        "examples": [],
        "category": None,
        "source": "t",
    },
    {
        "id": "book_hotel",
        "name": "book_hotel",
        "description": "Book a hotel room in a city for some nights.",
        "parameters": None,
        "response": None,
        "examples": [],
        "category": None,
        "source": "t",
    },
    {
        "id": "translate_text",
        "name": "translate_text",
        "description": "Translate text into another language.",
        "parameters": None,
        "response": None,
        "examples": [],
        "category": None,
        "source": "t",
    },
]
QUERIES = [
    {"id": "q1", "query": "what is the weather forecast in Paris", "relevant": ["get_weather"]},
    {"id": "q2", "query": "send an email to bob@example.com", "relevant": ["send_email"]},
    {"id": "q3", "query": "convert 100 dollars to euros", "relevant": ["convert_currency"]},
    {
        "id": "q4",
        "query": "I need a room in Rome for 3 nights and a flight there",
        "relevant": ["book_hotel", "search_flights"],
    },
    {"id": "q5", "query": "say this in French", "relevant": ["translate_text"]},
    {"id": "q6", "query": "put 'the weather forecast for Paris' into French", "relevant": ["translate_text"]},
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("lodo") / "tiny", TOOLS, QUERIES)


def _assert_engine_scores(kb: ToolKnowledgeBase, dataset, scores: np.ndarray) -> None:
    """The engine's scores of every query, best first, are the cached re-scoring's."""
    for qi, query in enumerate(dataset.queries):
        engine = [t.score for t in kb.search(query.query, k=len(TOOLS)).tools]
        cached = np.sort(scores[qi][np.isfinite(scores[qi])])[::-1][: len(engine)]
        assert np.allclose(engine, cached, atol=1e-5), query.query


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hubness", "cosine", "strength", "intent"),
    [(0.0, 0.0, 0.0, "words"), (-0.3, 2.5, 0.4, "off"), (0.5, 1.0, 1.5, "all")],
)
def test_cached_signals_rescore_like_the_engine(
    tiny: Path, embedder, hubness: float, cosine: float, strength: float, intent: str
) -> None:
    """The numpy re-scoring of a setting gives the engine's own ranking, query by query, whichever
    fields read the request without its argument values."""
    dataset = load_dataset(tiny)
    sig = extract_signals(dataset, embedder, limit=None, intent_without_arguments=intent)
    cfg = RetrievalConfig.preset("fast").model_copy(
        update={
            "lexical_weight": 0.6,
            "evidence_slope": 1.0,
            "hubness_weight": hubness,
            "cosine_weight": cosine,
            "strength_slope": strength,
            "strength_center": 1.0,
            "fusion": "heuristic",
            "intent_without_arguments": intent,
        }
    )
    kb = ToolKnowledgeBase(None, embedder=embedder, config=cfg)
    kb.add(dataset.tool_docs())
    from toolret.eval.lodo import fused_scores

    _assert_engine_scores(kb, dataset, fused_scores(sig, setting_of(cfg))[0])
    engine_r5 = np.mean(
        [len(set(q.relevant) & set(kb.search(q.query, k=5).ids)) / len(q.relevant) for q in dataset.queries]
    )
    assert score_setting(sig, setting_of(cfg))["recall@5"] == pytest.approx(engine_r5)


@pytest.mark.slow
def test_cached_signals_rescore_the_learned_fusion_like_the_engine(tiny: Path, embedder) -> None:
    """The shipped learned fusion gives the same scores on cached signals as in the engine, query by query."""
    dataset = load_dataset(tiny)
    sig = extract_signals(dataset, embedder, limit=None)
    cfg = RetrievalConfig.preset("fast").with_(fusion="learned")
    kb = ToolKnowledgeBase(None, embedder=embedder, config=cfg)
    kb.add(dataset.tool_docs())
    from toolret.eval.lodo import fused_scores

    _assert_engine_scores(kb, dataset, fused_scores(sig, setting_of(cfg))[0])


@pytest.mark.slow
def test_signals_are_cached_and_reloaded(tiny: Path, tmp_path: Path, embedder) -> None:
    first = load_or_extract(tiny, tmp_path, embedder, limit=None)
    files = list(tmp_path.glob("tiny-*.npz"))
    assert len(files) == 1
    again = DatasetSignals.load(files[0])
    assert again is not None and again.n_queries == first.n_queries == len(QUERIES)
    assert np.array_equal(again.lex, first.lex) and set(again.baselines) == set(first.baselines)


def test_choose_maximises_the_training_mean_without_losing_on_a_training_set() -> None:
    # rows: settings; columns: sets. Setting 0 has the best mean but loses on set 1 (below its floor).
    table = np.array([[0.9, 0.4, 0.9], [0.7, 0.6, 0.7], [0.5, 0.5, 0.5]])
    floor = np.array([0.5, 0.5, 0.5])
    assert choose(table, floor, [0, 1]) == 1
    assert choose(table, floor, [0, 2]) == 0  # set 1 left out: nothing is lost on the others
    assert choose(np.array([[0.1, 0.2], [0.3, 0.1]]), np.array([0.5, 0.5]), [0, 1]) == 0  # all lose: least worst


def test_choose_under_the_guard_skips_a_setting_that_loses_to_cosine_on_a_training_set() -> None:
    table = np.array([[0.9, 0.9, 0.9], [0.7, 0.7, 0.7]])
    floor = np.zeros(3)
    guard = np.array([[0.05, -0.01, 0.02], [0.01, 0.0, 0.01]])  # setting 0 loses to cosine on set 1
    assert choose(table, floor, [0, 1], guard) == 1
    assert choose(table, floor, [0, 2], guard) == 0
    assert choose(table, floor, [0, 1, 2], np.array([[-0.02, 0.1, 0.1], [-0.01, 0.1, 0.1]])) == 1  # least worst


def test_grid_and_default_setting_read_the_config() -> None:
    base = default_setting("fast")
    cfg = RetrievalConfig.preset("fast")
    assert base.lexical_weight == cfg.fusion.lexical_weight and base.candidates_per_field == cfg.candidates_per_field
    assert base.fusion_method == cfg.fusion.method == "heuristic"
    assert default_setting("fast") != setting_of(cfg.with_(fusion="learned"))
    points = grid(base, lexical_weight=(0.2, 0.4), candidates_per_field=(10, 20, 30))
    assert len(points) == 6 and {p.candidates_per_field for p in points} == {10, 20, 30}
    assert replace(base, lexical_weight=0.2, candidates_per_field=10) in points
