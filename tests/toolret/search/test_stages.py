"""The full preset: LLM planning when the knowledge base has an LLM, the offline path when not."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from toolret import ToolDoc
from toolret.llm import ScriptedLLM

TOOLS = [
    ToolDoc(
        name="get_weather",
        description="Current weather and forecast for a city.",
        response="Temperature, wind and sky conditions.",
    ),
    ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
    ToolDoc(
        name="find_restaurants", description="Find restaurants near a place.", examples=["where can I eat sushi nearby"]
    ),
    ToolDoc(name="send_email", description="Send an e-mail message."),
]


@pytest.fixture()
def kb(make_kb):
    return make_kb(TOOLS)


def _plan(**extra) -> str:
    plan = {
        "rewritten": "weather in Lisbon tomorrow and a sushi place for dinner",
        "subtasks": [
            {
                "text": "weather in Lisbon tomorrow",
                "variants": ["Lisbon forecast"],
                "tool_description": "weather forecast for a city",
                "expected_output": "temperature and sky conditions",
                "extracted_args": ["city name", "date"],
            },
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
    # same stages as balanced; the LLM ones say they ran offline, and reflection (balanced has none:
    # offline coverage judging gained nothing in the stage ablation) says it was skipped
    assert [s.stage for s in full.trace] == [s.stage for s in balanced.trace] + ["reflect"]
    assert full.trace[-1].path == "skipped" and "no LLM" in full.trace[-1].note


def test_full_with_llm_uses_subtasks_variants_and_field_queries(kb):
    llm = ScriptedLLM(
        [
            _plan(),
            '{"ranking": ["find_restaurants", "get_weather"], "irrelevant": []}',
            '{"uncovered": [], "rewrites": {}}',
        ]
    )
    kb.llm = llm
    result = kb.search("wether in lisbon tmrw n sushi for dinner", k=2, config="full")
    assert result.ids == ["find_restaurants", "get_weather"]  # the LLM's order
    assert {t.subtask for t in result.tools} <= {None, "weather in Lisbon tomorrow", "a sushi place for dinner"}
    paths = {s.stage: s.path for s in result.trace}
    assert paths["plan"] == paths["rerank"] == paths["reflect"] == "llm"
    assert len(llm.calls) == 3
    prompt = "\n".join(m.content for m in llm.calls[0])
    assert '<data name="query">' in prompt and "wether in lisbon" in prompt
    rerank_prompt = "\n".join(m.content for m in llm.calls[1])
    assert "Temperature, wind and sky conditions." in rerank_prompt  # the full multi-field card


def test_full_reflection_requeries_what_the_judge_calls_uncovered(kb):
    plan = _plan(subtasks=[{"text": "weather in Lisbon tomorrow"}, {"text": "e-mail the forecast to Ana"}])
    # the reranker drops everything e-mail related; the judge says sub-task 2 is uncovered
    drop = '["send_email", "convert_currency", "find_restaurants"]'
    llm = ScriptedLLM(
        [
            plan,
            '{"ranking": ["get_weather"], "irrelevant": ' + drop + "}",
            '{"uncovered": [2], "rewrites": {"2": "send an e-mail message"}}',
            '{"uncovered": [], "rewrites": {}}',
        ]
    )
    kb.llm = llm
    result = kb.search("weather in Lisbon tomorrow, then e-mail the forecast to Ana", k=2, config="full")
    assert "send_email" in result.ids and "get_weather" in result.ids
    stages = [s.stage for s in result.trace]
    assert stages.count("reflect") == 2 and stages.count("requery") == 1
    requery = next(s for s in result.trace if s.stage == "requery")
    assert "added 1 (send_email)" in requery.note


def test_full_reflection_is_bounded_by_reflect_rounds(kb):
    always_uncovered = '{"uncovered": [1, 2], "rewrites": {}}'
    kb.llm = ScriptedLLM([_plan(), '{"ranking": [], "irrelevant": []}'] + [always_uncovered] * 10)
    result = kb.search("weather in Lisbon and sushi", k=2, config="full")
    stages = [s.stage for s in result.trace]
    assert stages.count("reflect") == 2 and stages.count("requery") == 2  # reflect_rounds=2
    assert set(result.ids) <= set(kb.ids) and len(result.ids) == 2


def test_reranker_hallucinations_and_failures_never_reach_the_result(kb):
    kb.llm = ScriptedLLM(
        [
            _plan(),
            '{"ranking": ["DROP_ALL_TABLES", "get_weather"], "irrelevant": ["nope"]}',
            RuntimeError("judge down"),
            RuntimeError("judge down"),
            RuntimeError("judge down"),
            RuntimeError("judge down"),
        ]
    )
    result = kb.search("weather in Lisbon and sushi", k=3, config="full")
    assert set(result.ids) <= set(kb.ids) and result.ids[0] == "get_weather"
    rerank = next(s for s in result.trace if s.stage == "rerank")
    assert rerank.path == "llm" and "ignored 2 unknown id(s)" in rerank.note
    reflect = next(s for s in result.trace if s.stage == "reflect")
    assert reflect.path == "fallback" and "judge down" in reflect.note


def test_full_without_llm_marks_rerank_and_reflection_as_fallbacks(kb):
    result = kb.search("weather in Lisbon and also send an e-mail", k=2, config="full")
    paths = {s.stage: (s.path, s.note) for s in result.trace}
    assert paths["rerank"][0] == "fallback" and "no LLM" in paths["rerank"][1]
    assert paths["reflect"][0] == "skipped" and "no LLM" in paths["reflect"][1]


@pytest.mark.parametrize(
    "failure", [TimeoutError(), "not json at all", '{"subtasks": []}', RuntimeError("server down")]
)
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


def test_search_history_and_feedback_docs_reach_the_llm_planner(kb):
    llm = ScriptedLLM(
        [
            _plan(),
            '{"ranking": ["find_restaurants", "get_weather"], "irrelevant": []}',
            '{"uncovered": [], "rewrites": {}}',
        ]
    )
    kb.llm = llm
    chat = [("user", "I land in Lisbon tomorrow morning"), {"role": "ai", "content": "Have a good flight!"}]
    result = kb.search("weather there, and a sushi place for dinner", k=2, config="full", conversation=chat)
    prompt = llm.calls[0][-1].content
    assert "user: I land in Lisbon tomorrow morning\nassistant: Have a good flight!" in prompt
    # pseudo-relevance feedback (full: prf_docs=3): the raw query's best BM25 tools, as data
    assert "get_weather: Current weather and forecast for a city." in prompt
    plan_step = next(s for s in result.trace if s.stage == "plan")
    assert "2 history turn(s)" in plan_step.note and "feedback doc(s)" in plan_step.note


def test_prf_off_and_offline_searches_ignore_history(kb):
    llm = ScriptedLLM([_plan(), '{"ranking": [], "irrelevant": []}', '{"uncovered": [], "rewrites": {}}'])
    kb.llm = llm
    kb.search("weather and sushi", k=2, config=kb.config.preset("full").model_copy(update={"prf_docs": 0}))
    assert '<data name="feedback">' not in llm.calls[0][-1].content
    chat = [("user", "I land in Lisbon tomorrow")]
    assert (
        kb.search("weather there", k=2, config="balanced", conversation=chat).ids
        == kb.search("weather there", k=2, config="balanced").ids
    )


async def test_a_per_search_llm_is_used_without_changing_the_knowledge_base(kb):
    replies = [
        _plan(),
        '{"ranking": ["find_restaurants", "get_weather"], "irrelevant": []}',
        '{"uncovered": [], "rewrites": {}}',
    ]
    own = ScriptedLLM(replies)
    result = kb.search("wether in lisbon tmrw n sushi for dinner", k=2, config="full", llm=own)
    assert result.ids == ["find_restaurants", "get_weather"] and len(own.calls) == 3
    assert kb.llm is None
    assert kb.search("wether in lisbon tmrw", k=2, config="full").trace[0].path == "fallback"
    again = ScriptedLLM(replies)
    result = await kb.asearch("wether in lisbon tmrw n sushi for dinner", k=2, config="full", llm=again)
    assert {s.stage: s.path for s in result.trace}["plan"] == "llm" and len(again.calls) == 3


_SLOW_S = 0.1


def _slowed(fn: Callable[..., Any]) -> Callable[..., Any]:
    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(_SLOW_S)
        return fn(*args, **kwargs)

    return slow


@pytest.mark.parametrize(
    ("slowed", "stage", "other"),
    [("dense_search", "candidates", "mftr"), ("spot_arguments", "mftr", "candidates")],
)
def test_each_stage_reports_its_own_measured_time_not_a_share(kb, monkeypatch, slowed, stage, other):
    from toolret.scoring import candidates as ranking

    monkeypatch.setattr(ranking, slowed, _slowed(getattr(ranking, slowed)))
    steps = {s.stage: s for s in kb.search("weather in Lisbon", k=2).trace}
    assert steps[stage].ms >= _SLOW_S * 1000 > 2 * steps[other].ms, (steps[stage].ms, steps[other].ms)


def test_the_query_text_step_reports_its_measured_time(kb, monkeypatch):
    from toolret.search import query_text

    monkeypatch.setattr(query_text, "clean_query", _slowed(query_text.clean_query))
    step = kb.search("weather in Lisbon " + "QUJD" * 40, k=2).trace[0]
    assert step.stage == "query_text" and step.ms >= _SLOW_S * 1000


def test_a_sub_task_weighs_words_as_its_whole_request_does(kb, monkeypatch):
    # A sub-task is a fragment of the same request in the same registry: its ranking takes the whole
    # request's strength of the best word match (mftr.lexical_strength), not its own shorter text's.
    import toolret.search.stages as stages

    seen: list[tuple[str, float | None, float]] = []
    real = stages.rank_tools

    def spy(snap, text, *args, strength=None, **kwargs):
        ranking = real(snap, text, *args, strength=strength, **kwargs)
        seen.append((text, strength, ranking.strength))
        return ranking

    monkeypatch.setattr(stages, "rank_tools", spy)
    kb.llm = ScriptedLLM([_plan(), '{"ranking": [], "irrelevant": []}', '{"uncovered": [], "rewrites": {}}'])
    kb.search("wether in lisbon tmrw n sushi for dinner", k=2, config="full")
    whole, *parts = seen
    assert whole[1] is None and whole[2] > 0  # the whole request reads its own
    assert len(parts) >= 2 and all(given == whole[2] == used for _, given, used in parts)
