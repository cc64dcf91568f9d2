"""k='auto': a precise tool set per query (and per sub-task) instead of a fixed k."""

from __future__ import annotations

import pytest

from toolret import QueryError, ScoredTool
from toolret.retrieval.selection import auto_cut, select_auto


def test_auto_cut_keeps_scores_within_margin_of_the_best():
    assert auto_cut([0.62, 0.60, 0.41, 0.40], margin=0.08, max_k=5) == 2
    assert auto_cut([0.5, 0.49, 0.48, 0.47, 0.46, 0.45], margin=0.1, max_k=4) == 4
    assert auto_cut([0.9, 0.1], margin=0.05, max_k=5) == 1
    assert auto_cut([], margin=0.1, max_k=5) == 0


def _tool(tool_id: str, score: float, subtask: str | None = None) -> ScoredTool:
    return ScoredTool(id=tool_id, name=tool_id, score=score, subtask=subtask)


def test_each_subtask_keeps_its_own_best_tools():
    ranked = [
        _tool("weather", 0.70, "weather tomorrow"),
        _tool("news", 0.40, "news about delays"),
        _tool("forecast", 0.66, "weather tomorrow"),
        _tool("rss", 0.20, "news about delays"),
        _tool("calendar", 0.30, "weather tomorrow"),
    ]
    chosen = [t.id for t in select_auto(ranked, margin=0.08, max_k=5)]
    assert chosen == ["weather", "news", "forecast"]


def test_a_subtask_far_below_the_best_tool_is_left_out():
    ranked = [
        _tool("house_renting", 0.72),
        _tool("travel", 0.69, "moving to Japan"),
        _tool("chat", 0.41, "can you help me out?"),
        _tool("faq", 0.39, "can you help me out?"),
    ]
    gated = [t.id for t in select_auto(ranked, margin=0.08, max_k=5, subtask_margin=0.16)]
    assert gated == ["house_renting", "travel"]
    ungated = [t.id for t in select_auto(ranked, margin=0.08, max_k=5)]
    assert ungated == ["house_renting", "travel", "chat", "faq"]


def test_the_request_best_group_is_never_left_out():
    ranked = [_tool("weather", 0.9, "weather tomorrow"), _tool("news", 0.2, "news about delays")]
    assert [t.id for t in select_auto(ranked, margin=0.08, max_k=5, subtask_margin=0.0)] == ["weather"]


def test_auto_k_search_returns_a_small_precise_set(embedder):
    from toolret import ToolDoc, ToolKnowledgeBase

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(
        [
            ToolDoc(name="get_weather", description="Current weather and forecast for a city."),
            ToolDoc(name="convert_currency", description="Convert money between currencies."),
            ToolDoc(name="translate_text", description="Translate text into another language."),
            ToolDoc(name="send_email", description="Send an e-mail message."),
            ToolDoc(name="play_music", description="Play a song or a playlist."),
        ]
    )
    result = kb.search("what's the weather forecast for Paris?", k="auto")
    assert result.ids[0] == "get_weather"
    top5 = kb.search("what's the weather forecast for Paris?", k=5).tools
    within = [t.id for t in top5 if t.score >= top5[0].score - kb.config.auto_margin]
    assert result.ids == within and len(within) < 5  # the cut, not the fixed k
    assert result.trace[-1].stage == "auto_k"
    with pytest.raises(QueryError, match="'auto'"):
        kb.search("weather", k="many")  # type: ignore[arg-type]
