"""k='auto': a precise tool set per query (and per sub-task) instead of a fixed k."""

from __future__ import annotations

import pytest

from toolret import QueryError, ScoredTool
from toolret.search.auto_k import NOT_EVIDENCE, auto_cut, select_auto


def test_auto_cut_keeps_scores_within_margin_of_the_best():
    assert auto_cut([0.62, 0.60, 0.41, 0.40], margin=0.08, max_k=5) == 2
    assert auto_cut([0.5, 0.49, 0.48, 0.47, 0.46, 0.45], margin=0.1, max_k=4) == 4
    assert auto_cut([0.9, 0.1], margin=0.05, max_k=5) == 1
    assert auto_cut([], margin=0.1, max_k=5) == 0


def _tool(tool_id: str, score: float, subtask: str | None = None) -> ScoredTool:
    return ScoredTool(id=tool_id, name=tool_id, score=score, subtask=subtask)


def test_the_ratio_cut_adapts_to_how_far_the_best_stands_out():
    # A clear winner keeps only rivals that stand out as well; a flat head keeps its near-ties.
    assert auto_cut([3.0, 2.4, 1.9, 1.8], margin=1.0, ratio=0.3, max_k=5) == 2
    assert auto_cut([1.2, 1.0, 0.9, 0.5], margin=1.0, ratio=0.3, max_k=5) == 3
    assert auto_cut([3.0, 2.4, 1.9, 1.8], margin=1.0, max_k=5) == 2  # the margin alone: 2.0 and up
    assert auto_cut([-0.2, -0.2, -0.5], margin=1.0, ratio=0.3, max_k=5) == 2  # a best at or below 0: its ties


@pytest.mark.parametrize(
    ("part", "scores", "parts", "ratio", "by_evidence", "by_score"),
    [
        # c stands out only through the anchor (cosine_weight x its cosine above the pool's): by score it
        # passes (3.1 >= 4.0 - 1.0), by evidence it does not (2.1 < 72 % of the best evidence, 3.3)
        ("anchor", (4.0, 3.5, 3.1), (1.0, 0.2, 1.0), 0.28, ["a", "b"], ["a", "b", "c"]),
        # A request in the registry's own words leans on words: a's lexical z-score lifts it 4.0 above b,
        # where the balance without the strength term sees two near-equals (a 3.0, b 2.6): both stand out.
        ("strength_shift", (7.0, 3.0, 1.0), (4.0, 0.4, 0.2), 0.26, ["a", "b"], ["a"]),
        # The ranking's low BM25 floor stretches a's thinly spread words; at the unit floor a and b are
        # near-equals (a 3.2, b 2.7) and both stand out.
        ("floor_shift", (6.0, 3.0, 1.0), (2.8, 0.3, 0.1), 0.26, ["a", "b"], ["a"]),
    ],
)
def test_the_cut_reads_the_field_evidence_without_each_part_that_is_not_evidence(
    part: str, scores: tuple[float, ...], parts: tuple[float, ...], ratio: float, by_evidence, by_score
):
    assert part in NOT_EVIDENCE
    tools = [
        ScoredTool(id=tool_id, name=tool_id, score=score, **{part: value})
        for tool_id, score, value in zip("abc", scores, parts)
    ]
    assert [t.id for t in select_auto(tools, margin=1.0, ratio=ratio, max_k=5)] == by_evidence
    without = [t.model_copy(update={part: 0.0}) for t in tools]
    assert [t.id for t in select_auto(without, margin=1.0, ratio=ratio, max_k=5)] == by_score


def test_auto_k_picks_the_right_count_on_a_crafted_score_distribution():
    # Two tools stand out of the pool (z 3.1 and 2.6), then the pool itself (1.5 and below).
    scores = [3.1, 2.6, 1.5, 1.4, 1.3]
    assert auto_cut(scores, margin=1.0, ratio=0.3, max_k=5) == 2
    ranked = [_tool(f"t{i}", s) for i, s in enumerate(scores)]
    assert [t.id for t in select_auto(ranked, margin=1.0, max_k=5, ratio=0.3)] == ["t0", "t1"]
    # A single clear need: one tool.
    single = [_tool("a", 3.5), _tool("b", 1.9), _tool("c", 1.8)]
    assert [t.id for t in select_auto(single, margin=1.0, max_k=5, ratio=0.3)] == ["a"]


def test_each_subtask_adds_its_best_tool():
    ranked = [
        _tool("finance", 3.0),
        _tool("weather", 2.8, "weather tomorrow"),
        _tool("news", 2.5, "news about delays"),
        _tool("stocks", 1.2),
        _tool("forecast", 2.7, "weather tomorrow"),
    ]
    chosen = [t.id for t in select_auto(ranked, margin=1.0, max_k=5, ratio=0.3, subtask_margin=1.0)]
    assert chosen == ["finance", "weather", "news"]  # one per part; forecast is weather's second


def test_a_subtask_far_below_the_best_tool_is_left_out():
    ranked = [
        _tool("house_renting", 3.2),
        _tool("travel", 2.9, "moving to Japan"),
        _tool("chat", 1.4, "can you help me out?"),
        _tool("faq", 1.3, "can you help me out?"),
    ]
    gated = [t.id for t in select_auto(ranked, margin=1.0, max_k=5, ratio=0.3, subtask_margin=1.0)]
    assert gated == ["house_renting", "travel"]
    ungated = [t.id for t in select_auto(ranked, margin=1.0, max_k=5, ratio=0.3)]
    assert ungated == ["house_renting", "travel", "chat"]


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
    cfg = kb.config
    within = [t.id for t in top5][
        : auto_cut([t.score for t in top5], margin=cfg.auto_k.margin, ratio=cfg.auto_k.ratio, max_k=5)
    ]
    assert result.ids == within and len(within) < 5  # the cut, not the fixed k
    assert [s.stage for s in result.trace][-2:] == ["auto_k", "floor"]  # the cut, then the floor under it
    with pytest.raises(QueryError, match="'auto'"):
        kb.search("weather", k="many")  # type: ignore[arg-type]


def test_a_search_reports_what_the_rankings_lower_floor_moved(make_kb):
    # End to end: the field evidence of each tool (what k="auto" counts on) is the score the unit floor
    # gives it, though the ranking's lower floor ordered the tools.
    from toolret import RetrievalConfig, ToolDoc
    from toolret.search.auto_k import field_evidence

    # twenty tools of one word each, a request that names eight: every BM25 is one word's, spread thinly
    # against the request's achievable BM25, where the unit floor binds
    words = "invoice weather calendar password playlist ticket recipe flight hotel translate currency email"
    words += " backup printer thermostat parcel podcast stock lyrics taxi"
    kb = make_kb([ToolDoc(name=f"{w}_tool", description=f"Handle the {w} of a user.") for w in words.split()])
    request = "my invoice weather calendar password playlist ticket recipe flight"
    default = RetrievalConfig.preset("fast")
    assert default.fusion.lexical_sd_floor < default.fusion.evidence_sd_floor
    split = {t.id: t for t in kb.search(request, k=4).tools}
    unit = {t.id: t for t in kb.search(request, k=4, config=default.with_(lexical_sd_floor=0.08)).tools}
    assert max(abs(t.floor_shift) for t in split.values()) > 0.01  # the lower floor moved the scores
    assert all(t.floor_shift == 0.0 for t in unit.values())
    for tool_id, tool in split.items():
        assert field_evidence(tool) == pytest.approx(field_evidence(unit[tool_id]), abs=1e-5)
    assert "floor_shift" in split["invoice_tool"].evidence()


def test_a_search_reports_what_the_strength_term_moved(make_kb):
    # End to end: the shift reaches the result, and score - anchor - strength_shift is the score the
    # same request gets without the strength term (minus its anchor), the evidence k="auto" cuts on.
    from toolret import RetrievalConfig, ToolDoc

    kb = make_kb(
        [
            ToolDoc(name="send_email", description="Send an email message to a recipient."),
            ToolDoc(name="get_weather", description="Current weather forecast for a city."),
            ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
        ]
    )
    request = "send an email message to a recipient"  # the registry's own words: a strong match
    on = {t.id: t for t in kb.search(request, k=3).tools}
    off = {
        t.id: t for t in kb.search(request, k=3, config=RetrievalConfig.preset("fast").with_(strength_slope=0.0)).tools
    }
    assert max(abs(t.strength_shift) for t in on.values()) > 0.01  # the term moved the scores
    for tool_id, tool in on.items():
        assert tool.score - tool.anchor - tool.strength_shift == pytest.approx(
            off[tool_id].score - off[tool_id].anchor, abs=1e-5
        )
