"""A LangChain agent with 650 tools: ToolSelectionMiddleware hands each model call only a few.

    python examples/langchain_middleware.py                         # offline, scripted model
    python examples/langchain_middleware.py --model openai:gpt-4o-mini

The scripted model calls the tool the request needs when it was offered (else it searches),
so the run shows what the selector offered at every call: the turn's pick is pinned through
the tool loop, a new user message selects again, ``always_include`` tools ride along, and
``search_tools`` lets the model widen its set. Indexing the 650 tools on the first model call
takes about 10 s on two CPU cores; later turns select in milliseconds.
"""

from __future__ import annotations

import argparse
import sys

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_stdlib_tools import chat_model, model_argument, stdlib_langchain_tools
from langgraph.checkpoint.memory import InMemorySaver

from langchain_toolret import ToolSelectionMiddleware
from langchain_toolret.testing import ModelCall, ScriptedChatModel, tool_call

TURNS = [
    "What is the factorial of 12?",
    "In how many ways can I choose 3 books out of 10?",
    (
        "Which of 'ape', 'apple' and 'peach' is closest to the misspelled word 'appel'? "
        "If you lack a suitable tool, search for one."
    ),
]


def _call_if_bound(name: str, **args: object):
    def reply(call: ModelCall) -> AIMessage:
        if name in call.tool_names:
            return tool_call(name, **args)
        return tool_call("search_tools", query=name.replace("_", " "))

    return reply


def scripted_model() -> ScriptedChatModel:
    return ScriptedChatModel(
        replies=[
            _call_if_bound("math_factorial", n=12),
            "12! = 479001600.",
            _call_if_bound("math_comb", n=10, k=3),
            "120 ways.",
            tool_call("search_tools", query="find the closest matching words to a misspelled word"),
            _call_if_bound("difflib_get_close_matches", word="appel", possibilities=["ape", "apple", "peach"]),
            "'apple' is the closest.",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    model_argument(parser)
    args = parser.parse_args(argv)
    tools = stdlib_langchain_tools()
    scripted = scripted_model()
    model = chat_model(args.model, scripted)
    selector = ToolSelectionMiddleware(k=4, always_include=["time_time"], search_tool=True, search_k=3)
    agent = create_agent(
        model,
        tools=tools,
        middleware=[selector],
        checkpointer=InMemorySaver(),
        system_prompt="Use the tools to answer. Be brief.",
    )
    print(f"{len(tools)} tools given to create_agent; indexing them on the first model call...")
    config = {"configurable": {"thread_id": "demo"}}
    for turn in TURNS:
        print(f"\n> {turn}")
        out = agent.invoke({"messages": [("user", turn)]}, config)
        for message in out["messages"][-4:]:
            if message.type == "tool":
                print(f"   tool {message.name} -> {message.content[:90]!r}")
        print(f"   answer: {out['messages'][-1].text}")
        pinned = agent.get_state(config).values.get("toolret_selection") or {}
        print(f"   selected for {pinned.get('query')!r}: {pinned.get('tools')}")
    if model is scripted:
        print("\nTools offered at each model call:")
        for i, call in enumerate(scripted.calls, 1):
            print(f"   call {i}: {call.tool_names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
