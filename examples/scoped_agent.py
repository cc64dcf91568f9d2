"""One agent, many users: each request sees only the tools its user may reach (a scope from the runtime context).

A gateway serves one registry (here MCP-style tools from two servers, with their annotations) to
users with different rights. ``ToolSelectionMiddleware(scope="tool_scope")`` reads each request's
``ToolScope`` from ``create_agent``'s runtime context: the search draws candidates from the tools in
scope, nothing outside it is bound, and a call to a tool outside it is refused.

Offline: the model is LangChain-toolret's scripted stand-in (it records the tools it was offered).
Run: ``python examples/scoped_agent.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import StructuredTool

from langchain_toolret import ToolSelectionMiddleware
from langchain_toolret.testing import ScriptedChatModel, tool_call
from toolret import ToolScope


def _mcp_tool(server: str, fn, **annotations) -> StructuredTool:
    # As langchain-mcp-adapters loads MCP tools: the server and its annotations in the tool's metadata.
    return StructuredTool.from_function(fn, metadata={"mcp_server": server, "annotations": annotations})


def read_file(path: str) -> str:
    """Read the contents of a file."""
    return f"contents of {path}"


def delete_file(path: str) -> str:
    """Delete a file permanently."""
    return f"deleted {path}"


def list_invoices(customer: str) -> str:
    """List a customer's invoices."""
    return f"3 invoices for {customer}"


def refund_invoice(invoice_id: str) -> str:
    """Refund an invoice."""
    return f"refunded {invoice_id}"


TOOLS = [
    _mcp_tool("files", read_file, readOnlyHint=True),
    _mcp_tool("files", delete_file, destructiveHint=True),
    _mcp_tool("billing", list_invoices, readOnlyHint=True),
    _mcp_tool("billing", refund_invoice, destructiveHint=True),
]


@dataclass
class Ctx:
    user: str
    tool_scope: ToolScope


USERS = [
    Ctx("admin", ToolScope()),  # every tool, said explicitly
    Ctx("support", ToolScope(sources=["billing"])),
    Ctx("guest", ToolScope(read_only=True)),
]


def main() -> dict[str, list[str]]:
    offered = {}
    for ctx in USERS:
        # The model tries to delete the file whatever it was offered: the scope decides what happens.
        model = ScriptedChatModel(replies=[tool_call("delete_file", path="notes.txt"), "Done."])
        agent = create_agent(
            model, TOOLS, context_schema=Ctx, middleware=[ToolSelectionMiddleware(k=2, scope="tool_scope")]
        )
        out = agent.invoke({"messages": [HumanMessage("delete the file notes.txt")]}, context=ctx)
        offered[ctx.user] = model.calls[0].tool_names
        print(f"{ctx.user:8s} offered {model.calls[0].tool_names}; delete_file -> {out['messages'][2].content!r}")
    return offered


if __name__ == "__main__":
    main()
