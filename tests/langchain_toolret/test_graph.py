"""build_tool_retrieval_graph: the engine's own stages as graph nodes, standalone and as a subgraph."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_toolret import (
    ChatModelLLM,
    ToolRetrievalState,
    build_tool_retrieval_graph,
    create_model_node,
)
from langchain_toolret.testing import ScriptedChatModel, tool_call
from toolret import QueryError, RetrievalConfig

MULTI = "what's the weather in Paris, then email Bob the forecast and book a flight to Rome"
REFLECTING = RetrievalConfig.preset("balanced").model_copy(update={"reflect_rounds": 2, "coverage_threshold": 1.0})


def _visits(graph, state) -> list[str]:
    return [node for update in graph.stream(state, stream_mode="updates") for node in update]


@pytest.mark.parametrize("config", ["fast", "balanced", REFLECTING], ids=["fast", "balanced", "reflecting"])
@pytest.mark.parametrize("query", [MULTI, "convert 20 euros to yen", "remind me to call mom at 5pm"])
def test_the_graph_returns_what_search_returns(tool_index, config, query):
    graph = build_tool_retrieval_graph(tool_index, k=4, config=config)
    out = graph.invoke({"query": query})
    expected = tool_index.kb.search(query, 4, config=config)
    assert [(t.id, t.score, t.subtask) for t in out["result"].tools] == [
        (t.id, t.score, t.subtask) for t in expected.tools
    ]
    assert [s.stage for s in out["trace"]] == [s.stage for s in expected.trace]
    assert out["selected_tools"] == [t.name for t in expected.tools]


def test_nodes_are_the_phases_and_reflection_loops_back_within_its_bound(tool_index):
    graph = build_tool_retrieval_graph(tool_index, k=3, config=REFLECTING)
    assert {"plan", "retrieve", "fuse", "rerank", "reflect", "requery"} <= set(graph.get_graph().nodes)
    visits = _visits(graph, {"query": MULTI})
    assert visits == [
        "begin",
        "plan",
        "retrieve",
        "fuse",
        "rerank",
        "reflect",
        "requery",
        "reflect",
        "requery",
        "reflect",
        "finish",
    ]
    one_round = RetrievalConfig.preset("balanced").model_copy(update={"reflect_rounds": 1, "coverage_threshold": 1.0})
    assert (
        _visits(build_tool_retrieval_graph(tool_index, k=3, config=one_round), {"query": MULTI}).count("requery") == 1
    )
    no_reflection = _visits(build_tool_retrieval_graph(tool_index, k=3, config="fast"), {"query": MULTI})
    assert no_reflection.count("retrieve") == 1 and "requery" not in no_reflection
    assert no_reflection[-2:] == ["reflect", "finish"]


def test_as_a_subgraph_of_a_parent_agent_graph_with_a_checkpointer(tool_index, tools):
    model = ScriptedChatModel(
        replies=[tool_call("book_flight", origin="CDG", destination="FCO", date="2025-06-03"), "Booked.", "Done."]
    )
    builder = StateGraph(ToolRetrievalState)
    builder.add_node(
        "select_tools", build_tool_retrieval_graph(tool_index, k=2, config="balanced", always_include=["ask_user"])
    )
    builder.add_node("agent", create_model_node(model, tools))
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "select_tools")
    builder.add_edge("select_tools", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    parent = builder.compile(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "p"}}

    out = parent.invoke({"messages": [HumanMessage("book me a flight from Paris to Rome on June 3")]}, thread)
    assert out["selected_tools"][0] == "ask_user" and "book_flight" in out["selected_tools"]
    assert model.calls[0].tool_names == out["selected_tools"]
    assert any(isinstance(m, ToolMessage) and "booked" in m.content for m in out["messages"])
    assert not any(k in out for k in ("trace", "result", "search"))  # only shared keys flow back
    out = parent.invoke({"messages": [HumanMessage("what is ACME's stock price?")]}, thread)
    assert "get_stock_price" in out["selected_tools"] and "book_flight" not in out["selected_tools"]
    assert len(out["messages"]) == 6  # the subgraph adds no messages of its own


async def test_async_invoke_and_a_conversation_input(tool_index):
    graph = build_tool_retrieval_graph(tool_index, k=1)
    chat = [HumanMessage("what's the weather in Oslo?"), AIMessage("Cold."), HumanMessage("and in Rome?")]
    out = await graph.ainvoke({"messages": chat})
    assert out["selected_tools"] == ["get_weather"]
    with pytest.raises(QueryError, match="neither a query nor a user message"):
        await graph.ainvoke({"messages": [AIMessage("hello")]})


def test_full_preset_runs_the_llm_steps_through_the_chat_model(tool_index):
    plan = {
        "rewritten": "weather in Paris and convert 20 euros to yen",
        "step_back": None,
        "subtasks": [
            {"text": "weather forecast in Paris", "variants": [], "tool_description": "current weather for a city"},
            {"text": "convert 20 euros to yen", "variants": [], "tool_description": "currency conversion"},
        ],
    }

    def script():
        return ScriptedChatModel.structured([plan] + [ConnectionError("down")] * 8)

    model, twin = script(), script()
    query = "wether in paris and 20 eur in yen"
    graph = build_tool_retrieval_graph(tool_index, k=2, config="full", llm=model)
    out = graph.invoke({"query": query})
    assert tool_index.kb.llm is None  # the graph's model is its own; the shared knowledge base is unchanged
    expected = tool_index.kb.search(query, 2, config="full", llm=ChatModelLLM(twin))
    paths = {s.stage: s.path for s in out["trace"]}
    assert paths["plan"] == "llm" and paths["rerank"] == "fallback"
    assert "wether in paris" in model.calls[0].messages[-1].content
    assert out["result"].ids == expected.ids and "get_weather" in out["selected_tools"]
    assert [(s.stage, s.path) for s in out["trace"]] == [(s.stage, s.path) for s in expected.trace]
    assert len(model.calls) == len(twin.calls)


def test_a_messages_state_parent_is_refused_when_the_graph_is_built(tool_index):
    from langgraph.graph import MessagesState

    from toolret import ConfigError

    with pytest.raises(ConfigError, match=r"MessagesState\) has no 'selected_tools' key"):
        build_tool_retrieval_graph(tool_index, parent=MessagesState)
    with pytest.raises(ConfigError, match="no 'selected_tools' key"):
        build_tool_retrieval_graph(tool_index, parent=StateGraph(MessagesState))
    build_tool_retrieval_graph(tool_index, parent=StateGraph(ToolRetrievalState))  # fine


def test_an_over_long_query_is_shortened_and_traced_not_refused(tool_index):
    graph = build_tool_retrieval_graph(tool_index, k=1)
    out = graph.invoke({"query": "what's the weather in Paris? " * 400})
    assert out["selected_tools"] == ["get_weather"] and out["trace"][0].stage == "query_text"


def test_a_short_new_request_is_not_read_with_the_previous_one(tool_index):
    graph = build_tool_retrieval_graph(tool_index, k=2)
    chat = [HumanMessage("what's the weather in Oslo?"), AIMessage("Cold."), HumanMessage("translate hello to Czech")]
    out = graph.invoke({"messages": chat})
    assert out["selected_tools"][0] == "translate_text" and "get_weather" not in out["selected_tools"]


def test_a_selected_tool_that_cannot_be_bound_is_left_out_with_a_trace_step(unbindable_index):
    out = build_tool_retrieval_graph(unbindable_index, k=3).invoke({"query": "please check a thing for me"})
    assert "check_thing" not in out["selected_tools"] and len(out["selected_tools"]) == 2
    assert out["trace"][-1].stage == "definitions" and "check_thing (KeyError" in out["trace"][-1].note


def test_the_graph_refuses_an_always_include_name_it_does_not_have(tool_index):
    from toolret import ConfigError

    graph = build_tool_retrieval_graph(tool_index, k=2, always_include=["read_fil"])
    with pytest.raises(ConfigError, match=r"tool_retrieval graph.*\['read_fil'\]"):
        graph.invoke({"query": "what is the weather in Paris?"})
