"""Agentic tool search over 650 tools: the model searches, found tools stay bound (LRU, capped).

    python examples/langchain_agentic.py
    python examples/langchain_agentic.py --model openai:gpt-4o-mini

``langchain_toolret.create_tool_search_agent`` gives the model a ``search_tools`` tool whose answer lists
tool names with one-line descriptions; tools it finds are bound from its next call on. Each
new user message is seeded with a pre-retrieval, so simple requests need no search at all.
The bound set lives in the agent state (``selected_tool_ids``, checkpointed with the
conversation) and never exceeds ``max_tools``: the least recently used tool is evicted.
"""

from __future__ import annotations

import argparse
import sys

from langchain_core.messages import AIMessage
from langchain_stdlib_tools import chat_model, model_argument, stdlib_langchain_tools
from langgraph.checkpoint.memory import InMemorySaver

from langchain_toolret import create_tool_search_agent
from langchain_toolret.testing import ModelCall, ScriptedChatModel, tool_call

TURNS = [
    ("How many days does February 2028 have?", "calendar_monthrange", {"year": 2028, "month": 2}),
    ("Give me a random integer between 1 and 6.", "random_randint", {"a": 1, "b": 6}),
    (
        "Which word in ['graph', 'giraffe', 'grape'] is most similar to 'grap'? Search for a tool if needed.",
        "difflib_get_close_matches",
        {"word": "grap", "possibilities": ["graph", "giraffe", "grape"]},
    ),
]


def scripted_model() -> ScriptedChatModel:
    """A scripted policy: use the tool the request needs when bound, else search for it; answer
    once a tool has run."""

    def policy(call: ModelCall) -> AIMessage:
        last = call.messages[-1]
        request = next(m for m in reversed(call.messages) if m.type == "human").text
        name, args = next((n, a) for r, n, a in TURNS if r == request)
        if last.type == "tool" and last.name != "search_tools":
            return AIMessage(f"Result: {last.content}")
        if name in call.tool_names:
            return tool_call(name, **args)
        return tool_call("search_tools", query=name.split("_", 1)[1].replace("_", " "))

    return ScriptedChatModel(default=policy)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    model_argument(parser)
    args = parser.parse_args(argv)
    tools = stdlib_langchain_tools()
    scripted = scripted_model()
    agent = create_tool_search_agent(
        chat_model(args.model, scripted),
        tools,
        max_tools=4,
        seed_k=2,
        search_k=3,
        system_prompt="Answer with the tools. Be brief.",
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "agentic-demo"}}
    print(f"{len(tools)} tools; at most 4 bound at a time (plus search_tools). Indexing on the first call...")
    for request, _, _ in TURNS:
        out = agent.invoke({"messages": [("user", request)]}, config)
        print(f"\n> {request}")
        for message in out["messages"][-4:]:
            if message.type == "tool":
                print(f"   tool {message.name} -> {message.content[:120]!r}")
        print(f"   answer: {out['messages'][-1].text}")
        print(f"   bound now (least recently used first): {agent.get_state(config).values['selected_tool_ids']}")
    if not args.model:
        print("\nTools offered at each model call:")
        for i, call in enumerate(scripted.calls, 1):
            print(f"   call {i}: {call.tool_names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
