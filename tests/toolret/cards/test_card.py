"""Condensed agent-facing cards: schema validation, the offline card, the LLM writer and its fallback."""

from __future__ import annotations

import json

import pytest

from toolret import ToolDoc, ToolParam
from toolret.cards import (
    LLMCardWriter,
    agent_description,
    card_problems,
    offline_card,
)
from toolret.eval.datasets import load_dataset
from toolret.llm import ScriptedLLM

DOC = ToolDoc(
    name="convert_currency",
    description="Convert an amount of money between two currencies at today's rate. Rates from the ECB.",
    parameters=[
        ToolParam(name="amount", type="number", required=True),
        ToolParam(name="to", type="string", required=True, enum=["EUR", "USD"]),
        ToolParam(name="round", type="boolean"),
    ],
)
VALID = {
    "description": "Converts money between currencies.",
    "usage": "Give amount and target currency.",
    "example": {"name": "convert_currency", "arguments": {"amount": 20, "to": "EUR"}},
}


def test_offline_cards_are_valid_for_every_tool_of_a_real_registry(benchmarks):
    docs = load_dataset(benchmarks / "bfcl").tool_docs()
    bad = {d.name: card_problems(offline_card(d), d) for d in docs}
    assert {name: p for name, p in bad.items() if p} == {}
    assert offline_card(DOC).example.arguments == {"amount": 1.0, "to": "EUR"}


def test_llm_card_is_used_when_valid_and_retried_then_replaced_when_not():
    good = LLMCardWriter(ScriptedLLM([json.dumps(VALID)], name="m"))
    [doc] = good.write([DOC])
    assert doc.expansion.card["source"] == "llm:m:card@v1"
    assert agent_description(doc).startswith("Converts money between currencies.\nUsage:")
    assert agent_description(doc, condensed=False) == DOC.description

    wrong = {**VALID, "example": {"name": "convert_currency", "arguments": {"amount": 20, "currency": "EUR"}}}
    llm = ScriptedLLM([json.dumps(wrong), json.dumps(wrong)])
    [doc] = LLMCardWriter(llm).write([DOC])
    assert len(llm.calls) == 2 and "unknown argument 'currency'" in llm.calls[1][-1].content
    assert doc.expansion.card["source"] == "offline"  # still invalid: the offline card replaces it


@pytest.mark.parametrize("failure", [TimeoutError(), "not json"])
def test_failing_card_writer_falls_back_to_the_offline_card(failure):
    [doc] = LLMCardWriter(ScriptedLLM([failure] * 4), retries=1).write([DOC])
    assert doc.expansion.card == offline_card(DOC).model_dump()


def test_cards_are_cached_by_tool_model_and_prompt():
    writer = LLMCardWriter(ScriptedLLM([json.dumps(VALID)]))
    writer.write([DOC])
    writer.write([DOC])
    assert writer.calls == 1
