"""``where=``: a search scoped by tool metadata, applied at candidate generation (never a post-filter)."""

from __future__ import annotations

import pytest

from toolret import ScopeError, ToolDoc, ToolScope
from toolret.scope.tool_scope import as_scope, tool_in_scope
from toolret.sources.mcp import from_tools_list


def _mcp(name: str, description: str, **annotations: bool) -> dict:
    spec = {"name": name, "description": description, "inputSchema": {"type": "object", "properties": {}}}
    if annotations:
        spec["annotations"] = annotations
    return spec


FILES = from_tools_list(
    {
        "tools": [
            _mcp("read_file", "Read the contents of a file.", readOnlyHint=True),
            _mcp("list_files", "List the files in a folder.", readOnlyHint=True),
            _mcp("delete_file", "Delete a file permanently.", destructiveHint=True),
            _mcp("append_file", "Append text to a file.", destructiveHint=False),
        ]
    },
    server="files",
)
# Many tools about files on another server, which outrank the scoped ones unless scoping draws candidates.
ARCHIVE = [
    ToolDoc(
        id=f"archive/file_tool_{i}",
        name=f"file_tool_{i}",
        description=f"Delete, read or list a file in archive number {i}.",
        metadata={"mcp_server": "archive", "tags": ["storage"]},
    )
    for i in range(12)
]
API = [
    ToolDoc(
        id="billing/create_invoice",
        name="create_invoice",
        description="Create an invoice for a customer.",
        metadata={"api": "Billing", "tags": ["finance", "write"]},
    ),
    ToolDoc(name="get_weather", description="Current weather for a city."),  # declares nothing
]


@pytest.fixture(scope="module")
def kb(make_kb):
    return make_kb([*FILES, *ARCHIVE, *API])


def test_k_tools_in_scope_come_back_even_when_others_rank_above_them(kb):
    query = "delete or read a file"
    assert any(i.startswith("archive/") for i in kb.search(query, k=4).ids)  # unscoped: the archive takes places
    result = kb.search(query, k=4, where={"source": "files"})
    assert sorted(result.ids) == sorted(d.id for d in FILES)
    step = next(s for s in result.trace if s.stage == "scope")
    assert step.note.startswith(f"4 of {len(kb)} tools in scope (sources=['files'])")


@pytest.mark.parametrize("config", ["fast", "balanced"])
@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"read_only": True}, {"files/read_file", "files/list_files"}),
        ({"destructive": False}, {"files/read_file", "files/list_files", "files/append_file"}),
        ({"namespace": "files", "destructive": True}, {"files/delete_file"}),
        (ToolScope(tags=["finance"]), {"billing/create_invoice"}),
        ({"metadata": {"api": "Billing"}}, {"billing/create_invoice"}),
    ],
)
def test_no_preset_or_k_returns_a_tool_outside_the_scope(kb, config, where, expected):
    for k in (1, 5, "auto"):
        result = kb.search("delete a file, read a file, bill the customer", k=k, config=config, where=where)
        assert result.ids and set(result.ids) <= expected
        text = " ".join(s.note for s in result.trace)
        # the trace the model may see names no tool outside the scope
        assert not any(d.name in text for d in [*FILES, *ARCHIVE, *API] if d.id not in expected)


def test_a_tool_declaring_nothing_is_neither_read_only_nor_non_destructive():
    bare = API[1]
    assert not tool_in_scope(bare, ToolScope(read_only=True))
    assert not tool_in_scope(bare, ToolScope(destructive=False))
    assert tool_in_scope(bare, ToolScope())  # the empty scope is everything, said explicitly


def test_a_scope_no_tool_fits_returns_no_tools_never_all(kb):
    result = kb.search("delete a file", k=5, where={"sources": ["payments"]})
    assert result.ids == []
    assert "no tool matches, so none is returned" in next(s for s in result.trace if s.stage == "scope").note
    assert kb.search("delete a file", k="auto", where={"tags": []}).ids == []


def test_scope_and_allowed_ids_both_hold(kb):
    result = kb.search("read a file", k=5, where={"read_only": True}, allowed_ids=["files/list_files", "get_weather"])
    assert result.ids == ["files/list_files"]


@pytest.mark.parametrize(
    ("where", "field"),
    [({"server_name": "files"}, "server_name"), ({"read_only": "maybe"}, "read_only"), ({"tags": 3}, "tags")],
)
def test_a_malformed_scope_is_an_error_naming_the_field(kb, where, field):
    with pytest.raises(ScopeError, match=repr(field)):
        kb.search("read a file", where=where)
    with pytest.raises(ScopeError, match="ToolScope or a mapping"):
        as_scope(["files"])  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["tags", "tag", "sources", "namespaces", "read_only", "destructive", "metadata"])
def test_a_field_given_as_none_is_an_error_never_no_restriction(kb, field):
    # {"tags": user.tags} for a user with no tags recorded must not open every tool.
    with pytest.raises(ScopeError, match=f"{field!r}.*None is not a condition"):
        kb.search("delete a file", k=3, where={field: None})
    with pytest.raises(ScopeError, match=repr(field)):
        ToolScope(**{field: None})
    with pytest.raises(ScopeError, match=repr(field)):
        ToolScope(read_only=True).both({field: None})


def test_a_field_left_out_still_does_not_restrict(kb):
    assert ToolScope(read_only=True).both(ToolScope(tags=["finance"])).tags == ["finance"]
    assert len(kb.search("delete a file", k=50, where={}).ids) == len(kb.search("delete a file", k=50).ids)


def test_mcp_annotation_names_are_accepted_as_aliases():
    assert as_scope({"readOnlyHint": True, "server": "files"}) == ToolScope(read_only=True, sources=["files"])


def test_a_scoped_block_restricts_every_search_inside_it(kb):
    from toolret import scoped

    with scoped({"source": "files"}):
        assert set(kb.search("delete or read a file", k=5).ids) <= {d.id for d in FILES}
        with scoped({"read_only": True}):  # nested blocks narrow
            assert set(kb.search("delete a file", k=5).ids) <= {"files/read_file", "files/list_files"}
        # an explicit where= narrows the block's scope, never widens it
        assert kb.search("bill the customer", k=5, where={"tags": ["finance"]}).ids == []
    assert "billing/create_invoice" in kb.search("bill the customer", k=5).ids  # outside the block: everything


def test_the_engine_takes_the_block_s_scope_as_an_argument_and_never_reads_it_itself(kb):
    """The facade reads the enclosing scoped block once and passes it down (issue 44): below it,
    the restriction is whatever it is given."""
    from toolret import scoped
    from toolret.scope.tool_scope import current_scope, restriction
    from toolret.search.search import SearchRequest, begin

    snap = kb._writer.snapshot
    with scoped({"source": "files"}):
        ambient = current_scope()
        assert restriction(snap, None, None) == (None, [])  # not read from the context here
        mask, steps = restriction(snap, None, None, ambient)
        assert mask is not None and mask.sum() == len(FILES) and steps
        unscoped = begin(SearchRequest("bill the customer", 5), snapshot=snap, embedder=kb.embedder, config=kb.config)
        assert "billing/create_invoice" in unscoped.run().ids  # no enclosing scope passed: none applies
        assert "billing/create_invoice" not in kb.search("bill the customer", k=5).ids  # the facade passes it


async def test_a_scoped_block_reaches_asearch_and_worker_threads(kb):
    import asyncio

    from toolret import scoped

    with scoped({"namespace": "files", "read_only": True}):
        result = await kb.asearch("remove the file", k=5)
        threaded = await asyncio.to_thread(kb.search, "remove the file", 5)
    assert set(result.ids) <= {"files/read_file", "files/list_files"}
    assert set(threaded.ids) <= {"files/read_file", "files/list_files"}
