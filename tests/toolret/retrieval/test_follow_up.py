"""The follow-up rule: earlier turns add tools only to a follow-up, never displacing its own matches."""

from __future__ import annotations

from toolret.results import ScoredTool, SearchResult
from toolret.retrieval.follow_up import FOLLOW_UP_MIN_SIMILARITY, needs_context, with_context


def result(query: str, *tools: tuple[str, float, float]) -> SearchResult:
    return SearchResult(query=query, tools=[ScoredTool(id=i, name=i, score=s, similarity=sim) for i, s, sim in tools])


def test_a_new_request_that_matches_a_tool_well_needs_no_context():
    own = result("play some jazz", ("play_music", 2.1, FOLLOW_UP_MIN_SIMILARITY + 0.2))
    assert not needs_context("play some jazz", own)


def test_a_request_that_refers_back_or_matches_nothing_well_does():
    assert needs_context("and in Rome?", result("and in Rome?", ("get_weather", 2.0, 0.6)))
    assert needs_context("lorem ipsum", result("lorem ipsum", ("translate", 1.0, FOLLOW_UP_MIN_SIMILARITY - 0.01)))
    assert needs_context("anything", result("anything"))  # nothing found at all


def test_own_well_matched_tools_keep_their_places_and_context_fills_the_rest():
    own = result("book it for Friday", ("book_table", 1.5, 0.4), ("translate", 1.2, 0.1), ("set_timer", 0.9, 0.05))
    earlier = result("a table for two in Lyon", ("find_restaurants", 2.2, 0.5), ("book_table", 2.0, 0.45))
    merged = with_context(own, earlier, 3, "a table for two in Lyon")
    assert merged.ids == ["book_table", "find_restaurants", "translate"]
    assert merged.trace[-1].stage == "follow_up" and "kept 1 tool(s)" in merged.trace[-1].note
