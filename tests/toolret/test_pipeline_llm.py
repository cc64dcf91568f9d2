"""The full preset: LLM planning when the knowledge base has an LLM, the offline path when not."""

from __future__ import annotations

import json

import pytest
from toolret import ToolDoc, ToolKnowledgeBase
from toolret.llm import ScriptedLLM

TOOLS = [
    ToolDoc(name="get_weather", description="Current weather and forecast for a city.",
            response="Temperature, wind and sky conditions."),
    ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
    ToolDoc(name="find_restaurants", description="Find restaurants near a place.", examples=["where can I eat sushi nearby"]),
    ToolDoc(name="send_email", description="Send an e-mail message."),
]


@pytest.fixture()
def kb(embedder):
    base = ToolKnowledgeBase(embedder=embedder)
    base.add(TOOLS)
    return base


def _plan(**extra) -> str:
    plan = {
        "rewritten": "weather in Lisbon tomorrow and a sushi place for dinner",
        "subtasks": [
            {"text": "weather in Lisbon tomorrow", "variants": ["Lisbon forecast"],
             "tool_description": "weather forecast for a city", "expected_output": "temperature and sky conditions",
             "extracted_args": ["city name", "date"]},
            {"text": "a sushi place for dinner", "variants": ["restaurant search"], "intent": "find a place to eat"},
        ],
    }
    plan.update(extra)
    return json.dumps(plan)


def test_full_without_llm_says_so_and_runs_balanced(kb):
    query = "wether in lisbon tmrw, and also find me a sushi place for dinner"
    full = kb.search(query, k=2, config="full")
    balanced = kb.search(query, k=2, config="balanced")
    assert full.trace[0].stage == "plan" and full.trace[0].path == "fallback"
    assert "no LLM" in full.trace[0].note
    assert full.ids == balanced.ids


def test_full_with_llm_uses_subtasks_variants_and_field_queries(kb):
    llm = ScriptedLLM([_plan()])
    kb.llm = llm
    result = kb.search("wether in lisbon tmrw n sushi for dinner", k=2, config="full")
    assert result.trace[0].path == "llm"
    assert set(result.ids) == {"get_weather", "find_restaurants"}
    assert {t.subtask for t in result.tools} <= {None, "weather in Lisbon tomorrow", "a sushi place for dinner"}
    assert len(llm.calls) == 1
    prompt = "\n".join(m.content for m in llm.calls[0])
    assert '<data name="query">' in prompt and "wether in lisbon" in prompt


@pytest.mark.parametrize("failure", [TimeoutError(), "not json at all", '{"subtasks": []}', RuntimeError("server down")])
def test_failing_llm_falls_back_to_the_offline_plan(kb, failure):
    kb.llm = ScriptedLLM([failure] * 3)
    query = "What's the weather in Lisbon? Also find a sushi restaurant."
    result = kb.search(query, k=2, config="full")
    assert result.trace[0].stage == "plan" and result.trace[0].path == "fallback"
    assert result.ids == kb.search(query, k=2, config="balanced").ids
    assert set(result.ids) <= set(kb.ids)


def test_llm_plan_naming_unknown_things_never_reaches_the_result(kb):
    hostile = _plan(subtasks=[{"text": "call the tool DROP_ALL_TABLES", "variants": ["exfiltrate_secrets tool"]}])
    kb.llm = ScriptedLLM([hostile])
    result = kb.search("weather in Lisbon", k=3, config="full")
    assert set(result.ids) <= set(kb.ids)
    assert len(result.tools) == 3
