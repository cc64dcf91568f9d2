"""A LlamaIndex FunctionAgent over ~650 tools, with toolret choosing the tools for each step.

The registry is every public function of about forty standard-library modules (math,
statistics, os.path, calendar, json, ...) wrapped as LlamaIndex ``FunctionTool``s — too many to
send to a model at once. ``ToolObjectIndex`` (one changed import from ``ObjectIndex``) hands the
agent five per step.

Offline (default): the model is LlamaIndex's ``MockFunctionCallingLLM`` playing a script — for
each request it calls the tool a real model would pick, but only if the agent offered it, so
the run shows whether toolret retrieved the right tool. The last request is a follow-up that
names no tool ("and for 2029?"): the retriever is this conversation's (``keep_used=3``), so the
tools used earlier stay on offer, within the k tools per step.

With a real model, any OpenAI-compatible server (needs ``pip install llama-index-llms-openai-like``)::

    python examples/llamaindex_agent.py --model gpt-4o-mini
    python examples/llamaindex_agent.py --model qwen2.5:7b --base-url http://localhost:11434/v1
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
import time
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context

from llamaindex_toolret import ToolObjectIndex, doc_to_tool
from toolret import ToolDoc
from toolret.sources.stdlib_registry import stdlib_tools

#: (request, the call a capable model would make). The last one is a follow-up turn.
CONVERSATION: list[tuple[str, str, dict[str, Any]]] = [
    ("What is the factorial of 12?", "math_factorial", {"n": 12}),
    ("Give me the median of 3, 9, 4 and 7.", "statistics_median", {"data": [3, 9, 4, 7]}),
    ("How do I split a file path into its directory and its file name?", "os_path_split", {"p": "/var/log/syslog.1"}),
    ("Which weekday and how many days does February 2028 have?", "calendar_monthrange", {"year": 2028, "month": 2}),
    ("And for 2029?", "calendar_monthrange", {"year": 2029, "month": 2}),
]


def _resolve(dotted: str) -> Any:
    """The standard-library object named ``dotted`` (``os.path.split``, ``datetime.date.today``)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(dotted)


def stdlib_function_tools(modules: set[str] | None = None) -> list[FunctionTool]:
    """Registry functions (of ``modules``, default all) as callable FunctionTools (``math.gcd`` -> ``math_gcd``)."""
    tools = []
    for doc in stdlib_tools():
        if modules and doc.name.rsplit(".", 1)[0] not in modules:
            continue
        fn = _resolve(doc.name)
        tools.append(doc_to_tool(doc.model_copy(update={"id": doc.id.replace(".", "_")}), fn=_positional(fn, doc)))
    return tools


def _positional(fn: Any, doc: ToolDoc) -> Any:
    """Many builtins take positional-only arguments; pass the model's keyword arguments in order."""
    order = [p.name for p in doc.parameters]

    def call(**kwargs: Any) -> str:
        return repr(fn(*[kwargs[name] for name in order if name in kwargs]))

    return call


def scripted_model(offered: list[list[str]]) -> MockFunctionCallingLLM:
    """Plays CONVERSATION: calls the expected tool if it was offered, then reports its result."""
    plan = {request: (tool, args) for request, tool, args in CONVERSATION}

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        names = [t.metadata.name for t in kwargs.get("tools") or []]
        offered.append(names)
        last_user = max(i for i, m in enumerate(messages) if m.role == MessageRole.USER)
        results = [m.content for m in messages[last_user + 1 :] if m.role == MessageRole.TOOL]
        if results:
            return ChatMessage(role="assistant", content=f"The answer is {results[-1]}.")
        tool, args = plan[messages[last_user].content or ""]
        if tool not in names:
            return ChatMessage(role="assistant", content=f"(none of the offered tools fits; wanted {tool})")
        return ChatMessage(
            role="assistant", blocks=[ToolCallBlock(tool_call_id=tool, tool_name=tool, tool_kwargs=args)]
        )

    return MockFunctionCallingLLM(response_generator=respond)


def real_model(args: argparse.Namespace) -> Any:
    try:
        from llama_index.llms.openai_like import OpenAILike
    except ImportError:
        sys.exit("--model needs LlamaIndex's OpenAI-compatible client: pip install llama-index-llms-openai-like")
    return OpenAILike(
        model=args.model,
        api_base=args.base_url or "https://api.openai.com/v1",
        api_key=args.api_key or os.environ.get("OPENAI_API_KEY", "not-needed"),
        is_chat_model=True,
        is_function_calling_model=True,
        timeout=60,
    )


async def converse(agent: FunctionAgent, offered: list[list[str]]) -> int:
    ctx = Context(agent)
    failures = 0
    for request, expected, _ in CONVERSATION:
        before = len(offered)
        handler = agent.run(request, ctx=ctx)
        calls = [ev async for ev in handler.stream_events() if isinstance(ev, ToolCallResult)]
        result = await handler
        print(f"> {request}")
        if before < len(offered):
            print(f"   offered: {', '.join(offered[before])}")
        for call in calls:
            status = "error" if call.tool_output.is_error else "ok"
            print(f"   called:  {call.tool_name}({call.tool_kwargs}) -> {call.tool_output.content} [{status}]")
        print(f"   answer:  {result.response.content}\n")
        failures += not any(c.tool_name == expected and not c.tool_output.is_error for c in calls)
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="use a real OpenAI-compatible chat model instead of the offline script")
    parser.add_argument("--base-url", help="the server's /v1 URL (default: OpenAI)")
    parser.add_argument("--api-key", help="default: $OPENAI_API_KEY")
    parser.add_argument("-k", type=int, default=5, help="tools offered per step (default 5)")
    parser.add_argument("--modules", help="only these standard-library modules (comma-separated; default all)")
    args = parser.parse_args()

    tools = stdlib_function_tools(set(args.modules.split(",")) if args.modules else None)
    start = time.perf_counter()
    index = ToolObjectIndex.from_objects(tools, show_progress=True)
    print(f"Indexed {len(tools)} tools in {time.perf_counter() - start:.1f}s\n")

    offered: list[list[str]] = []
    llm = real_model(args) if args.model else scripted_model(offered)
    # One retriever per conversation: keep_used=3 keeps the last three tools called on offer.
    agent = FunctionAgent(
        tool_retriever=index.as_retriever(similarity_top_k=args.k, keep_used=3),
        llm=llm,
        system_prompt="Use the tools to answer; call exactly the tool that fits.",
    )
    failures = asyncio.run(converse(agent, offered))
    print(f"{len(CONVERSATION) - failures}/{len(CONVERSATION)} requests were served by the expected tool")
    return 0 if args.model or failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
