"""The retrieval phases as a LangGraph subgraph: watch plan → retrieve → fuse → rerank → reflect.

    python examples/langgraph_subgraph.py
    python examples/langgraph_subgraph.py --model openai:gpt-4o-mini   # LLM planning/rerank (preset "full")

``build_tool_retrieval_graph`` compiles the engine's own stages into graph nodes, with the
reflection loop (re-query the sub-tasks no selected tool covers) as a conditional edge back
to ``retrieve``. The example streams one multi-part request through it node by node, prints
the engine's trace, then runs the same subgraph as the selector node of a parent agent graph.
"""

from __future__ import annotations

import argparse
import sys

from langchain_core.messages import AIMessage
from langchain_stdlib_tools import chat_model, model_argument, stdlib_langchain_tools
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_toolret import (
    ToolIndex,
    ToolRetrievalState,
    build_tool_retrieval_graph,
    create_model_node,
)
from langchain_toolret.testing import ModelCall, ScriptedChatModel, tool_call

REQUEST = "compute the factorial of 10, then encode the result as hexadecimal and get its sha256 hash"


def scripted_model() -> ScriptedChatModel:
    def act(call: ModelCall) -> AIMessage:
        return tool_call("math_factorial", n=10) if "math_factorial" in call.tool_names else AIMessage("No tool.")

    return ScriptedChatModel(replies=[act, "10! = 3628800; the other steps would follow."])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    model_argument(parser)
    args = parser.parse_args(argv)
    tools = stdlib_langchain_tools()
    index = ToolIndex.from_tools(tools)
    model = chat_model(args.model, scripted_model())
    # "balanced": offline planning into sub-tasks, fusion and one offline reflection round.
    # With a real model, "full" plans, reranks and judges coverage with it.
    retrieval = build_tool_retrieval_graph(
        index, k=6, config="full" if args.model else "balanced", llm=model if args.model else None
    )

    print(f"> {REQUEST}\n\nNodes visited:")
    final = {}
    for update in retrieval.stream({"query": REQUEST}, stream_mode="updates"):
        for node, values in update.items():
            print(f"   {node}")
            final.update(values or {})
    print("\nEngine trace:")
    for step in final["trace"]:
        print(f"   {step.stage:<12} {step.path:<8} {step.ms:7.1f} ms  {step.note}")
    print("\nSelected:")
    for tool in final["result"].tools:
        print(f"   {tool.name:<28} score={tool.score:.3f}  sub-task: {tool.subtask}")

    builder = StateGraph(ToolRetrievalState)
    builder.add_node("select_tools", retrieval)  # the compiled subgraph is a node
    builder.add_node("agent", create_model_node(model, tools))
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "select_tools")
    builder.add_edge("select_tools", "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    out = builder.compile().invoke({"messages": [("user", REQUEST)]})
    print(f"\nAs a subgraph of an agent: bound {out['selected_tools']}\n   answer: {out['messages'][-1].text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
