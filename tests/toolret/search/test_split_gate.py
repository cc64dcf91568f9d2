"""The balanced preset's split gate: fragments of a single-need request are not searched on their own."""

from __future__ import annotations

import pytest

from toolret import RetrievalConfig, ToolDoc, ToolKnowledgeBase

TOOLS = [
    ToolDoc(name="search_flights", description="Search flights between two airports on a date."),
    ToolDoc(name="book_hotel", description="Book a hotel room in a city for some nights."),
    ToolDoc(name="get_weather", description="Current weather forecast for a city."),
    ToolDoc(name="send_email", description="Send an email message to a recipient."),
    ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
    ToolDoc(name="translate_text", description="Translate text into another language."),
]
SINGLE = "I'm planning a trip to Japan with my family next month. Can you find me a flight?"
MULTI = "Convert 100 dollars to euros. Then tell me the weather forecast in Oslo."


@pytest.fixture(scope="module")
def kb(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(TOOLS)
    yield kb
    kb.close()


def test_a_fragment_that_matches_no_tool_well_is_not_searched_alone(kb) -> None:
    gated = kb.search(SINGLE, k=3, config="balanced")
    fuse = next(s for s in gated.trace if s.stage == "fuse")
    assert "split gated" in fuse.note
    assert gated.plan is not None and len(gated.plan.subtasks) == 1
    assert gated.ids == kb.search(SINGLE, k=3, config="fast").ids  # ranked as one request
    ungated = kb.search(SINGLE, k=3, config=RetrievalConfig.preset("balanced").model_copy(update={"split_gate": None}))
    assert ungated.plan is not None and len(ungated.plan.subtasks) == 2  # the planner did split it


def test_a_real_multi_part_request_keeps_its_split(kb) -> None:
    result = kb.search(MULTI, k=2, config="balanced")
    assert result.plan is not None and len(result.plan.subtasks) == 2
    assert not any("split gated" in s.note for s in result.trace)
    assert set(result.ids) == {"get_weather", "convert_currency"}
    subtasks = {t.subtask for t in result.tools}
    assert subtasks <= {None, *(s.text for s in result.plan.subtasks)} and subtasks - {None}


def test_a_statement_is_context_not_a_need_of_its_own(kb) -> None:
    # The same two needs; phrased as asks they are two sub-tasks, but a statement ("Our team
    # sends...") only sets the context of the ask after it, so the request is ranked as one.
    asks = "Send an email message to the recipient. Convert 100 dollars to euros."
    statement = "Our team sends an email message to the recipient every week. Convert 100 dollars to euros."
    kept = kb.search(asks, k=3, config="balanced")
    assert kept.plan is not None and len(kept.plan.subtasks) == 2
    gated = kb.search(statement, k=3, config="balanced")
    assert any("split gated" in s.note for s in gated.trace if s.stage == "fuse")
    assert gated.ids == kb.search(statement, k=3, config="fast").ids
