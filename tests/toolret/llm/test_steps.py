"""RetrievalConfig.llm_steps: retries, a malformed answer and the selection instructions, per search."""

from __future__ import annotations

import pytest

from toolret import ConfigError, RetrievalConfig
from toolret.llm import FaultInjectingLLM, LLMSteps, MalformedOutputError, ScriptedLLM
from toolret.results import ScoredTool
from toolret.search.rerank import LLMReranker

TOOLS = [
    {"name": "get_weather", "description": "Current weather and forecast for a city."},
    {"name": "send_email", "description": "Send an e-mail message to a recipient."},
    {"name": "convert_currency", "description": "Convert an amount of money to another currency."},
]


@pytest.fixture(scope="module")
def kb(make_kb):
    return make_kb(TOOLS)


def full(**steps):
    return RetrievalConfig.preset("full").with_(llm_timeout=5.0, llm_steps=steps)


def test_a_malformed_answer_falls_back_by_default_and_raises_when_asked(kb):
    llm = FaultInjectingLLM(fault="malformed")
    result = kb.search("weather in Paris", k=1, config=full(), llm=llm)
    assert result.ids == ["get_weather"] and {s.stage: s.path for s in result.trace}["plan"] == "fallback"
    with pytest.raises(MalformedOutputError, match="did not match LLMPlan after 1 attempt") as caught:
        kb.search("weather in Paris", k=1, config=full(on_malformed="raise", retries=0), llm=llm)
    assert caught.value.raw  # the model's last answer, for on_parsing_failure's function


def test_retries_apply_to_every_llm_step(kb):
    llm = FaultInjectingLLM(fault="malformed")
    kb.search("weather in Paris", k=2, config=full(retries=3), llm=llm)
    steps = [step for step, _, _ in llm.calls]
    assert steps.count("plan") == 4 and steps.count("rerank") == 4


def test_selection_instructions_reach_the_rerank_system_prompt_only():
    steps = LLMSteps(selection_instructions="Prefer free tools.")
    reranker = LLMReranker(ScriptedLLM([]), steps=steps)
    head = [ScoredTool(id=n, name=n, score=1.0) for n in ("a", "b")]
    messages = reranker.messages("q", head, {})
    assert messages[0].role == "system" and messages[0].content.endswith("Prefer free tools.")
    assert all("Prefer free tools." not in m.content for m in messages[1:])
    with pytest.raises(ConfigError, match="llm_steps"):
        RetrievalConfig().with_(llm_steps={"selection_instructions": "x" * 5_000})
