"""Chat history in the shapes callers keep it, and clear errors for anything else."""

from __future__ import annotations

import pytest

from toolret.errors import QueryError
from toolret.llm import ChatMessage
from toolret.search.conversation import MAX_TURNS, as_chat_history


def test_every_supported_shape_becomes_chat_messages():
    from langchain_core.messages import (
        AIMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from llama_index.core.llms import ChatMessage as LIMessage

    turns = [
        ChatMessage(role="system", content="be brief"),
        ("user", "find flights to Oslo"),
        {"role": "assistant", "content": "Which date?"},
        HumanMessage("next Friday"),
        AIMessage("", tool_calls=[{"name": "search_flights", "args": {}, "id": "c1"}]),
        ToolMessage("3 flights", tool_call_id="c1"),
        AIMessage([{"type": "text", "text": "Found 3 flights."}]),
        SystemMessage("ignored? no, kept"),
        LIMessage(role="user", content="and hotels there"),
    ]
    out = as_chat_history(turns)
    assert [(m.role, m.content) for m in out] == [
        ("system", "be brief"),
        ("user", "find flights to Oslo"),
        ("assistant", "Which date?"),
        ("user", "next Friday"),
        ("assistant", "Found 3 flights."),
        ("system", "ignored? no, kept"),
        ("user", "and hotels there"),
    ]


def test_long_histories_keep_the_latest_turns():
    out = as_chat_history([("user", f"turn {i}") for i in range(MAX_TURNS + 10)])
    assert len(out) == MAX_TURNS and out[-1].content == f"turn {MAX_TURNS + 9}"


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ("just a string", "single str"),
        ([("wizard", "hi")], "history[0]: unknown role 'wizard'"),
        ([{"role": "user"}], "history[0]: a mapping needs"),
        ([("user", "ok"), 42], "history[1]: expected a ChatMessage"),
        ([("user", {"x": 1})], "history[0]: content must be text"),
    ],
)
def test_bad_history_names_the_turn(turns, message):
    with pytest.raises(QueryError, match=message.replace("[", r"\[").replace("]", r"\]")):
        as_chat_history(turns)


def test_search_rejects_bad_history_before_searching(embedder):
    from toolret import ToolDoc, ToolKnowledgeBase

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([ToolDoc(name="get_weather", description="Weather for a city.")])
    with pytest.raises(QueryError, match="history"):
        kb.search("weather", conversation=[("robot", "beep")])


def test_user_turns_are_read_from_any_framework_shape():
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from llama_index.core.base.llms.types import ChatMessage as LIChatMessage

    from toolret.search.conversation import earlier_than, user_turns

    chat = [HumanMessage("weather in Oslo"), AIMessage("Rain."), ToolMessage("x", tool_call_id="1"), HumanMessage(" ")]
    assert user_turns(chat) == [(0, "weather in Oslo")]
    memory = [LIChatMessage(role="user", content="weather in Oslo"), LIChatMessage(role="assistant", content="Rain."),
              LIChatMessage(role="user", content="and Rome?")]  # fmt: skip
    assert earlier_than(memory, "and Rome?") == memory[:2]
    assert earlier_than(memory, "something else") == memory  # the query is not in the memory yet


def test_the_latest_request_splits_the_conversation_in_any_message_shape():
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from toolret.search.conversation import after_latest, before_latest, follow_up_query, latest_request

    chat = [
        HumanMessage("weather in  Oslo"),
        AIMessage("Rain."),
        {"role": "user", "content": "and in Rome?"},
        ToolMessage("sunny", tool_call_id="1"),
    ]
    assert latest_request(chat) == "and in Rome?"
    assert before_latest(chat) == chat[:2] and after_latest(chat) == chat[3:]
    assert follow_up_query(chat) == "and in Rome? (context: weather in Oslo)"
    assert latest_request([AIMessage("hi")]) is None and before_latest([AIMessage("hi")]) == []
    assert after_latest([AIMessage("hi")]) == [AIMessage("hi")] and follow_up_query(chat[:1]) is None


def test_a_turn_key_is_the_user_messages_id_else_its_position_and_text():
    from langchain_core.messages import AIMessage, HumanMessage

    from toolret.search.conversation import turn_key

    assert turn_key([HumanMessage("weather in Oslo", id="h1"), AIMessage("Rain.")]) == "h1"
    plain = [("user", "weather in Oslo"), ("assistant", "Rain.")]
    assert turn_key(plain) == turn_key(list(plain)) != turn_key([("user", "weather in Rome")])
    assert turn_key(plain).startswith("0:") and turn_key([("assistant", "hi")]) is None
