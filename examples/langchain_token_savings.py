"""What a tool selector saves: tool-definition tokens per model call, and what selecting costs.

    python examples/langchain_token_savings.py [--k 5] [--condensed] [--json out.json]

Runs LangChain's ``create_agent`` over the 650-tool standard-library registry for a set of
requests, once with every tool bound and once with ``ToolSelectionMiddleware``, and with the
agentic ``create_tool_search_agent``. The scripted model records the exact tool definitions each call
received (what ``bind_tools`` sends); tokens are estimated as characters / 4 of that JSON.
Selection latency is the time spent inside the middleware before the model is called,
measured by two timing middleware around it; the first call (which indexes the registry) is
reported on its own, and calls inside a tool loop (pinned selection) apart from new turns.
Indexing the registry takes about 10 s on two CPU cores (8-13 s at load average 1-2).

``--condensed`` runs every setting a second time with ``condensed_descriptions=True`` over the
same knowledge base (so the same tools are selected) and reports the tokens side by side: the
difference is the descriptions alone (condensed card text instead of the raw docstring).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from langchain.agents import create_agent as create_langchain_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage
from langchain_stdlib_tools import stdlib_langchain_tools
from langgraph.checkpoint.memory import InMemorySaver

from langchain_toolret import ToolSelectionMiddleware, create_tool_search_agent
from langchain_toolret.condensed import CondensedTools
from langchain_toolret.testing import ModelCall, ScriptedChatModel, tool_call

REQUESTS = [
    "what is the factorial of 12?",
    "give me the median of these exam scores: 71, 88, 93, 64",
    "split a file path into its directory and file name",
    "parse this JSON string into a Python object",
    "wrap a long paragraph to 60 characters per line",
    "copy a whole directory tree to a backup folder",
    "pick a random element from a list",
    "how many days are there in February 2028?",
    "compute the SHA-256 digest of some bytes",
    "check whether 'report_*.csv' matches report_2024.csv",
    "round 7.3 up to the next integer",
    "what is the cosine of 0.5 radians?",
    "encode these bytes as base64",
    "generate a random UUID",
    "is 192.168.1.10 a private address?",
    "quote a string for use in a URL",
    "find words close to 'appel' in a word list",
    "what is the current time as a timestamp?",
    "list files matching *.txt in a folder",
    "get the standard deviation of a sample",
    "escape HTML special characters in a string",
    "remove common leading whitespace from a text block",
    "convert RGB colour to HSV",
    "is 'lambda' a Python keyword?",
    "compress some bytes with zlib",
    "what is the greatest common divisor of 84 and 36?",
    "get the size of a file in bytes",
    "create a temporary directory",
    "shuffle a list in place",
    "compute the logarithm base 2 of 1024",
]


class _Clock(AgentMiddleware):
    """Records when the model call enters this layer (one outside, one inside the selector)."""

    def __init__(self, name: str, marks: list[float]) -> None:
        super().__init__()
        self._name = name
        self.marks = marks

    @property
    def name(self) -> str:
        return self._name

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.marks.append(time.perf_counter())
        return handler(request)


def _model(n_requests: int) -> ScriptedChatModel:
    """Per request: call the first offered tool (a tool loop), then answer."""

    def act(call: ModelCall) -> AIMessage:
        names = [n for n in call.tool_names if n != "search_tools"]
        return tool_call(names[0]) if names else AIMessage("no tool")

    return ScriptedChatModel(replies=[r for _ in range(n_requests) for r in (act, "done")])


def _tokens(call: ModelCall) -> float:
    return sum(len(json.dumps(t, ensure_ascii=False)) for t in call.tools) / 4


def _run(agent: Any, requests: list[str]) -> None:
    for i, request in enumerate(requests):
        agent.invoke({"messages": [("user", request)]}, {"configurable": {"thread_id": str(i)}})


def _selector_run(tools: list[Any], k: int, **options: Any) -> tuple[dict[str, Any], ToolSelectionMiddleware]:
    outer: list[float] = []
    inner: list[float] = []
    selected = _model(len(REQUESTS))
    selector = ToolSelectionMiddleware(k=k, **options)
    agent = create_langchain_agent(
        selected, tools=tools, middleware=[_Clock("clock_outer", outer), selector, _Clock("clock_inner", inner)]
    )
    _run(agent, REQUESTS)
    ms = [(b - a) * 1000 for a, b in zip(outer, inner)]
    new_turn, pinned = ms[0::2], ms[1::2]
    return {
        "tokens_per_call_mean": statistics.mean(_tokens(c) for c in selected.calls),
        "tokens_per_call_max": max(_tokens(c) for c in selected.calls),
        "first_call_ms_with_indexing": round(new_turn[0], 1),
        "selection_ms_p50": round(statistics.median(new_turn[1:]), 2),
        "selection_ms_p95": round(statistics.quantiles(new_turn[1:], n=20)[18], 2),
        "pinned_call_ms_p50": round(statistics.median(pinned), 3),
        "model_calls": len(selected.calls),
    }, selector


def _agentic_run(tools: list[Any], kb: Any, **options: Any) -> dict[str, Any]:
    """All requests in one conversation, so the bound set fills up to its cap."""
    agentic = _model(len(REQUESTS))
    agent = create_tool_search_agent(
        agentic, tools, max_tools=10, seed_k=3, knowledge_base=kb, checkpointer=InMemorySaver(), **options
    )
    for request in REQUESTS:
        agent.invoke({"messages": [("user", request)]}, {"configurable": {"thread_id": "one"}})
    return {
        "tokens_per_call_mean": statistics.mean(_tokens(c) for c in agentic.calls),
        "tokens_per_call_max": max(_tokens(c) for c in agentic.calls),
        "tools_per_call_max": max(len(c.tools) for c in agentic.calls),
    }


def _all_tools_tokens(tools: list[Any]) -> float:
    plain = _model(1)
    create_langchain_agent(plain, tools=tools).invoke({"messages": [("user", REQUESTS[0])]})
    return _tokens(plain.calls[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument(
        "--condensed", action="store_true", help="also run with condensed_descriptions=True and compare the tokens"
    )
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    tools = stdlib_langchain_tools()
    report: dict[str, Any] = {"n_tools": len(tools), "n_requests": len(REQUESTS), "k": args.k}

    report["all_tools_tokens_per_call"] = _all_tools_tokens(tools)
    report["selector"], selector = _selector_run(tools, args.k)
    kb = selector.index.kb
    report["agentic"] = _agentic_run(tools, kb)
    if args.condensed:
        report["all_tools_condensed_tokens_per_call"] = _all_tools_tokens(CondensedTools(kb).tools(tools))
        report["selector_condensed"], _ = _selector_run(tools, args.k, knowledge_base=kb, condensed_descriptions=True)
        report["agentic_condensed"] = _agentic_run(tools, kb, condensed_descriptions=True)

    full = report["all_tools_tokens_per_call"]
    sel = report["selector"]
    print(f"{len(tools)} tools, {len(REQUESTS)} requests, {sel['model_calls']} model calls per run")
    print(
        f"tool-definition tokens per model call (chars/4): all tools {full:,.0f}; "
        f"selector k={args.k}: mean {sel['tokens_per_call_mean']:,.0f} (max {sel['tokens_per_call_max']:,.0f}), "
        f"{full / sel['tokens_per_call_mean']:.0f}x fewer; agentic (cap 10): mean "
        f"{report['agentic']['tokens_per_call_mean']:,.0f}"
    )
    print(
        f"selection latency per new user turn: p50 {sel['selection_ms_p50']} ms, p95 {sel['selection_ms_p95']} ms; "
        f"pinned (tool loop) p50 {sel['pinned_call_ms_p50']} ms; first call incl. indexing "
        f"{sel['first_call_ms_with_indexing'] / 1000:.1f} s"
    )
    if args.condensed:
        print("condensed descriptions (raw -> condensed, tokens per model call):")
        rows = [("all tools", full, report["all_tools_condensed_tokens_per_call"])]
        rows += [
            (f"{name} mean", report[name]["tokens_per_call_mean"], report[f"{name}_condensed"]["tokens_per_call_mean"])
            for name in ("selector", "agentic")
        ]
        rows += [
            (f"{name} max", report[name]["tokens_per_call_max"], report[f"{name}_condensed"]["tokens_per_call_max"])
            for name in ("selector", "agentic")
        ]
        for label, raw, short in rows:
            print(f"  {label:14} {raw:9,.0f} -> {short:9,.0f}  ({1 - short / raw:.0%} fewer)")
        print(
            f"  selection latency with condensing: p50 {report['selector_condensed']['selection_ms_p50']} ms, "
            f"pinned p50 {report['selector_condensed']['pinned_call_ms_p50']} ms"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
