"""Anthropic's custom tool search answered by toolret, checked against the ``anthropic`` SDK's own types."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam, ToolUseBlock
from pydantic import TypeAdapter

from toolret import ScopeError, ToolDoc, ToolKnowledgeBase, ToolRetError
from toolret.providers import AnthropicToolSearch, tool_reference_result

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "anthropic_tool_search.py"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return "sent"


FILES = [
    ToolDoc(
        id="files/read_file",
        name="read_file",
        description="Read the contents of a file.",
        metadata={"mcp_server": "files", "annotations": {"readOnlyHint": True}},
    ),
    ToolDoc(
        id="files/delete_file",
        name="delete_file",
        description="Delete a file permanently.",
        metadata={"mcp_server": "files", "annotations": {"destructiveHint": True}},
    ),
]


@pytest.fixture(scope="module")
def kb(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([get_weather, send_email, *FILES])
    yield kb
    kb.close()


def _use(query: str) -> ToolUseBlock:
    return ToolUseBlock(type="tool_use", id="tu_1", name="tool_search", input={"query": query})


def test_the_tools_are_deferred_sdk_tool_params_plus_the_search_tool(kb):
    tools = AnthropicToolSearch(kb).tools()
    for tool in tools:
        TypeAdapter(ToolParam).validate_python(tool)
    deferred = [t for t in tools if t.get("defer_loading")]
    assert len(deferred) == len(kb) and tools[-1]["name"] == "tool_search" and "defer_loading" not in tools[-1]


def test_a_search_call_is_answered_with_tool_reference_blocks(kb):
    block = AnthropicToolSearch(kb, k=2).result(_use("is it raining in Paris?"))
    TypeAdapter(ToolResultBlockParam).validate_python(block)
    TypeAdapter(MessageParam).validate_python({"role": "user", "content": [block]})
    assert block["tool_use_id"] == "tu_1"
    assert block["content"][0] == {"type": "tool_reference", "tool_name": "get_weather"}
    assert all(b["type"] == "tool_reference" for b in block["content"])


def test_every_reference_names_a_deferred_tool(kb):
    search = AnthropicToolSearch(kb, k=4)
    sent = {t["name"] for t in search.deferred()}
    block = search.result(_use("delete or read a file"))
    assert {b["tool_name"] for b in block["content"]} <= sent


def test_nothing_found_is_a_text_result_not_an_empty_reference_list():
    block = tool_reference_result("tu_9", [], query="hello")
    TypeAdapter(ToolResultBlockParam).validate_python(block)
    assert block["content"][0]["type"] == "text"


def test_a_scope_limits_the_deferred_tools_the_references_and_the_calls(kb):
    search = AnthropicToolSearch(kb, k=5, where={"read_only": True})
    assert [t["name"] for t in search.deferred()] == ["read_file"]  # out-of-scope tools are never even sent
    block = search.result(_use("delete the file notes.txt"))
    assert [b["tool_name"] for b in block["content"]] == ["read_file"]
    with pytest.raises(ScopeError, match="files/delete_file"):
        search.run(ToolUseBlock(type="tool_use", id="tu_2", name="delete_file", input={}))


def test_a_loaded_tool_call_runs_the_live_tool(kb):
    out = AnthropicToolSearch(kb).answer(
        ToolUseBlock(type="tool_use", id="tu_3", name="get_weather", input={"city": "Lima"})
    )
    TypeAdapter(ToolResultBlockParam).validate_python(out)
    assert out == {"type": "tool_result", "tool_use_id": "tu_3", "content": "sunny in Lima"}


def test_the_example_loop_runs_end_to_end_offline(embedder):
    spec = importlib.util.spec_from_file_location("anthropic_tool_search_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    kb = ToolKnowledgeBase.from_tools(
        [module.get_weather, module.convert_currency, module.send_email], embedder=embedder
    )
    answer, messages = module.run(module.ScriptedClient(module.SCRIPT), kb, "What's the weather in Paris?")
    assert answer == "It is sunny in Paris (21 C)."
    assert messages[2]["content"][0]["content"][0] == {"type": "tool_reference", "tool_name": "get_weather"}
    assert messages[4]["content"][0]["content"] == "Sunny, 21 C in Paris"


# ------------------------------------------------------------------ two sources, one tool name
LEADS = [
    ToolDoc(id="crm/create_lead", name="create_lead", description="Create a sales lead in the CRM."),
    ToolDoc(id="mkt/create_lead", name="create_lead", description="Create a marketing lead for a campaign."),
]


def test_two_sources_tools_of_one_name_are_sent_once_each_and_each_runs_its_own_tool(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(LEADS)
    kb.live_tools.update(
        {"crm/create_lead": lambda name: f"crm lead {name}", "mkt/create_lead": lambda name: f"mkt lead {name}"}
    )
    search = AnthropicToolSearch(kb, k=2)
    tools = search.tools()
    for tool in tools:
        TypeAdapter(ToolParam).validate_python(tool)
    sent = [t["name"] for t in tools]
    assert len(sent) == len(set(sent)) == 3
    block = search.result(_use("create a new lead"))
    referenced = [b["tool_name"] for b in block["content"]]
    assert len(referenced) == 2 and set(referenced) <= set(sent)
    ran = {}
    for name in referenced:
        use = ToolUseBlock(type="tool_use", id="tu_5", name=name, input={"name": "Ada"})
        ran[search.tool_id(use)] = search.answer(use)["content"]
    assert ran == {"crm/create_lead": "crm lead Ada", "mkt/create_lead": "mkt lead Ada"}
    assert [t["name"] for t in search.tools()] == sent  # stable across calls
    kb.close()


def test_a_user_tool_named_like_the_search_tool_is_refused_naming_the_option(embedder):
    def tool_search(text: str) -> str:
        """Search the company wiki."""
        return "wiki"

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([get_weather, tool_search])
    with pytest.raises(ToolRetError, match=r"'tool_search'.*name="):
        AnthropicToolSearch(kb).tools()
    search = AnthropicToolSearch(kb, name="find_tools")
    names = [t["name"] for t in search.tools()]
    assert names[-1] == "find_tools" and "tool_search" in names[:-1]
    out = search.answer(ToolUseBlock(type="tool_use", id="tu_6", name="tool_search", input={"text": "x"}))
    assert out["content"] == "wiki"
    kb.close()


def test_a_langchain_tool_runs_and_a_dict_result_is_json(embedder):
    from langchain_core.tools import tool

    @tool
    def get_account(account_id: int) -> dict:
        """Fetch an account by id."""
        return {"id": account_id, "active": True}

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([get_account])
    out = AnthropicToolSearch(kb).run(
        ToolUseBlock(type="tool_use", id="tu_7", name="get_account", input={"account_id": 7})
    )
    TypeAdapter(ToolResultBlockParam).validate_python(out)
    assert out["content"] == '{"id": 7, "active": true}'
    kb.close()


def test_a_pydantic_model_result_is_sent_as_its_json(embedder):
    # issue 41 replay: it reached the model as '"id=7 active=True"' (str() inside a JSON string).
    from pydantic import BaseModel

    class Account(BaseModel):
        id: int
        active: bool

    def get_account(account_id: int) -> Account:
        """Fetch an account by id."""
        return Account(id=account_id, active=True)

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([get_account])
    out = AnthropicToolSearch(kb).run(
        ToolUseBlock(type="tool_use", id="tu_8", name="get_account", input={"account_id": 7})
    )
    TypeAdapter(ToolResultBlockParam).validate_python(out)
    assert out["content"] == '{"id": 7, "active": true}'
    kb.close()
