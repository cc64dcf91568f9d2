"""What a tool-search tool tells the model (toolret.agents.search_tool_text)."""

from __future__ import annotations

from toolret import ToolDoc
from toolret.agents.search_tool_text import SUMMARY_CHARS, at_least, describe_tools, found_answer


def test_each_found_tool_is_one_line_its_name_and_first_sentence_cut_to_a_line():
    long = "Convert " + "very " * 60 + "much money. Second sentence."
    lines = describe_tools([("get_weather", "Current weather for a city.\n\nArgs: city"), ("fx", long), ("bare", "")])
    first, second, third = lines.splitlines()
    assert first == "- get_weather: Current weather for a city."
    assert second.endswith("…") and len(second) == len("- fx: ") + SUMMARY_CHARS
    assert third == "- bare"


def test_the_answer_says_what_was_found_or_how_to_search_again():
    assert found_answer("weather", [("get_weather", "Current weather.")]).startswith("Tools found")
    assert "describing the capability differently" in found_answer("fax", [])


def test_min_score_leaves_weak_matches_out(make_kb):
    kb = make_kb(
        [
            ToolDoc(name="get_weather", description="Current weather for a city."),
            ToolDoc(name="send_email", description="Send an e-mail message."),
        ]
    )
    result = kb.search("is it raining in Paris?", k=2)
    best = result.tools[0].score
    assert at_least(result, None) is result
    assert at_least(result, best).ids == [result.tools[0].id]
    assert at_least(result, best + 1).ids == []
