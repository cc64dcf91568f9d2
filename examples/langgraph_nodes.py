"""A LangGraph agent over 650 tools: a retrieval node picks, the model node binds only those.

    python examples/langgraph_nodes.py                          # offline, scripted model
    python examples/langgraph_nodes.py --model openai:gpt-4o-mini

The graph is the standard LangGraph tool loop with one node in front::

    START -> select_tools -> agent <-> tools
                                   -> END

``select_tools`` writes the retrieved tool names into ``state["selected_tools"]``; ``agent``
binds only those (``bind_tools``); the ``ToolNode`` knows all 650, so whatever the model calls
runs. The selection happens once per user message, before the tool loop.
"""

from __future__ import annotations

import argparse
import sys
import time

from langchain_core.messages import AIMessage
from langchain_stdlib_tools import chat_model, model_argument, stdlib_langchain_tools
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_toolret import (
    ToolIndex,
    ToolRetrievalState,
    create_model_node,
    create_tool_retrieval_node,
)
from langchain_toolret.testing import ModelCall, ScriptedChatModel, tool_call

REQUESTS = [
    ("What is the median of 3, 9, 4, 7 and 12?", "statistics_median", {"data": [3, 9, 4, 7, 12]}),
    (
        "Wrap 'the quick brown fox jumps over the lazy dog' to lines of at most 15 characters.",
        "textwrap_wrap",
        {"text": "the quick brown fox jumps over the lazy dog", "width": 15},
    ),
    ("Is 2024 a leap year?", "calendar_isleap", {"year": 2024}),
]


def scripted_model() -> ScriptedChatModel:
    """Calls the expected tool when the selector bound it, then answers with its result."""
    replies = []
    for _, name, args in REQUESTS:

        def act(call: ModelCall, name: str = name, args: dict = args) -> AIMessage:
            return tool_call(name, **args) if name in call.tool_names else AIMessage(f"{name} was not offered.")

        def answer(call: ModelCall) -> AIMessage:
            return AIMessage(f"The tool says: {call.messages[-1].content}")

        replies += [act, answer]
    return ScriptedChatModel(replies=replies)


def build_graph(index: ToolIndex, model, tools):
    builder = StateGraph(ToolRetrievalState)
    builder.add_node("select_tools", create_tool_retrieval_node(index, k=4))
    builder.add_node("agent", create_model_node(model, tools, system_prompt="Use the tools. Be brief."))
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "select_tools")
    builder.add_edge("select_tools", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    model_argument(parser)
    args = parser.parse_args(argv)
    tools = stdlib_langchain_tools()
    start = time.perf_counter()
    index = ToolIndex.from_tools(tools)
    print(f"Indexed {len(tools)} tools in {time.perf_counter() - start:.0f}s")
    graph = build_graph(index, chat_model(args.model, scripted_model()), tools)
    for request, _, _ in REQUESTS:
        out = graph.invoke({"messages": [("user", request)]})
        print(f"\n> {request}\n   selected: {out['selected_tools']}")
        for message in out["messages"][1:]:
            if message.type == "tool":
                print(f"   tool {message.name} -> {message.content[:80]}")
        print(f"   answer: {out['messages'][-1].text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
