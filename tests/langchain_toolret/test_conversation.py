"""The follow-up rule: what counts as referring back, and what the context query holds."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from langchain_toolret import ToolIndex, ToolSelectionMiddleware, create_tool_retrieval_node
from langchain_toolret.conversation import conversation_query, follow_up_query, refers_back
from langchain_toolret.testing import ScriptedChatModel

from . import registry50

#: A request and its follow-up, which names no tool of its own, and the tool the follow-up still needs.
FOLLOW_UPS = [
    ("What's the weather in Paris?", "and in Rome?", "get_weather"),
    ("transfer 50 dollars to Alice", "and 20 to Bob", "transfer_money"),
]


@pytest.mark.parametrize(
    "text",
    ["and in Rome?", "what about Lyon", "do it again", "book a table there", "same for tomorrow"],
)
def test_continuations_refer_back(text):
    assert refers_back(text)


@pytest.mark.parametrize(
    "text",
    [
        "play some jazz",
        "turn on the kitchen lights",
        "convert 20 euros to yen",
        "is it raining in Oslo? also convert 100 dollars to euros",  # a pronoun alone is not enough
        "send that file to Bob",
    ],
)
def test_new_requests_do_not_refer_back(text):
    assert not refers_back(text)


def test_the_query_is_the_latest_message_whole_and_context_is_separate():
    long = "summarise " + "word " * 3_000
    chat = [HumanMessage("first request"), AIMessage("ok"), HumanMessage(long)]
    assert conversation_query(chat) == " ".join(long.split())  # no adapter cut: the engine's rule applies
    assert follow_up_query(chat).endswith("(context: first request)")
    assert follow_up_query(chat[:1]) is None and conversation_query([AIMessage("hi")]) is None


@pytest.fixture(scope="module")
def agent_tools(embedder):
    """The fifty invented tools and a knowledge base over them."""
    tools = registry50.registry()
    return tools, ToolIndex.from_tools(tools, embedder=embedder).kb


@pytest.mark.parametrize(("first", "follow_up", "tool"), FOLLOW_UPS)
def test_with_k_auto_the_middleware_gives_a_follow_up_the_earlier_turns_tool(agent_tools, first, follow_up, tool):
    # issue 41: the follow-up alone matches no tool well, and the carried set was sized by its own
    # k="auto" result (empty when the floor empties it): the earlier turn's tool had no place.
    tools, kb = agent_tools
    model = ScriptedChatModel(replies=["Done."])
    agent = create_agent(model, tools=tools, middleware=[ToolSelectionMiddleware(k="auto", knowledge_base=kb)])
    agent.invoke({"messages": [HumanMessage(first), AIMessage("Done."), HumanMessage(follow_up)]})
    assert tool in model.calls[0].tool_names and len(model.calls[0].tool_names) <= 5


@pytest.mark.parametrize(("first", "follow_up", "tool"), FOLLOW_UPS)
def test_with_k_auto_the_retrieval_node_gives_a_follow_up_the_earlier_turns_tool(agent_tools, first, follow_up, tool):
    _, kb = agent_tools
    node = create_tool_retrieval_node(kb, k="auto")
    selected = node.invoke({"messages": [HumanMessage(first), AIMessage("Done."), HumanMessage(follow_up)]})
    assert tool in selected["selected_tools"] and len(selected["selected_tools"]) <= 5
