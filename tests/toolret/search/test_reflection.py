"""Self-reflection: uncovered sub-tasks are found and re-queried, within bounded rounds."""

from __future__ import annotations

import functools
import json

from toolret.documents.tool_doc import ToolDoc
from toolret.llm import ScriptedLLM
from toolret.llm.prompts import REFLECT_V1
from toolret.results import ScoredTool, TraceStep
from toolret.search.planning import QueryPlan, SubTask
from toolret.search.reflection import (
    Coverage,
    LLMCoverageJudge,
    coverage_offline,
    fill_uncovered,
    judge_coverage,
    offline_rewrite,
)

WEATHER = "What's the weather in Paris tomorrow?"
TABLE = "Can you book a table for two at 8pm?"
PLAN = QueryPlan(
    original=f"{WEATHER} {TABLE}",
    rewritten=f"{WEATHER} {TABLE}",
    subtasks=[SubTask(text=WEATHER, variants=[WEATHER]), SubTask(text=TABLE, variants=[TABLE])],
)
SINGLE = QueryPlan(original=WEATHER, rewritten=WEATHER, subtasks=[SubTask(text=WEATHER)])


def tool(tool_id: str, score: float, subtask: str | None = None) -> ScoredTool:
    return ScoredTool(id=tool_id, name=tool_id, score=score, subtask=subtask)


class Search:
    """A recording search_fn over fixed results per query (anything else: nothing found)."""

    def __init__(self, results: dict[str, list[ScoredTool]] | None = None, default: list[ScoredTool] | None = None):
        self.results = results or {}
        self.default = default or []
        self.queries: list[tuple[str, int]] = []

    def __call__(self, query: str, n: int) -> list[ScoredTool]:
        self.queries.append((query, n))
        return self.results.get(query, self.default)[:n]


def ids(tools: list[ScoredTool]) -> list[str]:
    return [t.id for t in tools]


def reflect(plan, tools, *, search_fn, judge=None, max_rounds, k, threshold=0.4):
    """Reflection rounds as the pipeline's reflect stage runs them: judge coverage, then fill the gaps."""
    selected = [t for n, t in enumerate(tools) if t.id not in {u.id for u in tools[:n]}][:k]
    if max_rounds < 1 or not plan.subtasks or k < 1:
        return selected, [TraceStep(stage="reflect", path="skipped", ms=0.0, note="")]
    cache: dict[str, list[ScoredTool]] = {}
    steps = []
    for round_no in range(1, max_rounds + 1):
        coverage, path, extra = judge_coverage(plan, selected, judge=judge, threshold=threshold)
        added, failed = fill_uncovered(plan, selected, coverage, search_fn=search_fn, k=k, cache=cache)
        steps.append(
            TraceStep(
                stage="reflect",
                path=path,
                ms=0.0,
                note=f"round {round_no}: {len(coverage.uncovered)} uncovered, added {len(added)}"
                + (f" ({', '.join(added)})" if added else "")
                + extra
                + failed,
            )
        )
        if not coverage.uncovered:
            break
    return selected, steps


# ----------------------------------------------------------------------------- offline coverage


def test_offline_coverage_flags_a_subtask_without_a_tool_above_threshold():
    tools = [tool("forecast", 0.6, WEATHER), tool("maps", 0.2, TABLE), tool("news", 0.7)]
    assert coverage_offline(PLAN, tools, threshold=0.35) == [1]
    assert coverage_offline(PLAN, [*tools, tool("reserve", 0.5, TABLE)], threshold=0.35) == []
    assert coverage_offline(PLAN, [], threshold=0.35) == [0, 1]


def test_a_single_subtask_plan_is_covered_by_the_best_tool_tagged_or_not():
    assert coverage_offline(SINGLE, [tool("forecast", 0.5)], threshold=0.35) == []
    assert coverage_offline(SINGLE, [tool("forecast", 0.3)], threshold=0.35) == [0]


def test_offline_rewrite_keeps_only_content_words():
    assert offline_rewrite(TABLE) == "book table two 8pm"
    assert offline_rewrite("Can you do it?") == "Can you do it?"  # nothing but stopwords: keep the text


# ----------------------------------------------------------------------------- reflect


def test_requery_adds_a_tool_for_the_uncovered_subtask():
    search = Search({"book table two 8pm": [tool("forecast", 0.9), tool("reserve_table", 0.55)]})
    tools = [tool("forecast", 0.6, WEATHER), tool("news", 0.5)]
    out, steps = reflect(PLAN, tools, search_fn=search, max_rounds=3, k=4, threshold=0.35)
    assert ids(out) == ["forecast", "news", "reserve_table"]
    assert out[-1].subtask == TABLE and out[-1].score == 0.55
    assert [s.note for s in steps] == ["round 1: 1 uncovered, added 1 (reserve_table)", "round 2: 0 uncovered, added 0"]
    assert all(s.stage == "reflect" and s.path == "offline" for s in steps)
    assert search.queries == [("book table two 8pm", 5)]


def test_a_full_list_trades_the_lowest_tool_of_a_crowded_subtask():
    search = Search(default=[tool("reserve_table", 0.5)])
    tools = [tool("forecast", 0.6, WEATHER), tool("umbrella_shop", 0.3, WEATHER), tool("maps", 0.2, TABLE)]
    out, _ = reflect(PLAN, tools, search_fn=search, max_rounds=1, k=3, threshold=0.35)
    assert ids(out) == ["forecast", "reserve_table", "maps"]  # umbrella_shop's slot


def test_a_subtask_keeps_its_only_tool_and_a_better_tool_is_never_displaced():
    tools = [tool("forecast", 0.6, WEATHER), tool("radar", 0.58, WEATHER), tool("maps", 0.2, TABLE)]
    out, steps = reflect(
        PLAN, tools, search_fn=Search(default=[tool("reserve_table", 0.4)]), max_rounds=1, k=3, threshold=0.35
    )
    assert out == tools and steps[0].note == "round 1: 1 uncovered, added 0"
    solo = [tool("forecast", 0.6, WEATHER), tool("maps", 0.2, TABLE)]
    out, _ = reflect(
        PLAN, solo, search_fn=Search(default=[tool("reserve_table", 0.9)]), max_rounds=1, k=2, threshold=0.35
    )
    assert out == solo


def test_tools_found_for_the_whole_request_are_never_displaced():
    tools = [tool("forecast", 0.6, WEATHER), tool("news", 0.1), tool("trends", 0.1), tool("maps", 0.2, TABLE)]
    out, _ = reflect(
        PLAN, tools, search_fn=Search(default=[tool("reserve_table", 0.9)]), max_rounds=2, k=4, threshold=0.35
    )
    assert out == tools


def test_rounds_are_bounded_when_the_search_never_finds_anything():
    search = Search()
    tools = [tool("forecast", 0.6, WEATHER)]
    out, steps = reflect(PLAN, tools, search_fn=search, max_rounds=3, k=5, threshold=0.35)
    assert out == tools
    assert [s.note for s in steps] == [f"round {r}: 1 uncovered, added 0" for r in (1, 2, 3)]
    assert len(search.queries) == 1  # the same rewritten query is searched once


def test_never_more_than_k_tools_and_never_a_duplicate_id():
    search = Search(default=[tool("forecast", 0.95), tool("radar", 0.9), tool("reserve_table", 0.8)])
    tools = [tool("forecast", 0.3, WEATHER), tool("forecast", 0.3, WEATHER), tool("maps", 0.1, TABLE)]
    out, _ = reflect(PLAN, tools, search_fn=search, max_rounds=4, k=3, threshold=0.35)
    assert len(out) <= 3 and len(set(ids(out))) == len(out)
    # round 1: radar is appended for the weather; reserve_table takes the weaker weather tool's slot
    assert ids(out) == ["reserve_table", "maps", "radar"]


def test_a_failing_search_leaves_the_selection_and_says_so():
    def broken(query: str, n: int) -> list[ScoredTool]:
        raise RuntimeError("index closed")

    tools = [tool("forecast", 0.6, WEATHER)]
    out, steps = reflect(PLAN, tools, search_fn=broken, max_rounds=1, k=3, threshold=0.35)
    assert out == tools and "re-query failed: RuntimeError" in steps[0].note


def test_zero_rounds_skip_reflection():
    out, steps = reflect(PLAN, [tool("a", 0.1)], search_fn=Search(), max_rounds=0, k=3, threshold=0.35)
    assert ids(out) == ["a"] and [s.path for s in steps] == ["skipped"]


# ----------------------------------------------------------------------------- LLM judge

DOCS = {"forecast": ToolDoc(name="forecast", description="Weather forecast for a city.")}


def test_llm_judge_numbers_are_validated_and_rewrites_kept_for_uncovered_only():
    answer = json.dumps(
        {"uncovered": [2, 2, 0, 9, "x"], "rewrites": {"1": "weather", "2": "reserve a restaurant table"}}
    )
    judge = LLMCoverageJudge(ScriptedLLM([answer]))
    coverage, step = judge.judge(PLAN, [tool("forecast", 0.6, WEATHER)], DOCS, timeout=1.0)
    assert coverage == Coverage(uncovered=[1], rewrites={1: "reserve a restaurant table"})
    assert step.path == "llm" and "ignored 2 out-of-range number(s)" in step.note and REFLECT_V1.id in step.note


def test_llm_judge_sees_subtasks_and_cards_as_data():
    llm = ScriptedLLM(['{"uncovered": []}'])
    LLMCoverageJudge(llm).judge(PLAN, [tool("forecast", 0.6, WEATHER)], DOCS, timeout=1.0)
    prompt = llm.calls[0][-1].content
    assert f"[2] {TABLE}" in prompt
    assert f"id: forecast | forecast: Weather forecast for a city. | covers: {WEATHER}" in prompt
    assert prompt.count("</data>") == 3


def test_llm_judge_failure_falls_back_to_offline_coverage():
    for llm in (
        ScriptedLLM([TimeoutError("slow")]),
        ScriptedLLM(["no idea", "still no idea"]),
        ScriptedLLM(['{"uncovered": [2]}'], delay_s=0.5),
    ):
        coverage, step = LLMCoverageJudge(llm).judge(
            PLAN, [tool("forecast", 0.6, WEATHER)], DOCS, timeout=0.1, threshold=0.35
        )
        assert coverage == Coverage(uncovered=[1])
        assert step.path == "fallback" and "offline coverage (threshold 0.35)" in step.note


def test_reflect_uses_the_judges_rewrite_and_reports_its_path():
    answers = [json.dumps({"uncovered": [2], "rewrites": {"2": "restaurant reservation"}}), '{"uncovered": []}']
    judge = functools.partial(LLMCoverageJudge(ScriptedLLM(answers)).judge, docs=DOCS, timeout=1.0)
    search = Search({"restaurant reservation": [tool("reserve_table", 0.3)]})
    out, steps = reflect(
        PLAN, [tool("forecast", 0.6, WEATHER)], search_fn=search, judge=judge, max_rounds=3, k=3, threshold=0.35
    )
    assert ids(out) == ["forecast", "reserve_table"] and search.queries == [("restaurant reservation", 4)]
    assert [(s.path, s.note) for s in steps] == [
        ("llm", "round 1: 1 uncovered, added 1 (reserve_table)"),
        ("llm", "round 2: 0 uncovered, added 0"),
    ]


def test_reflect_with_a_failing_judge_runs_offline_and_says_so_each_round():
    judge = functools.partial(LLMCoverageJudge(ScriptedLLM([])).judge, docs=DOCS, timeout=1.0)
    search = Search({"book table two 8pm": [tool("reserve_table", 0.5)]})
    out, steps = reflect(
        PLAN, [tool("forecast", 0.6, WEATHER)], search_fn=search, judge=judge, max_rounds=3, k=3, threshold=0.35
    )
    assert ids(out) == ["forecast", "reserve_table"]
    assert [s.path for s in steps] == ["fallback", "fallback"]
    assert steps[0].note.startswith("round 1: 1 uncovered, added 1 (reserve_table); LLMError")
