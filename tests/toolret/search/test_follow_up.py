"""The follow-up rule: earlier turns add tools only to a follow-up, never displacing its own matches."""

from __future__ import annotations

import pytest

from toolret.llm.protocol import ChatMessage
from toolret.results import ScoredTool, SearchResult
from toolret.search.follow_up import (
    FOLLOW_UP_MIN_SIMILARITY,
    add_context,
    follow_up_reason,
    needs_context,
    refers_back,
    with_context,
)

WELL = FOLLOW_UP_MIN_SIMILARITY + 0.1
WEAK = FOLLOW_UP_MIN_SIMILARITY - 0.1


def result(query: str, *tools: tuple[str, float, float]) -> SearchResult:
    return SearchResult(query=query, tools=[ScoredTool(id=i, name=i, score=s, similarity=sim) for i, s, sim in tools])


def test_a_new_request_that_matches_a_tool_well_needs_no_context():
    own = result("play some jazz", ("play_music", 2.1, FOLLOW_UP_MIN_SIMILARITY + 0.2))
    assert not needs_context("play some jazz", own)


def test_a_request_that_refers_back_or_matches_nothing_well_does():
    assert needs_context("and in Rome?", result("and in Rome?", ("get_weather", 2.0, 0.6)))
    assert needs_context("lorem ipsum", result("lorem ipsum", ("translate", 1.0, FOLLOW_UP_MIN_SIMILARITY - 0.01)))
    assert needs_context("anything", result("anything"))  # nothing found at all


@pytest.mark.parametrize(
    "text",
    [
        "is it raining in Oslo? also convert 100 dollars to euros",  # issue 25: "it" and a mid-message "also"
        "send that file to Bob",
        "is there any news about Oslo?",
        "there are three files to compress, zip them",
        "book a flight then a hotel",
    ],
)
def test_a_pronoun_or_a_joining_word_alone_is_not_a_follow_up(text):
    own = result(text, ("some_tool", 2.0, WELL))
    assert not refers_back(text)
    assert follow_up_reason(text, own) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("and in Rome?", "opens with 'and'"),
        ("what about Lyon", "opens with 'what about'"),
        ("also for tomorrow", "opens with 'also'"),
        ("book a table there", "refers back with 'there'"),
        ("do it again", "refers back with 'again'"),
        ("the same for Bob", "refers back with 'same'"),
    ],
)
def test_a_continuation_or_a_back_reference_is_a_follow_up_and_says_why(text, reason):
    assert refers_back(text)
    assert follow_up_reason(text, result(text, ("some_tool", 2.0, WELL))) == reason


def test_own_well_matched_tools_keep_their_places_and_context_fills_the_rest():
    own = result("book it for Friday", ("book_table", 1.5, 0.4), ("translate", 1.2, 0.1), ("set_timer", 0.9, 0.05))
    earlier = result("a table for two in Lyon", ("find_restaurants", 2.2, 0.5), ("book_table", 2.0, 0.45))
    merged = with_context(own, earlier, 3, "a table for two in Lyon", "refers back with 'it'")
    assert merged.ids == ["book_table", "find_restaurants", "translate"]
    step = merged.trace[-1]
    assert step.stage == "follow_up" and step.note.startswith("follow-up (refers back with 'it')")
    assert "kept the request's own book_table" in step.note and ": find_restaurants; in place of" in step.note
    assert step.note.endswith("in place of its weakly matched set_timer")


def test_the_requests_own_matches_are_never_displaced_by_earlier_turns():
    own = result("weather and money", ("convert_currency", 2.9, 0.45), ("get_weather", 1.2, 0.3))
    earlier = result("send an email", ("send_email", 3.1, 0.6), ("send_sms", 1.5, 0.4), ("call_contact", 1.0, 0.3))
    merged = with_context(own, earlier, 2, "send an email", "opens with 'and'")
    assert merged.ids == ["convert_currency", "get_weather"]
    assert "from earlier turns ('send an email'): none" in merged.trace[-1].note


def test_with_k_auto_a_follow_up_the_floor_emptied_gets_the_earlier_turns_set():
    # issue 41: "and in Rome?" matches nothing, so k="auto" returns no tools for it alone; the
    # carried set was sized by that empty result and the follow-up got no tools at all.
    own = result("and in Rome?")
    earlier = result("and in Rome? (context: what's the weather in Paris?)", ("get_weather", 2.7, 0.41))
    merged = with_context(own, earlier, "auto", "what's the weather in Paris?", "opens with 'and'")
    assert merged.ids == ["get_weather"]
    assert merged.trace[-1].note.endswith("): get_weather") and "kept the request's own none" in merged.trace[-1].note


def test_with_k_auto_the_larger_set_sizes_the_follow_up_and_its_own_matches_come_first():
    own = result("and convert it to yen", ("convert_currency", 2.5, 0.5), ("translate", 0.9, 0.1))
    earlier = result("context", ("get_weather", 2.7, 0.41))
    assert with_context(own, earlier, "auto", "context").ids == ["convert_currency", "get_weather"]
    wide = result("context", ("get_weather", 2.7, 0.41), ("get_forecast", 2.5, 0.4), ("get_air_quality", 2.2, 0.3))
    assert with_context(own, wide, "auto", "context").ids == ["convert_currency", "get_weather", "get_forecast"]


def test_with_k_auto_a_follow_up_its_own_words_match_well_keeps_the_earlier_turns_tool():
    # issue 41 replay: "what about tomorrow?" after the weather matches set_reminder and set_alarm on
    # its own ("tomorrow"); the context search gives get_weather, and the larger set (2) left no place
    # for it: the follow-up lost the tool it refers to (k=3 kept it).
    own = result("what about tomorrow?", ("set_reminder", 1.2, WELL), ("set_alarm", 1.0, WELL))
    earlier = result("what about tomorrow? (context: weather in Paris)", ("get_weather", 2.7, 0.56))
    merged = with_context(own, earlier, "auto", "what's the weather in Paris?", "opens with 'what about'")
    assert merged.ids == ["set_reminder", "set_alarm", "get_weather"]


def _history(*texts: str) -> list[ChatMessage]:
    turns: list[ChatMessage] = []
    for text in texts:
        turns += [ChatMessage(role="user", content=text), ChatMessage(role="assistant", content="Done.")]
    return turns


def test_a_new_request_in_a_thread_is_searched_alone_and_the_trace_says_so():
    query = "is it raining in Oslo? also convert 100 dollars to euros"
    own = result(query, ("convert_currency", 2.9, 0.45), ("get_weather", 1.2, 0.2), ("transfer_money", 1.1, 0.28))

    def search(context: str) -> SearchResult:
        raise AssertionError(f"earlier turns searched for a new request: {context!r}")

    out = add_context(query, own, _history("send an email to bob@example.com saying hi"), 3, search)
    assert out.ids == own.ids
    assert out.trace[-1].stage == "follow_up" and out.trace[-1].path == "skipped"
    assert "a new request" in out.trace[-1].note and "earlier turns not searched" in out.trace[-1].note


def test_a_follow_up_searches_the_request_with_the_latest_earlier_user_turns():
    own = result("and in Rome?", ("translate", 1.1, 0.13))
    asked: list[str] = []

    def search(context: str) -> SearchResult:
        asked.append(context)
        return result(context, ("get_weather", 2.7, 0.41))

    out = add_context("and in Rome?", own, _history("a", "weather in Madrid", "and in Oslo?"), 1, search)
    assert asked == ["and in Rome? (context: and in Oslo? | weather in Madrid)"]
    assert out.ids == ["get_weather"] and "from earlier turns" in out.trace[-1].note
    assert add_context("and in Rome?", own, [], 1, search) is own  # no earlier user turn: nothing to add
