"""Pre-retrieval expansion: the offline profile, and the LLM expander with its judge and cache."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from toolret import RetrievalConfig, ToolDoc, ToolKnowledgeBase, ToolParam
from toolret.documents.text import first_sentence
from toolret.index.expansion import (
    ExpansionCache,
    LLMExpander,
    expand_offline,
)
from toolret.llm import ChatMessage, ScriptedLLM

WEATHER = ToolDoc(
    name="getCityWeather",
    description="Current weather conditions for a city. Data from METAR stations.",
    parameters=[ToolParam(name="city_name", type="string", required=True)],
    metadata={"tags": ["Weather", "Geo"]},
)
BARE = ToolDoc(name="xq_7")  # nothing but a name: nothing to derive a function from

GOOD = {
    "function": "Reports the current weather conditions for a named city.",
    "tags": ["Weather", "city", "conditions"],
    "when_to_use": "When a user asks about weather right now in a city.",
    "limitations": "",
    "hypothetical_questions": ["Is it raining in Oslo right now?", "How warm is it in Lima today?"],
    "key_topics": ["current weather"],
    "inferred_response": "Temperature and sky conditions.",
    "inferred_examples": ["weather in Paris"],
}


def _doc(name: str) -> ToolDoc:
    return ToolDoc(name=name, description=f"Tool {name} does {name} things.")


# ----------------------------------------------------------------------------- offline


def test_offline_profile_takes_the_first_sentence_and_name_keywords():
    doc = expand_offline(WEATHER)
    exp = doc.expansion
    assert exp.function == "Current weather conditions for a city."
    assert exp.tags[:3] == ["city", "weather", "name"] and "geo" in exp.tags
    assert exp.sources == {"function": "offline:first_sentence", "tags": "offline:names", "card": "offline:card"}
    assert exp.card is not None and exp.card["source"] == "offline"
    assert doc.description == WEATHER.description and doc.parameters == WEATHER.parameters  # source untouched
    assert doc.field_text("profile").startswith("Current weather conditions for a city.\ncity, weather")
    assert doc.source_hash == WEATHER.source_hash and doc.content_hash != WEATHER.content_hash


def test_offline_expansion_never_invents_a_function():
    exp = expand_offline(BARE).expansion
    assert exp.function == "" and "function" not in exp.sources
    assert first_sentence("") == "" and len(first_sentence("word " * 50).split()) == 20


def test_inferred_fields_fill_only_missing_mftr_fields():
    exp = WEATHER.expansion.model_copy(update={"inferred_response": "Temperature.", "inferred_examples": ["rain?"]})
    doc = WEATHER.model_copy(update={"expansion": exp})
    assert doc.field_text("response") == "Temperature." and doc.field_text("examples") == "rain?"
    real = doc.model_copy(update={"response": "A METAR report.", "examples": ["wind in Oslo"]})
    assert real.field_text("response") == "A METAR report." and real.field_text("examples") == "wind in Oslo"


# ----------------------------------------------------------------------------- LLM expander


def _judge_ok(_: list[ChatMessage]) -> str:
    return '{"unfaithful": []}'


def test_expander_writes_every_field_marked_as_generated():
    llm = ScriptedLLM([json.dumps(GOOD), _judge_ok], name="m1")
    [doc] = LLMExpander(llm).expand([WEATHER])
    exp = doc.expansion
    assert exp.function == GOOD["function"] and exp.tags == ["weather", "city", "conditions"]
    assert exp.hypothetical_questions == GOOD["hypothetical_questions"] and exp.key_topics == ["current weather"]
    assert exp.inferred_response == "Temperature and sky conditions."
    assert exp.sources["hypothetical_questions"] == "llm:m1:expand@v1"
    assert "limitations" not in exp.sources  # empty answers are not stored
    prompt = llm.calls[0][-1].content
    assert '<data name="tool">' in prompt and "city_name (string, required)" in prompt


def test_judge_rejection_regenerates_once_then_keeps_or_drops():
    bad_then_fixed = {**GOOD, "function": "Books flights."}
    llm = ScriptedLLM(
        [
            json.dumps(bad_then_fixed),
            '{"unfaithful": ["function", "key_topics"], "reasons": {"function": "not in the doc"}}',
            json.dumps({**GOOD, "key_topics": ["flight booking"]}),  # function fixed, topics still wrong
            '{"unfaithful": ["key_topics"]}',
        ]
    )
    expander = LLMExpander(llm)
    [doc] = expander.expand([WEATHER])
    assert doc.expansion.function == GOOD["function"]  # regenerated and accepted
    assert doc.expansion.key_topics == []  # rejected twice: dropped
    assert len(llm.calls) == 4
    assert "function" in llm.calls[2][-1].content and "key_topics" in llm.calls[2][-1].content  # redo list as data
    report = expander.last_report
    assert (report.generated, report.regenerated_fields, report.dropped_fields, report.llm_calls) == (1, 2, 1, 4)


@pytest.mark.parametrize("failure", ["this is not json", "[1, 2]", TimeoutError(), RuntimeError("server down")])
def test_malformed_or_failing_generation_keeps_the_offline_expansion(failure):
    llm = ScriptedLLM([failure] * 2)
    expander = LLMExpander(llm, retries=1)
    offline = expand_offline(WEATHER)
    [doc] = expander.expand([offline])
    assert doc.expansion == offline.expansion
    assert expander.last_report.failed == 1 and expander.last_report.generated == 0


def test_unchanged_reindex_makes_zero_llm_calls_across_processes(tmp_path):
    docs = [_doc(f"t{i}") for i in range(3)]
    llm = ScriptedLLM(lambda_answers(6))
    first = LLMExpander(llm, cache=tmp_path / "cache").expand(docs)
    assert len(llm.calls) == 6  # generation + judge, three tools
    fresh = ScriptedLLM([])  # any call would fail: the script is empty
    again = LLMExpander(fresh, cache=ExpansionCache(tmp_path / "cache")).expand(docs)
    assert fresh.calls == [] and [d.expansion for d in again] == [d.expansion for d in first]
    changed = [docs[0], docs[1].model_copy(update={"description": "Now it does other things."}), docs[2]]
    llm2 = ScriptedLLM(lambda_answers(2))
    LLMExpander(llm2, cache=tmp_path / "cache").expand(changed)
    assert len(llm2.calls) == 2  # only the changed tool


def lambda_answers(n: int) -> list:
    """Alternating generation / judge answers that work in any order of tools."""

    def answer(messages: list[ChatMessage]) -> str:
        if "Generated documentation" in messages[-1].content:
            return '{"unfaithful": []}'
        return json.dumps({"function": "Does things.", "hypothetical_questions": ["do the thing"]})

    return [answer] * n


def test_generation_runs_concurrently_within_the_limit():
    in_flight = {"now": 0, "max": 0}

    class SlowLLM:
        name = "slow"

        def generate(self, messages, schema, *, timeout):  # pragma: no cover - the expander is async
            raise AssertionError("sync path not expected")

        async def agenerate(self, messages, schema: type[BaseModel], *, timeout):
            in_flight["now"] += 1
            in_flight["max"] = max(in_flight["max"], in_flight["now"])
            await asyncio.sleep(0.02)
            in_flight["now"] -= 1
            return schema.model_validate({"function": "x"} if "function" in schema.model_fields else {})

    LLMExpander(SlowLLM(), concurrency=3, judge=False).expand([_doc(f"t{i}") for i in range(9)])
    assert in_flight["max"] == 3


async def test_expand_works_inside_a_running_event_loop():
    llm = ScriptedLLM(lambda_answers(2))
    [doc] = LLMExpander(llm).expand([_doc("t0")])
    assert doc.expansion.function == "Does things."


# ----------------------------------------------------------------------------- knowledge base


def test_knowledge_base_indexes_generated_questions_and_reindexes_for_free(embedder):
    def answer(messages: list[ChatMessage]) -> str:
        text = messages[-1].content
        if "Generated documentation" in text:
            return '{"unfaithful": []}'
        if "xq_7" in text:
            return json.dumps(
                {
                    "hypothetical_questions": ["translate this sentence into Klingon"],
                    "key_topics": ["klingon translation"],
                }
            )
        return json.dumps({"function": "Weather now for a city."})

    tools = [BARE, WEATHER, ToolDoc(name="send_email", description="Send an e-mail message.")]
    llm = ScriptedLLM([answer] * 6)
    kb = ToolKnowledgeBase(embedder=embedder, expander=LLMExpander(llm))
    kb.add(tools)
    assert kb.search("translate into Klingon please", k=1).ids == ["xq_7"]  # found only through its questions
    hit = kb.search("translate into Klingon please", k=1).tools[0]
    assert "questions" in hit.field_scores and "topics" in hit.field_scores
    calls = len(llm.calls)
    report = kb.sync(tools)
    assert len(llm.calls) == calls and report.unchanged == 3  # cached: zero calls, nothing re-embedded


def test_offline_expansion_can_be_switched_off(embedder):
    kb = ToolKnowledgeBase(embedder=embedder, offline_expansion=False)
    kb.add([WEATHER])
    assert kb.get("getCityWeather").expansion.function == ""


def test_fields_can_be_switched_off_per_search(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([WEATHER, ToolDoc(name="send_email", description="Send an e-mail message.")])
    only_params = RetrievalConfig(fields=("parameters",))
    hit = kb.search("city name", k=1, config=only_params).tools[0]
    assert set(hit.field_scores) == {"parameters"}
    with pytest.raises(Exception, match="unknown field"):
        RetrievalConfig(fields=("bogus",))
