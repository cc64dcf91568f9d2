"""OpenAI's client-executed tool search answered by toolret, checked against the ``openai`` SDK's own types."""

from __future__ import annotations

import dataclasses
import datetime
import importlib.util
import json
from pathlib import Path

import pytest
from openai.types.responses import ResponseFunctionToolCall, ResponseToolSearchCall
from openai.types.responses.response_input_item_param import ResponseInputItemParam
from openai.types.responses.response_tool_search_output_item_param import ResponseToolSearchOutputItemParam
from openai.types.responses.tool_search_tool import ToolSearchTool
from pydantic import BaseModel, TypeAdapter

from toolret import QueryError, ScopeError, ToolDoc, ToolKnowledgeBase
from toolret.providers import OpenAIToolSearch, loaded_tools, tool_search_output

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "openai_tool_search.py"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def convert_currency(amount: float, to: str) -> str:
    """Convert an amount of money into another currency."""
    return f"{amount} {to}"


def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return "sent"


CRM = [
    ToolDoc(
        id="crm/create_lead",
        name="create_lead",
        description="Create a sales lead in the CRM.",
        metadata={"mcp_server": "crm", "annotations": {"destructiveHint": False}},
    ),
    ToolDoc(
        id="crm/delete_lead",
        name="delete_lead",
        description="Delete a sales lead from the CRM.",
        metadata={"mcp_server": "crm", "annotations": {"destructiveHint": True}},
    ),
    ToolDoc(name="GET /leads/{lead_id}", description="Fetch a sales lead by id."),
]


def _call(query: str, call_id: str = "call_1") -> ResponseToolSearchCall:
    return ResponseToolSearchCall(
        id="ts_" + call_id,
        call_id=call_id,
        arguments={"query": query},
        execution="client",
        status="completed",
        type="tool_search_call",
    )


@pytest.fixture(scope="module")
def kb(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([get_weather, convert_currency, send_email, *CRM])
    yield kb
    kb.close()


def test_the_tool_search_tool_is_a_client_executed_sdk_tool(kb):
    tool = ToolSearchTool.model_validate(OpenAIToolSearch(kb).tool())
    assert tool.execution == "client" and tool.parameters["required"] == ["query"]  # type: ignore[index]


def test_a_tool_search_call_gets_an_output_item_the_sdk_accepts(kb):
    item = OpenAIToolSearch(kb, k=2).output(_call("what's the weather in Paris?"))
    parsed = ResponseToolSearchOutputItemParam.model_validate(item)
    TypeAdapter(ResponseInputItemParam).validate_python(item)  # and it is a valid input item of the next request
    assert parsed.call_id == "call_1" and parsed.execution == "client"
    assert [t.name for t in parsed.tools][0] == "get_weather"  # type: ignore[union-attr]
    function = parsed.tools[0]
    assert function.type == "function" and function.parameters["required"] == ["city"]  # type: ignore[union-attr,index]


def test_what_was_loaded_stays_loaded_and_is_not_sent_again(kb):
    search = OpenAIToolSearch(kb, k=2)
    first = search.output(_call("weather in Oslo"))
    history = [_call("weather in Oslo"), first]
    assert ("get_weather" in {n for _, n in loaded_tools(history)}) is True
    second = search.output(_call("what's the weather like in Rome", "call_2"), history=history)
    names = [t["name"] for t in second["tools"]]
    assert "get_weather" not in names
    assert set(names).isdisjoint(n for _, n in loaded_tools(history))


def test_namespaced_tools_load_inside_their_namespace_and_calls_map_back(kb):
    search = OpenAIToolSearch(kb, k=3, namespaces=True)
    item = search.output(_call("create a new sales lead in the crm"))
    parsed = ResponseToolSearchOutputItemParam.model_validate(item)
    spaces = [t for t in parsed.tools if t.type == "namespace"]
    assert spaces and spaces[0].name == "crm"  # type: ignore[union-attr]
    assert "create_lead" in [t.name for t in spaces[0].tools]  # type: ignore[union-attr]
    call = ResponseFunctionToolCall(
        type="function_call", call_id="c", name="create_lead", namespace="crm", arguments="{}"
    )
    assert search.tool_id(call) == "crm/create_lead"


def test_a_name_the_api_would_refuse_is_sent_as_a_valid_name_and_maps_back(kb):
    search = OpenAIToolSearch(kb, k=1)
    item = search.output(_call("fetch a sales lead by its id"))
    name = item["tools"][0]["name"]
    assert name.startswith("GET__leads__lead_id__")
    call = ResponseFunctionToolCall(type="function_call", call_id="c", name=name, arguments="{}")
    assert search.tool_id(call) == "GET /leads/{lead_id}"


def test_a_scoped_search_never_loads_or_runs_a_tool_outside_the_scope(kb):
    search = OpenAIToolSearch(kb, k=5, where={"source": "crm"})
    item = search.output(_call("delete the lead"), where={"destructive": False})
    assert [t["name"] for t in item["tools"]] == ["create_lead"]
    with pytest.raises(ScopeError, match="get_weather"):
        search.run(ResponseFunctionToolCall(type="function_call", call_id="c", name="get_weather", arguments="{}"))


def test_a_function_call_runs_the_live_tool(kb):
    call = ResponseFunctionToolCall(
        type="function_call", call_id="call_9", name="get_weather", arguments='{"city": "Lima"}'
    )
    out = OpenAIToolSearch(kb).run(call)
    TypeAdapter(ResponseInputItemParam).validate_python(out)
    assert out == {"type": "function_call_output", "call_id": "call_9", "output": "sunny in Lima"}


def test_the_one_shot_helper_and_a_dict_call(kb):
    item = tool_search_output({"type": "tool_search_call", "call_id": "x", "arguments": '{"query": "email"}'}, kb, k=1)
    assert [t["name"] for t in item["tools"]] == ["send_email"]


def test_the_example_loop_runs_end_to_end_offline(embedder, capsys):
    spec = importlib.util.spec_from_file_location("openai_tool_search_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    kb = ToolKnowledgeBase.from_tools(
        [module.get_weather, module.convert_currency, module.send_email, module.book_flight], embedder=embedder
    )
    answer, items = module.run(module.ScriptedClient(module.SCRIPT), kb, "What's the weather in Paris?")
    assert answer == "It is sunny in Paris (21 C)."
    output = next(i for i in items if isinstance(i, dict) and i.get("type") == "tool_search_output")
    assert output["tools"][0]["name"] == "get_weather"
    assert {"type": "function_call_output", "call_id": "call_weather", "output": "Sunny, 21 C in Paris"} in items


# ------------------------------------------------------------------ two sources, one tool name
def _lead_tools() -> list[ToolDoc]:
    return [
        ToolDoc(id="crm/create_lead", name="create_lead", description="Create a sales lead in the CRM."),
        ToolDoc(id="mkt/create_lead", name="create_lead", description="Create a marketing lead for a campaign."),
    ]


def _lead_kb(embedder) -> ToolKnowledgeBase:
    """Two servers' ``create_lead``, each with its own live callable (what ``run`` executes)."""
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(_lead_tools())
    kb.live_tools.update(
        {"crm/create_lead": lambda name: f"crm lead {name}", "mkt/create_lead": lambda name: f"mkt lead {name}"}
    )
    return kb


def _function_call(name: str, arguments: str = '{"name": "Ada"}', namespace: str | None = None):
    return ResponseFunctionToolCall(
        type="function_call", call_id="c", name=name, arguments=arguments, namespace=namespace
    )


def test_two_sources_tools_of_one_name_get_distinct_wire_names_and_each_runs_its_own_tool(embedder):
    kb = _lead_kb(embedder)
    search = OpenAIToolSearch(kb, k=2)
    item = search.output(_call("create a new lead"))
    TypeAdapter(ResponseInputItemParam).validate_python(item)
    names = [t["name"] for t in item["tools"]]
    assert len(names) == 2 and len(set(names)) == 2
    ran = {search.tool_id(_function_call(n)): search.run(_function_call(n))["output"] for n in names}
    assert ran == {"crm/create_lead": "crm lead Ada", "mkt/create_lead": "mkt lead Ada"}
    again = search.output(_call("add a lead for the spring campaign", "call_2"))
    assert {t["name"] for t in again["tools"]} == set(names)  # the same tool keeps its name across calls
    kb.close()


def test_a_tool_keeps_its_wire_name_when_a_namesake_arrives_later(embedder):
    kb = _lead_kb(embedder)
    kb.remove("mkt/create_lead")
    search = OpenAIToolSearch(kb, k=2)
    first = search.output(_call("create a new lead"))
    assert [t["name"] for t in first["tools"]] == ["create_lead"]
    kb.add(_lead_tools()[1:])
    kb.live_tools.update({"mkt/create_lead": lambda name: f"mkt lead {name}"})
    second = search.output(_call("create a new lead", "call_2"), history=[first])
    (mkt_name,) = [t["name"] for t in second["tools"]]
    assert mkt_name != "create_lead"
    assert search.run(_function_call("create_lead"))["output"] == "crm lead Ada"
    assert search.run(_function_call(mkt_name))["output"] == "mkt lead Ada"
    kb.close()


def test_namespaced_namesakes_map_back_by_namespace_and_an_unqualified_call_is_refused(embedder):
    kb = _lead_kb(embedder)
    search = OpenAIToolSearch(kb, k=2, namespaces=True)
    parsed = ResponseToolSearchOutputItemParam.model_validate(search.output(_call("create a new lead")))
    assert sorted(t.name for t in parsed.tools) == ["crm", "mkt"]  # type: ignore[union-attr]
    assert search.run(_function_call("create_lead", namespace="mkt"))["output"] == "mkt lead Ada"
    assert search.tool_id(_function_call("create_lead", namespace="crm")) == "crm/create_lead"
    with pytest.raises(QueryError, match="crm/create_lead.*mkt/create_lead"):
        search.tool_id(_function_call("create_lead"))
    kb.close()


# ------------------------------------------------------------------ what run executes and returns
def test_a_langchain_tool_and_a_llamaindex_tool_run(embedder):
    from langchain_core.tools import tool
    from llama_index.core.tools import FunctionTool

    @tool
    def lookup_order(order_id: int) -> str:
        """Look up an order by its number."""
        return f"order {order_id} shipped"

    def refund_order(order_id: int) -> dict:
        """Refund an order by its number."""
        return {"order": order_id, "refunded": True}

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([lookup_order, FunctionTool.from_defaults(fn=refund_order)])
    search = OpenAIToolSearch(kb)
    assert search.run(_function_call("lookup_order", '{"order_id": 7}'))["output"] == "order 7 shipped"
    out = search.run(_function_call("refund_order", '{"order_id": 7}'))
    assert json.loads(out["output"]) == {"order": 7, "refunded": True}
    kb.close()


def test_a_dict_result_is_sent_as_json(embedder):
    def get_account(account_id: int) -> dict:
        """Fetch an account by id."""
        return {"id": account_id, "active": True}

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([get_account])
    out = OpenAIToolSearch(kb).run(_function_call("get_account", '{"account_id": 7}'))
    TypeAdapter(ResponseInputItemParam).validate_python(out)
    assert out["output"] == '{"id": 7, "active": true}'
    kb.close()


class Account(BaseModel):
    id: int
    active: bool
    opened: datetime.date


@dataclasses.dataclass
class Point:
    x: int
    y: int


def get_model() -> Account:
    """A pydantic model."""
    return Account(id=7, active=True, opened=datetime.date(2026, 1, 2))


def get_models() -> list[Account]:
    """Pydantic models in a list."""
    return [get_model()]


def get_point() -> Point:
    """A dataclass."""
    return Point(1, 2)


def get_nested() -> dict:
    """A dict holding a dataclass and a tuple."""
    return {"point": Point(1, 2), "pair": (1, "a")}


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (get_model, {"id": 7, "active": True, "opened": "2026-01-02"}),
        (get_models, [{"id": 7, "active": True, "opened": "2026-01-02"}]),
        (get_point, {"x": 1, "y": 2}),
        (get_nested, {"point": {"x": 1, "y": 2}, "pair": [1, "a"]}),
    ],
)
def test_a_pydantic_model_or_dataclass_result_is_sent_as_its_json(embedder, fn, expected):
    # issue 41 replay: a model or dataclass result reached the model as str() inside a JSON string
    # ('"id=7 active=True"', '"Point(x=1, y=2)"'), not as the JSON of its fields.
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([fn])
    out = OpenAIToolSearch(kb).run(_function_call(fn.__name__, "{}"))
    TypeAdapter(ResponseInputItemParam).validate_python(out)
    assert json.loads(out["output"]) == expected
    kb.close()


def _async_only_tool():
    from langchain_core.tools import StructuredTool

    async def check_stock(sku: str) -> str:
        return f"stock {sku}: 3"

    return StructuredTool.from_function(coroutine=check_stock, name="check_stock", description="Check stock of a SKU.")


def test_an_async_only_langchain_tool_runs(embedder):
    # issue 41 replay: a StructuredTool with only a coroutine raised LangChain's NotImplementedError
    # ("does not support sync invocation") out of run().
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([_async_only_tool()])
    assert OpenAIToolSearch(kb).run(_function_call("check_stock", '{"sku": "A1"}'))["output"] == "stock A1: 3"
    kb.close()


async def test_an_async_only_langchain_tool_runs_from_inside_an_event_loop(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([_async_only_tool()])
    assert OpenAIToolSearch(kb).run(_function_call("check_stock", '{"sku": "B2"}'))["output"] == "stock B2: 3"
    kb.close()


def test_an_async_function_runs_and_its_value_is_sent(embedder):
    # issue 41 replay: run() called it and sent the unawaited coroutine's repr
    # ('"<coroutine object check_price at 0x...>"') to the model as the tool's output.
    async def check_price(sku: str) -> dict:
        """Price of a SKU."""
        return {"sku": sku, "price": 9.5}

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([check_price])
    out = OpenAIToolSearch(kb).run(_function_call("check_price", '{"sku": "A1"}'))
    assert json.loads(out["output"]) == {"sku": "A1", "price": 9.5}
    kb.close()
