"""ChatModelLLM: a LangChain chat model drives toolret's LLM steps (valid, malformed, failing, slow)."""

from __future__ import annotations

import time

import pytest
from pydantic import BaseModel

from langchain_toolret.llm import ChatModelLLM, as_toolret_llm
from langchain_toolret.testing import ScriptedChatModel
from toolret.llm import (
    LLM,
    ChatMessage,
    LLMError,
    MalformedOutputError,
    astructured_call,
    structured_call,
)

ASK = [ChatMessage(role="system", content="Answer in JSON."), ChatMessage(role="user", content="Capital of France?")]


class City(BaseModel):
    name: str
    population_millions: float | None = None


def test_satisfies_the_llm_protocol_and_sends_the_messages():
    model = ScriptedChatModel.structured([{"name": "Paris", "population_millions": 2.1}])
    llm = ChatModelLLM(model)
    assert isinstance(llm, LLM)
    assert llm.generate(ASK, City, timeout=5) == City(name="Paris", population_millions=2.1)
    sent = model.calls[0]
    assert [type(m).__name__ for m in sent.messages] == ["SystemMessage", "HumanMessage"]
    assert sent.tool_names == ["City"]  # structured output through the schema's tool


def test_malformed_output_is_reported_with_the_raw_answer():
    llm = ChatModelLLM(ScriptedChatModel.structured([{"nom": "Paris"}]))
    with pytest.raises(MalformedOutputError) as err:
        llm.generate(ASK, City, timeout=5)
    assert '"nom": "Paris"' in (err.value.raw or "")


def test_text_instead_of_structured_output_is_malformed():
    llm = ChatModelLLM(ScriptedChatModel.structured(["Paris, of course."]))
    with pytest.raises(MalformedOutputError, match="no structured output"):
        llm.generate(ASK, City, timeout=5)


def test_structured_call_retries_malformed_output_with_feedback():
    model = ScriptedChatModel.structured(["Paris.", {"nom": "Paris"}, {"name": "Paris"}])
    assert structured_call(ChatModelLLM(model), ASK, City, timeout=5) == City(name="Paris")
    assert len(model.calls) == 3
    assert "did not match the schema" in model.calls[2].messages[-1].content


def test_a_raising_model_becomes_llm_error():
    llm = ChatModelLLM(ScriptedChatModel.structured([ConnectionError("server down")]))
    with pytest.raises(LLMError, match="ConnectionError: server down"):
        llm.generate(ASK, City, timeout=5)


async def test_async_path_valid_and_raising():
    llm = ChatModelLLM(ScriptedChatModel.structured([{"name": "Rome"}, RuntimeError("boom")]))
    assert await llm.agenerate(ASK, City, timeout=5) == City(name="Rome")
    with pytest.raises(LLMError, match="boom"):
        await astructured_call(llm, ASK, City, timeout=5)


def _slow(call):
    time.sleep(1.0)
    return "late"


def test_sync_timeout_returns_on_time():
    llm = ChatModelLLM(ScriptedChatModel(replies=[_slow]))
    start = time.perf_counter()
    with pytest.raises(TimeoutError):
        llm.generate(ASK, City, timeout=0.1)
    assert time.perf_counter() - start < 0.6
    with pytest.raises(LLMError, match="no answer within"):
        structured_call(ChatModelLLM(ScriptedChatModel(replies=[_slow])), ASK, City, timeout=0.1)


async def test_async_timeout_returns_on_time():
    llm = ChatModelLLM(ScriptedChatModel(replies=[_slow]))
    start = time.perf_counter()
    with pytest.raises(TimeoutError):
        await llm.agenerate(ASK, City, timeout=0.1)
    assert time.perf_counter() - start < 0.6


def test_a_model_without_structured_output_is_an_llm_error():
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    with pytest.raises(LLMError, match="no structured output"):
        ChatModelLLM(FakeListChatModel(responses=["x"])).generate(ASK, City, timeout=5)


def test_as_toolret_llm_wraps_chat_models_only():
    model = ScriptedChatModel()
    assert isinstance(as_toolret_llm(model), ChatModelLLM)
    assert as_toolret_llm(None) is None
    with pytest.raises(TypeError):
        ChatModelLLM("gpt-4o")  # type: ignore[arg-type]


def test_full_preset_plans_with_the_chat_model(embedder, tools):
    """The engine's LLM planner runs through the chat model, and falls back when it fails."""
    from langchain_toolret.index import ToolIndex

    plan = {
        "rewritten": "weather in Paris and convert 20 euros to yen",
        "step_back": None,
        "subtasks": [
            {
                "text": "weather forecast in Paris",
                "variants": ["Paris temperature"],
                "tool_description": "current weather for a city",
                "extracted_args": ["city"],
            },
            {
                "text": "convert 20 euros to yen",
                "variants": [],
                "tool_description": "currency exchange conversion",
                "extracted_args": ["amount", "currency"],
            },
        ],
    }
    model = ScriptedChatModel.structured([plan, ConnectionError("down")])
    index = ToolIndex.from_tools(tools, embedder=embedder, config="full", llm=model)
    assert isinstance(index.llm, ChatModelLLM) and index.kb.llm is index.llm  # its own knowledge base
    result = index.search("wether in paris and 20 eur in yen?", k=3)
    step = next(s for s in result.trace if s.stage == "plan")
    assert step.path == "llm"
    assert {"get_weather", "convert_currency"} <= set(result.ids)
    assert "wether in paris" in model.calls[0].messages[-1].content
    failed = index.search("is it raining in Paris?", k=3)
    assert next(s for s in failed.trace if s.stage == "plan").path == "fallback"
    assert failed.ids[0] == "get_weather"
    index.kb.close()


def test_an_llm_given_over_a_shared_knowledge_base_stays_with_its_index(tool_index):
    """Two agents over one registry: one plans with its model, the other (and the kb) stays offline."""
    from langchain_toolret.index import ToolIndex

    plan = {
        "rewritten": "weather in Paris",
        "step_back": None,
        "subtasks": [
            {"text": "weather forecast in Paris", "variants": [], "tool_description": "current weather for a city"},
        ],
    }
    model = ScriptedChatModel.structured([plan])
    with_model = ToolIndex.coerce(tool_index, config="full", llm=model)
    planned = with_model.search("wether in paris?", k=2)
    assert next(s for s in planned.trace if s.stage == "plan").path == "llm"
    calls = len(model.calls)
    assert tool_index.kb.llm is None and tool_index.llm is None
    offline = tool_index.search("wether in paris?", k=2, config="full")
    step = next(s for s in offline.trace if s.stage == "plan")
    assert step.path != "llm" and "no LLM" in step.note
    assert len(model.calls) == calls  # the offline search never reached the other index's model
