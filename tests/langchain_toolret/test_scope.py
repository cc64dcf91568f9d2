"""A per-request tool scope from the runtime context, in real create_agent runs (only the model is scripted)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool

from langchain_toolret import ToolSelectionMiddleware
from langchain_toolret.testing import ScriptedChatModel, tool_call
from toolret import ScopeError, ToolScope


def _read_file(path: str) -> str:
    """Read the contents of a file."""
    return f"contents of {path}"


def _delete_file(path: str) -> str:
    """Delete a file permanently."""
    return f"deleted {path}"


def _shred_file(path: str) -> str:
    """Securely delete and overwrite a file so it cannot be recovered."""
    return f"shredded {path}"


def _create_invoice(customer: str, amount: float) -> str:
    """Create an invoice for a customer."""
    return "invoice created"


def _tool(fn, **options) -> StructuredTool:
    return StructuredTool.from_function(fn, name=fn.__name__.lstrip("_"), **options)


# As langchain-mcp-adapters loads MCP tools: the server's annotations in the tool's metadata.
read_file = _tool(_read_file, metadata={"annotations": {"readOnlyHint": True}, "mcp_server": "files"})
delete_file = _tool(_delete_file, metadata={"annotations": {"destructiveHint": True}, "mcp_server": "files"})
shred_file = _tool(_shred_file, metadata={"annotations": {"destructiveHint": True}, "mcp_server": "files"})
create_invoice = _tool(_create_invoice, tags=["finance"])

TOOLS = [read_file, delete_file, shred_file, create_invoice]
READ_ONLY = {"read_file"}


@dataclass
class Ctx:
    tool_scope: ToolScope


def _agent(replies, **options):
    model = ScriptedChatModel(replies=replies)
    middleware = ToolSelectionMiddleware(scope="tool_scope", **options)
    return create_agent(model, tools=TOOLS, middleware=[middleware], context_schema=Ctx), model


def test_the_model_is_offered_only_tools_in_the_users_scope():
    agent, model = _agent(["Done."], k=3)
    agent.invoke({"messages": [HumanMessage("delete the file a.txt")]}, context=Ctx(ToolScope(read_only=True)))
    assert model.calls[0].tool_names == ["read_file"]
    agent.invoke({"messages": [HumanMessage("delete the file a.txt")]}, context=Ctx(ToolScope(sources=["files"])))
    assert set(model.calls[1].tool_names) == {"read_file", "delete_file", "shred_file"}  # another user, another scope


def test_the_search_draws_k_in_scope_tools_not_a_short_post_filtered_list():
    agent, model = _agent(["Done."], k=2)
    agent.invoke({"messages": [HumanMessage("remove the file a.txt")]}, context=Ctx(ToolScope(tags=["finance"])))
    assert model.calls[0].tool_names == ["create_invoice"]  # the only tool in scope, though it matches badly
    agent.invoke(
        {"messages": [HumanMessage("remove the file a.txt")]},
        context=Ctx(ToolScope(sources=["files"], destructive=True)),
    )
    assert set(model.calls[1].tool_names) == {"delete_file", "shred_file"}


def test_the_fallback_on_a_failure_never_offers_a_tool_outside_the_scope(caplog):
    agent, model = _agent(["Done."], k=3, query_builder=lambda messages: 1 / 0)  # selection fails
    with caplog.at_level(logging.WARNING, logger="toolret"):
        agent.invoke({"messages": [HumanMessage("delete a.txt")]}, context=Ctx(ToolScope(read_only=True)))
    assert "tool selection failed" in caplog.text
    assert model.calls[0].tool_names == ["read_file"]  # fallback "all" means all in scope


def test_a_call_to_a_tool_outside_the_scope_is_refused_and_not_run():
    agent, model = _agent([tool_call("delete_file", path="a.txt"), "Done."], k=3)
    out = agent.invoke({"messages": [HumanMessage("read a.txt")]}, context=Ctx(ToolScope(read_only=True)))
    refused = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert refused.status == "error" and "not available" in refused.content and "deleted" not in refused.content


def test_the_search_tool_searches_within_the_scope():
    agent, model = _agent([tool_call("search_tools", query="delete or shred a file"), "Done."], k=1, search_tool=True)
    out = agent.invoke({"messages": [HumanMessage("read a.txt")]}, context=Ctx(ToolScope(read_only=True)))
    found = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert found.artifact == ["read_file"] and "delete_file" not in found.content and "shred" not in found.content
    assert set(model.calls[1].tool_names) <= {"read_file", "search_tools"}


def test_a_context_without_the_scope_is_an_error_never_no_scope():
    model = ScriptedChatModel(replies=["Done."])
    agent = create_agent(model, tools=TOOLS, middleware=[ToolSelectionMiddleware(k=3, scope="tool_scope")])
    with pytest.raises(ScopeError, match="tool_scope"):
        agent.invoke({"messages": [HumanMessage("read a.txt")]})
    assert model.calls == []


def test_a_scope_field_given_as_none_is_an_error_never_every_tool():
    model = ScriptedChatModel(replies=["Done."])
    middleware = ToolSelectionMiddleware(k=3, scope="tool_scope")
    agent = create_agent(model, tools=TOOLS, middleware=[middleware])
    with pytest.raises(ScopeError, match="'tags'.*None"):
        agent.invoke({"messages": [HumanMessage("delete a.txt")]}, context={"tool_scope": {"tags": None}})
    assert model.calls == []  # the model was never offered delete_file (or anything)
    with pytest.raises(ScopeError, match="'read_only'"):
        ToolSelectionMiddleware(k=3, scope={"read_only": None})


async def test_async_runs_keep_to_the_scope_too():
    agent, model = _agent(["Done."], k=3)
    await agent.ainvoke({"messages": [HumanMessage("delete the file a.txt")]}, context=Ctx(ToolScope(read_only=True)))
    assert model.calls[0].tool_names == ["read_file"]


def test_a_function_of_the_context_or_a_fixed_scope_are_accepted():
    model = ScriptedChatModel(replies=["Done."])
    by_user = ToolSelectionMiddleware(k=3, scope=lambda ctx: {"read_only": True} if ctx["user"] == "guest" else None)
    agent = create_agent(model, tools=TOOLS, middleware=[by_user])
    agent.invoke({"messages": [HumanMessage("delete a.txt")]}, context={"user": "guest"})
    assert model.calls[0].tool_names == ["read_file"]
    with pytest.raises(ScopeError, match="'server_name'"):
        ToolSelectionMiddleware(k=3, scope={"server_name": "files"})


def _graph(model, *, always_include=()):
    from langgraph.graph import START, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from langchain_toolret import ToolRetrievalState, create_model_node, create_tool_retrieval_node

    builder = StateGraph(ToolRetrievalState, context_schema=Ctx)
    builder.add_node(
        "select_tools", create_tool_retrieval_node(TOOLS, k=2, scope="tool_scope", always_include=always_include)
    )
    builder.add_node("agent", create_model_node(model, TOOLS, scope="tool_scope"))
    builder.add_node("tools", ToolNode(TOOLS))
    builder.add_edge(START, "select_tools")
    builder.add_edge("select_tools", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def test_the_langgraph_nodes_select_and_bind_only_tools_in_the_scope():
    model = ScriptedChatModel(replies=["Done."])
    out = _graph(model, always_include=["delete_file"]).invoke(
        {"messages": [HumanMessage("delete the file a.txt")]}, context=Ctx(ToolScope(read_only=True))
    )
    assert out["selected_tools"] == ["read_file"]  # drawn from the scope; always_include outside it is dropped
    assert model.calls[0].tool_names == ["read_file"]


async def test_the_model_node_binds_nothing_outside_the_scope_whatever_the_state_names():
    from langgraph.graph import START, StateGraph

    from langchain_toolret import ToolRetrievalState, create_model_node

    model = ScriptedChatModel(replies=["Done."])
    builder = StateGraph(ToolRetrievalState, context_schema=Ctx)
    builder.add_node("agent", create_model_node(model, TOOLS, scope="tool_scope"))
    builder.add_edge(START, "agent")
    state = {"messages": [HumanMessage("delete a.txt")], "selected_tools": ["delete_file", "read_file"]}
    await builder.compile().ainvoke(state, context=Ctx(ToolScope(read_only=True)))
    assert model.calls[0].tool_names == ["read_file"]


def test_the_scoped_agent_example_runs(capsys):
    import runpy
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "scoped_agent.py"
    offered = runpy.run_path(str(example))["main"]()
    assert set(offered["admin"]) == {"delete_file", "read_file"}
    assert set(offered["support"]) <= {"list_invoices", "refund_invoice"}
    assert set(offered["guest"]) <= {"read_file", "list_invoices"}
    out = capsys.readouterr().out
    assert out.count("\"Tool 'delete_file' is not available.\"") == 2


def test_the_agentic_mode_searches_and_binds_within_the_scope():
    from langchain_toolret import create_tool_search_agent

    model = ScriptedChatModel(replies=[tool_call("search_tools", query="delete or shred a file"), "Done."])
    agent = create_tool_search_agent(model, TOOLS, seed_k=2, scope="tool_scope", context_schema=Ctx)
    out = agent.invoke({"messages": [HumanMessage("get rid of a.txt")]}, context=Ctx(ToolScope(read_only=True)))
    found = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert found.artifact == ["read_file"]
    assert all(set(call.tool_names) <= {"read_file", "search_tools"} for call in model.calls)


async def test_the_retriever_takes_a_scope_per_call():
    from langchain_toolret import ToolRetriever

    retriever = ToolRetriever.from_tools(TOOLS, k=2)
    assert {d.metadata["name"] for d in retriever.invoke("delete the file a.txt")} == {"delete_file", "shred_file"}
    scoped_docs = retriever.invoke("delete the file a.txt", where={"read_only": True})
    assert [d.metadata["name"] for d in scoped_docs] == ["read_file"]
    assert [t.name for t in await retriever.aget_tools("delete a.txt", where={"tags": ["finance"]})] == [
        "create_invoice"
    ]
