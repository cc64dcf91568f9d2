"""One Search: the stage order, each stage timed, the typed request, and the same result however a
search is driven."""

from __future__ import annotations

import asyncio
import dataclasses
import typing

import pytest

from toolret import ToolDoc
from toolret.search.search import Search, SearchOptions, SearchRequest

TOOLS = [
    ToolDoc(name="get_weather", description="Current weather and forecast for a city."),
    ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
    ToolDoc(name="find_restaurants", description="Find restaurants near a place."),
    ToolDoc(name="send_email", description="Send an e-mail message to a recipient."),
    ToolDoc(name="book_table", description="Reserve a table at a restaurant for a party at a time."),
]
MULTI = "what's the weather in Oslo tomorrow, then book a table for two and e-mail Ana the details"


@pytest.fixture(scope="module")
def kb(make_kb):
    return make_kb(TOOLS)


def _stages_run(search: Search) -> list[str]:
    order = []
    stage = search.next_stage(None)
    while stage is not None:
        order.append(stage)
        search.run_stage(stage)
        stage = search.next_stage(stage)
    return order


def test_a_plain_search_runs_every_stage_once_in_order(kb):
    search = kb.begin_search("weather in Paris", k=2, config="fast")
    assert _stages_run(search) == ["plan", "retrieve", "fuse", "rerank", "reflect"]
    # each stage timed by itself, around the stage alone
    assert list(search.stage_ms) == ["plan", "retrieve", "fuse", "rerank", "reflect"]
    assert all(ms >= 0 for ms in search.stage_ms.values())


def test_reflection_requeries_go_back_to_reflect_and_stay_bounded(kb):
    # split_gate 1.0 keeps both sub-tasks of the plan; a coverage threshold of 1.0 (one pool standard
    # deviation) leaves one of them uncovered round after round, so only reflect_rounds stops the loop.
    config = kb.config.preset("balanced").with_(reflect_rounds=3, coverage_threshold=1.0, split_gate=1.0)
    search = kb.begin_search(MULTI, k=3, config=config)
    order = _stages_run(search)
    state = search.state
    # every re-query (its own stage, after reflect) is judged again, never fused and reranked again;
    # the fourth reflect finds the three rounds spent and ends the search
    assert order == ["plan", "retrieve", "fuse", "rerank", "reflect"] + ["requery", "reflect"] * 3
    assert state.reflect_round == 3
    assert [s.note.split(":")[0] for s in state.trace if s.stage == "requery"] == ["round 1", "round 2", "round 3"]


@pytest.mark.parametrize("preset", ["fast", "balanced"])
def test_drive_search_and_asearch_agree(kb, preset):
    direct = kb.search(MULTI, k=3, config=preset)
    driven = kb.begin_search(MULTI, k=3, config=preset).run()
    awaited = asyncio.run(kb.asearch(MULTI, k=3, config=preset))
    assert [(t.id, t.score) for t in driven.tools] == [(t.id, t.score) for t in direct.tools]
    assert [(t.id, t.score) for t in awaited.tools] == [(t.id, t.score) for t in direct.tools]
    assert [s.stage for s in driven.trace] == [s.stage for s in direct.trace]


def test_the_request_is_typed_and_carried_by_the_search(kb):
    search = kb.begin_search("weather in Paris", k="auto", config="fast", allowed_ids=["get_weather"])
    assert search.request == SearchRequest("weather in Paris", "auto", config="fast", allowed_ids=["get_weather"])
    assert search.state.auto and search.state.k == search.state.config.auto_k.max_k
    assert search.run().ids == ["get_weather"]


def test_the_keyword_options_are_the_request_fields():
    # kb.search(**options) is typed by SearchOptions; a field added to one and not the other would be
    # an option the type checker rejects or a keyword begin_search cannot take.
    fields = [f.name for f in dataclasses.fields(SearchRequest)]
    assert fields[:2] == ["query", "k"]
    assert list(typing.get_type_hints(SearchOptions)) == fields[2:]


def test_an_unknown_option_is_a_type_error_naming_it(kb):
    with pytest.raises(TypeError, match="preset"):
        kb.search("weather", k=1, preset="fast")  # type: ignore[call-arg]
