"""A request's scope as an agent framework carries it: read from the run's context, kept on the
agent's tools (indexed or not), a call outside it refused, an exact-name lookup kept to it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from toolret import ScopeError, ToolDoc, ToolScope, scoped
from toolret.agents.request_scope import (
    checked_source,
    in_current_scope,
    keep_in_scope,
    names_in_scope,
    refusal,
    request_scope,
    tool_allowed,
)

READ = ToolDoc(name="read_file", description="Read a file.", metadata={"annotations": {"readOnlyHint": True}})
DELETE = ToolDoc(name="delete_file", description="Delete a file.", metadata={"annotations": {"destructiveHint": True}})
REPORT = ToolDoc(name="report", description="Write a report.", metadata={"tags": ["docs"]})
READ_ONLY = ToolScope(read_only=True)


@dataclass
class Ctx:
    tool_scope: object = None


@dataclass
class Tool:
    """A framework tool the knowledge base may not hold: converted by ``to_doc`` when read."""

    name: str
    doc: ToolDoc | None = None


def to_doc(tool: Tool) -> ToolDoc:
    if tool.doc is None:
        raise ValueError("cannot be read")
    return tool.doc


@pytest.fixture(scope="module")
def kb(make_kb):
    return make_kb([READ, DELETE])


def test_the_scope_is_read_from_a_context_key_attribute_function_or_fixed_value():
    assert request_scope("tool_scope", {"tool_scope": {"read_only": True}}) == READ_ONLY
    assert request_scope("tool_scope", Ctx(READ_ONLY)) == READ_ONLY
    assert request_scope(lambda ctx: ctx.tool_scope, Ctx({"tag": "docs"})) == ToolScope(tags=["docs"])
    assert request_scope({"read_only": True}, None) == READ_ONLY
    assert request_scope(None, Ctx()) is None and request_scope(lambda ctx: None, Ctx()) is None


def test_a_configured_scope_the_context_lacks_is_an_error_never_no_scope():
    with pytest.raises(ScopeError, match="'tool_scope'.*ToolScope\\(\\) for every tool"):
        request_scope("tool_scope", Ctx())
    with pytest.raises(ScopeError, match="has none"):
        request_scope("tool_scope", None)
    with pytest.raises(ScopeError, match="'tool_scope'"):
        request_scope("tool_scope", {})


def test_a_malformed_fixed_scope_fails_at_set_up():
    assert checked_source({"read_only": True}) == READ_ONLY
    assert checked_source("tool_scope") == "tool_scope"
    with pytest.raises(ScopeError, match="redonly"):
        checked_source({"redonly": True})


def test_indexed_tools_are_read_from_their_documents_others_converted_unreadable_ones_left_out(kb):
    assert names_in_scope(kb, READ_ONLY) == {"read_file"}
    tools = [Tool("read_file"), Tool("delete_file"), "a provider dict", Tool("report", REPORT), Tool("broken")]
    name_of = lambda t: t.name if isinstance(t, Tool) else None  # noqa: E731
    docs_scope = ToolScope(tags=["docs"])
    assert keep_in_scope(tools, READ_ONLY, name_of, to_doc, kb) == [tools[0], "a provider dict"]
    assert keep_in_scope(tools, docs_scope, name_of, to_doc, kb, keep=["delete_file"]) == tools[1:4]
    assert keep_in_scope(tools, None, name_of, to_doc, kb) == tools
    assert tool_allowed(Tool("read_file"), "read_file", READ_ONLY, kb) is True
    assert tool_allowed(Tool("broken"), "broken", READ_ONLY, kb, to_doc) is False


def test_an_exact_name_lookup_keeps_to_the_retrievers_scope_and_the_enclosing_block(kb):
    assert in_current_scope(kb, "delete_file") is True
    assert in_current_scope(kb, "delete_file", READ_ONLY) is False
    with scoped(READ_ONLY):
        assert in_current_scope(kb, "read_file") is True
        assert in_current_scope(kb, "delete_file") is False
        assert in_current_scope(kb, "read_file", {"tags": ["docs"]}) is False  # both must hold


def test_a_refused_call_names_the_tool_only():
    assert refusal("delete_file") == "Tool 'delete_file' is not available."


def test_a_tool_named_exactly_is_found_only_inside_the_scope(kb):
    from toolret.agents.request_scope import named_in_scope

    assert named_in_scope(kb, "  delete_file ") == "delete_file"
    assert named_in_scope(kb, "delete_file", READ_ONLY) is None
    assert named_in_scope(kb, "no_such_tool") is None and named_in_scope(kb, "  ") is None
    with scoped(READ_ONLY):
        assert named_in_scope(kb, "read_file") == "read_file" and named_in_scope(kb, "delete_file") is None
