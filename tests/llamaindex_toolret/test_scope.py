"""A tool scope in the LlamaIndex retriever: per retriever (``where=``), per call, and around an agent's run.

The registry is a gateway's: MCP tool definitions (with their annotations) indexed by toolret,
the live tools LlamaIndex ``FunctionTool`` objects of the same names.
"""

from __future__ import annotations

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool

from llamaindex_toolret import ToolObjectIndex
from llamaindex_toolret.mapping import ToolNodeMapping
from tests.llamaindex_toolret.test_agents import run_agent, tool_model
from toolret import ToolKnowledgeBase, scoped
from toolret.sources.mcp import from_tools_list


def read_file(path: str) -> str:
    """Read the contents of a file."""
    return f"contents of {path}"


def delete_file(path: str) -> str:
    """Delete a file permanently."""
    return f"deleted {path}"


def shred_file(path: str) -> str:
    """Securely delete and overwrite a file so it cannot be recovered."""
    return f"shredded {path}"


def _spec(fn, **annotations) -> dict:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    return {"name": fn.__name__, "description": fn.__doc__, "inputSchema": schema, "annotations": annotations}


def _index(embedder) -> ToolObjectIndex:
    kb = ToolKnowledgeBase(embedder=embedder)
    specs = [
        _spec(read_file, readOnlyHint=True),
        _spec(delete_file, destructiveHint=True),
        _spec(shred_file, destructiveHint=True),
    ]
    kb.add([d.model_copy(update={"id": d.name}) for d in from_tools_list({"tools": specs}, server="files")])
    live = [FunctionTool.from_defaults(fn=fn) for fn in (read_file, delete_file, shred_file)]
    return ToolObjectIndex(kb, ToolNodeMapping(live))


def test_a_retriever_scope_returns_only_tools_in_it_even_by_exact_name(embedder):
    index = _index(embedder)
    retriever = index.as_retriever(similarity_top_k=3, where={"read_only": True})
    assert [t.metadata.name for t in retriever.retrieve("delete the file a.txt")] == ["read_file"]
    # the agent's by-name lookup does not find a tool outside the scope; the search finds only tools inside
    assert [t.metadata.name for t in retriever.retrieve("delete_file")] == ["read_file"]
    assert [t.metadata.name for t in retriever.retrieve("read_file")] == ["read_file"]


def test_a_per_call_scope_narrows_one_call(embedder):
    retriever = _index(embedder).as_retriever(similarity_top_k=2)
    assert {t.metadata.name for t in retriever.retrieve("delete the file a.txt")} == {"delete_file", "shred_file"}
    scoped_call = retriever.retrieve("delete the file a.txt", where={"destructive": False})
    assert [t.metadata.name for t in scoped_call] == ["read_file"]  # drawn from the scope, not cut to nothing
    # the next call is unscoped again
    assert {t.metadata.name for t in retriever.retrieve("delete the file a.txt")} == {"delete_file", "shred_file"}


async def test_an_agent_run_inside_a_scoped_block_is_offered_and_finds_only_tools_in_scope(embedder):
    retriever = _index(embedder).as_retriever(similarity_top_k=3)
    request = "Delete the file a.txt"
    offered: list[list[str]] = []
    model = tool_model({request: [("delete_file", {"path": "a.txt"})]}, offered, only_offered=False)
    with scoped({"read_only": True}):
        answer, calls = await run_agent(FunctionAgent(tool_retriever=retriever, llm=model), request)
    assert offered[0] == ["read_file"]
    assert [c.tool_output.is_error for c in calls] == [True]  # the agent could not find delete_file: not run
    assert "deleted" not in answer
