"""LlamaIndexLLM: a LlamaIndex LLM behind toolret's LLM protocol (valid, malformed, raising, slow).

The models are LlamaIndex's own test models (MockLLM, MockFunctionCallingLLM) and a scripted
CustomLLM — stand-ins for a model's judgement; the structured-output machinery
(``structured_predict``, output parsers, function-calling programs) is LlamaIndex's real code.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage as LIChatMessage
from llama_index.core.base.llms.types import (
    CompletionResponse,
    LLMMetadata,
    ToolCallBlock,
)
from llama_index.core.llms import CustomLLM, MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM
from pydantic import BaseModel, Field

from llamaindex_toolret import LlamaIndexLLM
from tests.llamaindex_toolret.conftest import AGENT_FUNCTIONS
from toolret import ConfigError, ToolKnowledgeBase
from toolret.llm import (
    LLM,
    ChatMessage,
    LLMError,
    MalformedOutputError,
    astructured_call,
    structured_call,
)


class City(BaseModel):
    name: str
    population_millions: float


class ScriptedCompletionLLM(CustomLLM):
    """Answers prompt i with ``script[i]`` (text or exception), or with ``respond(prompt)``."""

    script: list[Any] = Field(default_factory=list)
    respond: Callable[[str], str] | None = None
    prompts: list[str] = Field(default_factory=list)
    delay_s: float = 0.0

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    def _answer(self, prompt: str) -> CompletionResponse:
        self.prompts.append(prompt)
        item = self.respond(prompt) if self.respond else self.script[len(self.prompts) - 1]
        if isinstance(item, BaseException):
            raise item
        return CompletionResponse(text=item)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        time.sleep(self.delay_s)
        return self._answer(prompt)

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        await asyncio.sleep(self.delay_s)
        return self._answer(prompt)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        raise NotImplementedError


ASK = [
    ChatMessage(role="system", content="Answer with JSON."),
    ChatMessage(role="user", content='Describe Tokyo. Tool text: "use {query} and {{x}} literally"'),
]
TOKYO = '{"name": "Tokyo", "population_millions": 37.4}'


def test_wrapper_satisfies_the_protocol_and_is_named_after_the_model():
    llm = LlamaIndexLLM(ScriptedCompletionLLM(script=[TOKYO]))
    assert isinstance(llm, LLM)
    assert llm.name == "llamaindex:custom_llm:scripted"
    assert LlamaIndexLLM(MockLLM()).name == "llamaindex:MockLLM"
    assert LlamaIndexLLM(MockLLM(), name="mine").name == "mine"
    with pytest.raises(ConfigError, match="LLM"):
        LlamaIndexLLM("gpt-4o")  # type: ignore[arg-type]


def test_valid_answer_sync_and_async_with_messages_sent_verbatim():
    model = ScriptedCompletionLLM(script=[TOKYO, TOKYO])
    llm = LlamaIndexLLM(model)
    assert llm.generate(ASK, City, timeout=5) == City(name="Tokyo", population_millions=37.4)
    assert asyncio.run(llm.agenerate(ASK, City, timeout=5)).name == "Tokyo"
    assert "use {query} and {{x}} literally" in model.prompts[0]  # braces are data, not template slots
    assert "Answer with JSON." in model.prompts[0]


def test_malformed_answer_is_retried_with_feedback_then_accepted():
    model = ScriptedCompletionLLM(script=["Tokyo is big.", '{"name": "Tokyo"}', TOKYO])
    out = structured_call(LlamaIndexLLM(model), ASK, City, timeout=5, retries=2)
    assert out.population_millions == 37.4
    assert len(model.prompts) == 3
    assert "did not match the schema" in model.prompts[1]


def test_malformed_answer_raises_malformed_output_error():
    llm = LlamaIndexLLM(ScriptedCompletionLLM(script=["no json here"]))
    with pytest.raises(MalformedOutputError):
        llm.generate(ASK, City, timeout=5)


def test_mock_llm_that_echoes_its_prompt_ends_in_llm_error():
    with pytest.raises(LLMError, match="did not match City after 2 attempt"):
        structured_call(LlamaIndexLLM(MockLLM()), ASK, City, timeout=5, retries=1)


def test_transport_error_becomes_llm_error_without_retry():
    model = ScriptedCompletionLLM(script=[ConnectionError("connection refused"), TOKYO])
    with pytest.raises(LLMError, match="ConnectionError: connection refused"):
        structured_call(LlamaIndexLLM(model), ASK, City, timeout=5)
    assert len(model.prompts) == 1


def test_slow_model_times_out_sync_and_async():
    llm = LlamaIndexLLM(ScriptedCompletionLLM(respond=lambda prompt: TOKYO, delay_s=2.0))
    start = time.perf_counter()
    with pytest.raises(TimeoutError):
        llm.generate(ASK, City, timeout=0.2)
    with pytest.raises(TimeoutError):
        asyncio.run(llm.agenerate(ASK, City, timeout=0.2))
    with pytest.raises(LLMError, match="within 0.2s"):
        asyncio.run(astructured_call(llm, ASK, City, timeout=0.2))
    assert time.perf_counter() - start < 1.5


def test_function_calling_model_answers_through_a_tool_call():
    seen: list[str] = []

    def respond(messages: list[LIChatMessage], **kwargs: Any) -> LIChatMessage:
        tool = kwargs["tools"][0]
        seen.append(tool.metadata.name)
        block = ToolCallBlock(
            tool_call_id="1", tool_name=tool.metadata.name, tool_kwargs={"name": "Tokyo", "population_millions": 37.4}
        )
        return LIChatMessage(role="assistant", blocks=[block])

    llm = LlamaIndexLLM(MockFunctionCallingLLM(response_generator=respond))
    assert llm.generate(ASK, City, timeout=5).name == "Tokyo"
    assert asyncio.run(llm.agenerate(ASK, City, timeout=5)).population_millions == 37.4
    assert seen == ["City", "City"]


PLAN = {
    "rewritten": "Weather in Rome tomorrow and a hotel in Rome.",
    "subtasks": [
        {
            "text": "What is the weather in Rome tomorrow?",
            "variants": ["weather forecast Rome"],
            "intent": "will it rain tomorrow?",
            "tool_description": "Weather forecast for a city.",
            "expected_output": "forecast",
            "extracted_args": ["city name"],
        },
        {
            "text": "Book a hotel in Rome.",
            "variants": ["reserve a hotel room"],
            "intent": "book me a room",
            "tool_description": "Book a hotel room.",
            "expected_output": "booking",
            "extracted_args": ["city name"],
        },
    ],
    "step_back": None,
}


def test_full_preset_plans_with_the_llamaindex_model(embedder):
    def respond(prompt: str) -> str:
        return json.dumps(PLAN) if '"subtasks"' in prompt else "no opinion"

    model = ScriptedCompletionLLM(respond=respond)
    kb = ToolKnowledgeBase(llm=LlamaIndexLLM(model), config="full")
    kb.add(AGENT_FUNCTIONS)
    result = kb.search("wether in rome tmrw + book hotel there", k=2)
    plan_steps = [s for s in result.trace if s.stage == "plan"]
    assert plan_steps and plan_steps[0].path == "llm"
    assert set(result.ids) == {"get_forecast", "book_hotel"}
    assert model.prompts


def test_an_index_given_an_llm_and_no_config_uses_the_full_preset(embedder):
    """RetrievalConfig.for_llm decides "llm given => full" for ToolObjectIndex, as for LangChain."""
    from llamaindex_toolret import ToolObjectIndex

    model = LlamaIndexLLM(ScriptedCompletionLLM(respond=lambda prompt: "no opinion"))
    with_llm = ToolObjectIndex.from_objects(AGENT_FUNCTIONS[:2], llm=model)
    assert with_llm.knowledge_base.config.name == "full"
    assert (
        ToolObjectIndex.from_objects(AGENT_FUNCTIONS[:2], llm=model, config="fast").knowledge_base.config.name == "fast"
    )
    assert ToolObjectIndex.from_objects(AGENT_FUNCTIONS[:2]).knowledge_base.config.name == "fast"
