"""The retrieval node and the model node inside real compiled LangGraph graphs."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_toolret import (
    ToolRetrievalState,
    ToolRetriever,
    create_model_node,
    create_tool_retrieval_node,
)
from langchain_toolret.testing import ScriptedChatModel, tool_call
from toolret import QueryError


def _graph(source, model, tools, **node_options):
    builder = StateGraph(ToolRetrievalState)
    builder.add_node("select_tools", create_tool_retrieval_node(source, **node_options))
    builder.add_node("agent", create_model_node(model, tools, system_prompt="You are a helpful assistant."))
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "select_tools")
    builder.add_edge("select_tools", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def test_worked_graph_binds_only_the_selected_tools_and_runs_them(tool_index, tools):
    model = ScriptedChatModel(replies=[tool_call("get_stock_price", ticker="ACME"), "ACME trades at 123.45."])
    graph = _graph(tool_index, model, tools, k=2)
    out = graph.invoke({"messages": [HumanMessage("what is ACME's share price right now?")]})
    assert out["selected_tools"][0] == "get_stock_price" and len(out["selected_tools"]) == 2
    assert model.calls[0].tool_names == out["selected_tools"]
    assert model.calls[1].tool_names == out["selected_tools"]  # selected once, before the loop
    assert model.calls[0].messages[0].content == "You are a helpful assistant."
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert result.content == "ACME: 123.45 USD"
    assert out["messages"][-1].content == "ACME trades at 123.45."


async def test_async_graph_with_a_retriever_source(tool_index, tools):
    model = ScriptedChatModel(replies=[tool_call("translate_text", text="thanks", target_language="de"), "Danke."])
    graph = _graph(ToolRetriever(tool_index), model, tools, k=1, always_include=["ask_user"])
    out = await graph.ainvoke({"messages": [HumanMessage("translate 'thanks' into German")]})
    assert out["selected_tools"] == ["ask_user", "translate_text"]
    assert model.calls[0].tool_names == ["ask_user", "translate_text"]
    assert any(isinstance(m, ToolMessage) and m.content == "[de] thanks" for m in out["messages"])


def test_node_over_a_knowledge_base_writes_names_and_reads_the_conversation(tool_index):
    node = create_tool_retrieval_node(tool_index.kb, k=1, key="picked", messages_key="chat")
    chat = [HumanMessage("what's the weather in Oslo?"), AIMessage("Cold."), HumanMessage("and in Rome?")]
    assert node.invoke({"chat": chat}) == {"picked": ["get_weather"]}
    with pytest.raises(QueryError, match="no user message in state\\['chat'\\]"):
        node.invoke({"chat": [AIMessage("Hello!")]})  # nothing to select for: an error, not []


def test_node_indexes_a_tool_list_once(tools):
    node = create_tool_retrieval_node(tools[:4], k=1)
    assert node.invoke({"messages": [HumanMessage("email the report to Ann")]}) == {"selected_tools": ["send_email"]}


def test_model_node_ignores_unknown_ids_and_binds_nothing_for_an_empty_selection(tools):
    model = ScriptedChatModel(replies=["a", "b"])
    node = create_model_node(model, tools)
    node.invoke({"messages": [HumanMessage("hi")], "selected_tools": ["no_such_tool", "read_file"]})
    node.invoke({"messages": [HumanMessage("hi")], "selected_tools": []})
    assert model.calls[0].tool_names == ["read_file"] and model.calls[1].tools == []


def test_model_node_in_a_plain_messages_state_graph_selects_the_turns_tools(tools):
    from langgraph.graph import MessagesState

    model = ScriptedChatModel(replies=[tool_call("get_weather", city="Oslo"), "Cold."])
    builder = StateGraph(MessagesState)
    builder.add_node("agent", create_model_node(model, tools, k=2))
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    out = builder.compile().invoke({"messages": [HumanMessage("what's the weather in Oslo?")]})
    assert model.calls[0].tool_names[0] == "get_weather" and len(model.calls[0].tools) == 2
    assert out["messages"][-1].content == "Cold."


async def test_model_node_selects_on_the_async_path_too(tools):
    model = ScriptedChatModel(replies=["ok"])
    await create_model_node(model, tools, k=1).ainvoke({"messages": [HumanMessage("translate hello into French")]})
    assert model.calls[0].tool_names == ["translate_text"]


def test_selector_node_over_a_long_pasted_request_uses_the_engine_rule(tool_index):
    import base64
    import os

    node = create_tool_retrieval_node(tool_index, k=1)
    pasted = "Please translate this letter into German: " + base64.b64encode(os.urandom(9_000)).decode()
    assert len(pasted) > 12_000
    assert node.invoke({"messages": [HumanMessage(pasted)]}) == {"selected_tools": ["translate_text"]}


def test_config_is_the_only_preset_keyword(tool_index):
    # the pre-release name preset= is gone: a clear TypeError, never silently ignored
    with pytest.raises(TypeError, match="preset"):
        create_tool_retrieval_node(tool_index, preset="fast")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="preset"):
        ToolRetriever.from_tools([], preset="fast")  # type: ignore[call-arg]


def test_the_selector_nodes_choice_is_a_child_run_with_scores_and_trace(tool_index):
    from langchain_core.tracers.context import collect_runs

    node = create_tool_retrieval_node(tool_index, k=2)
    with collect_runs() as collected:
        node.invoke({"messages": [HumanMessage("email the report to Ann")]})
    (root,) = collected.traced_runs
    (child,) = [r for r in root.child_runs if r.name == "tool_selection"]
    assert child.outputs["tools"][0] == "send_email" and set(child.outputs["scores"]) == set(child.outputs["tools"])
    assert child.outputs["query"] == "email the report to Ann" and child.outputs["trace"]


def test_a_selected_tool_that_cannot_be_bound_is_left_out_of_the_selection_and_the_binding(
    tools, unbindable, unbindable_index, caplog
):
    """Issue 25, item 4: a dangling $ref in one tool's schema must not end the graph's turn."""
    import logging

    from langgraph.graph import MessagesState

    everything = [*tools, unbindable]
    model = ScriptedChatModel(replies=["Checked.", "Checked again.", "Checked a third time."])
    with caplog.at_level(logging.WARNING, logger="toolret"):
        out = _graph(unbindable_index, model, everything, k=3).invoke(
            {"messages": [HumanMessage("please check a thing for me")]}
        )
        assert "check_thing" not in out["selected_tools"] and len(out["selected_tools"]) == 2
        assert "'check_thing' cannot be bound (KeyError" in caplog.text
        # A selection written elsewhere (or a plain MessagesState graph's own) never binds it either.
        node = create_model_node(model, everything)
        node.invoke({"messages": [HumanMessage("check it")], "selected_tools": ["check_thing", "read_file"]})
        builder = StateGraph(MessagesState)
        builder.add_node("agent", create_model_node(model, everything, cards=unbindable_index, k=3))
        builder.add_edge(START, "agent")
        builder.compile().invoke({"messages": [HumanMessage("please check a thing for me")]})
    assert model.calls[0].tool_names == out["selected_tools"]
    assert model.calls[1].tool_names == ["read_file"] and "model node: tool 'check_thing'" in caplog.text
    assert "check_thing" not in model.calls[2].tool_names and len(model.calls[2].tools) == 2


def test_a_misspelt_always_include_name_is_an_error_not_a_tool_the_model_quietly_lacks(tool_index):
    from toolret import ConfigError

    chat = {"messages": [HumanMessage("what's the weather in Oslo?")]}
    assert create_tool_retrieval_node(tool_index.kb, k=1, always_include=["ask_user"]).invoke(chat) == {
        "selected_tools": ["ask_user", "get_weather"]
    }
    with pytest.raises(ConfigError, match=r"\['ask_usr'\]"):
        create_tool_retrieval_node(tool_index.kb, k=1, always_include=["ask_usr"]).invoke(chat)


def test_a_retriever_source_brings_its_k_and_budget_to_the_node_and_the_graph(tool_index):
    from langchain_toolret import build_tool_retrieval_graph

    ask = {"messages": [HumanMessage("what is ACME's share price right now?")]}
    two = ToolRetriever(tool_index, k=2)
    assert len(create_tool_retrieval_node(two).invoke(ask)["selected_tools"]) == 2
    assert len(build_tool_retrieval_graph(two).invoke(ask)["selected_tools"]) == 2
    assert len(create_tool_retrieval_node(two, k=3).invoke(ask)["selected_tools"]) == 3  # given here: it wins
    auto = ToolRetriever(tool_index, k="auto")
    expected = [t.name for t in auto.search("what is ACME's share price right now?").tools]
    assert create_tool_retrieval_node(auto).invoke(ask)["selected_tools"] == expected
    tight = ToolRetriever(tool_index, k=5, token_budget=120)
    fitted = [t.name for t in tight.search("what is ACME's share price right now?").tools]
    assert 0 < len(fitted) < 5
    assert create_tool_retrieval_node(tight).invoke(ask)["selected_tools"] == fitted


# ---------------------------------------------------------------------------- cache-stable selections
def _threaded_graph(source, model, tools, **node_options):
    from dataclasses import dataclass

    from langgraph.checkpoint.memory import InMemorySaver

    from toolret import ToolScope

    @dataclass
    class Ctx:
        tool_scope: ToolScope

    builder = StateGraph(ToolRetrievalState, context_schema=Ctx)
    builder.add_node("select_tools", create_tool_retrieval_node(source, **node_options))
    builder.add_node("agent", create_model_node(model, tools))
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "select_tools")
    builder.add_edge("select_tools", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=InMemorySaver()), Ctx


THREAD = {"configurable": {"thread_id": "t1"}}
TURNS = ["what's the weather in Oslo?", "convert 20 euros to yen", "e-mail bob the result", "ACME's share price?"]


def _bound(model):
    return [c.tool_names for c in model.calls]


def test_the_selection_only_grows_across_turns_so_the_bound_list_keeps_its_prefix(tool_index, tools):
    model = ScriptedChatModel()
    graph, _ = _threaded_graph(tool_index, model, tools, k=2, always_include=["ask_user"])
    own = []
    for turn in TURNS:
        out = graph.invoke({"messages": [HumanMessage(turn)]}, THREAD)
        own.append([t.name for t in tool_index.search(turn, 2).tools])
        assert set(own[-1]) <= set(out["selected_tools"])  # each turn's own tools are bound
    bound = _bound(model)
    assert all(b[: len(a)] == a for a, b in zip(bound, bound[1:])) and bound[0][0] == "ask_user"
    assert len(bound[-1]) > 3  # it grew
    off = ScriptedChatModel()
    graph, _ = _threaded_graph(tool_index, off, tools, k=2, always_include=["ask_user"], cache_stable=False)
    for turn, mine in zip(TURNS, own):
        expected = list(dict.fromkeys(["ask_user", *mine]))
        assert graph.invoke({"messages": [HumanMessage(turn)]}, THREAD)["selected_tools"] == expected
    assert not any(b[: len(a)] == a for a, b in zip(_bound(off), _bound(off)[1:]))


def test_past_the_cap_the_nodes_list_is_rebuilt_from_the_turns_tools(tool_index, tools):
    model = ScriptedChatModel()
    graph, _ = _threaded_graph(tool_index, model, tools, k=2, cache_cap=4)
    turns = [TURNS[0], TURNS[1], TURNS[3]]
    for turn in turns:
        graph.invoke({"messages": [HumanMessage(turn)]}, THREAD)
    first, second, third = _bound(model)
    assert second[:2] == first and len(second) == 4
    assert third == [t.name for t in tool_index.search(turns[2], 2).tools]


def test_a_scope_change_drops_the_out_of_scope_tools_from_the_nodes_list(embedder):
    from langchain_core.tools import StructuredTool

    from toolret import ToolScope

    def make(name, description, tag):
        return StructuredTool.from_function(lambda request: "done", name=name, description=description, tags=[tag])

    tools = [
        make("book_flight", "Book a plane ticket between two airports.", "travel"),
        make("book_hotel", "Reserve a hotel room in a city.", "travel"),
        make("turn_on_lights", "Turn on the smart lights in a room.", "home"),
        make("play_music", "Play a song, an artist or a genre.", "home"),
    ]
    model = ScriptedChatModel()
    graph, ctx = _threaded_graph(tools, model, tools, k=2, scope="tool_scope")
    graph.invoke({"messages": [HumanMessage("book a flight to Rome")]}, THREAD, context=ctx(ToolScope()))
    assert "book_flight" in model.calls[0].tool_names
    out = graph.invoke(
        {"messages": [HumanMessage("turn on the lights")]}, THREAD, context=ctx(ToolScope(tags=["home"]))
    )
    assert set(out["selected_tools"]) == {"turn_on_lights", "play_music"} == set(model.calls[1].tool_names)
