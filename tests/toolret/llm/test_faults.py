"""LLM fault injection: every LLM step × every fault, and the per-search LLM time budget.

For each step (planning, rerank, reflection judge at search time; expansion, its faithfulness
judge and condensed cards at indexing time) and each fault of :data:`toolret.llm.testing.FAULTS`,
the model breaks that step only (the other steps get sensible answers from a stand-in for an
LLM's judgement). Contract: the search returns tools from the registry only, no duplicates, at
most k; a step whose call failed says ``fallback`` in the trace with the reason; schema-valid
nonsense is either used after validation or refused, never passed on unchecked; indexing keeps
every tool and reports the failure. Set TOOLRET_FAULT_MATRIX=path to write the matrix.

Adding an LLM step to the matrix: register its output schema in ``toolret.llm.testing.STEP_SCHEMAS``
and add one entry to ``SEARCH_STEPS`` (search time) or ``INDEX_STEPS`` (indexing time) below.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from toolret import ToolDoc, ToolKnowledgeBase
from toolret.cards import LLMCardWriter
from toolret.config import RetrievalConfig
from toolret.index.expansion import LLMExpander
from toolret.llm import ChatMessage, parse_structured
from toolret.llm.testing import FAULTS, FaultInjectingLLM, step_of
from toolret.results import SearchResult

TOOLS = [
    ToolDoc(
        name="get_weather",
        description="Current weather and forecast for a city.",
        parameters=[{"name": "city", "type": "string", "required": True}],
    ),
    ToolDoc(name="convert_currency", description="Convert an amount of money between currencies."),
    ToolDoc(name="find_restaurants", description="Find restaurants near a place."),
    ToolDoc(name="send_email", description="Send an e-mail message to a recipient."),
    ToolDoc(name="create_event", description="Create a calendar event at a date and time."),
    ToolDoc(name="search_flights", description="Search flights between two airports on a date."),
    ToolDoc(name="translate_text", description="Translate text into another language."),
    ToolDoc(name="stock_price", description="Latest stock price for a ticker symbol."),
]
QUERY = "what's the weather in Paris tomorrow and convert 100 dollars to euros"
TIMEOUT = 0.2


def _data(messages: list[ChatMessage], name: str) -> str:
    found = re.findall(rf'<data name="{name}">\n(.*?)\n</data>', messages[-1].content, re.DOTALL)
    return found[-1] if found else ""


class SensibleLLM:
    """A stand-in for a model's judgement that gives plausible answers to every step's prompt."""

    name = "sensible"

    def _answer(self, messages: list[ChatMessage], schema: type[BaseModel]) -> str:
        step = step_of(schema)
        if step == "plan":
            parts = [p.strip() for p in _data(messages, "query").split(" and ") if p.strip()]
            return json.dumps({"rewritten": " and ".join(parts), "subtasks": [{"text": p} for p in parts]})
        if step == "rerank":
            return json.dumps({"ranking": re.findall(r"id: ([^ |]+)", _data(messages, "tools")), "irrelevant": []})
        if step == "reflect":
            return '{"uncovered": [], "rewrites": {}}'
        if step == "expand":
            return json.dumps({"function": _data(messages, "tool").splitlines()[1][13:], "tags": ["tool"]})
        if step == "judge":
            return '{"unfaithful": []}'
        raise AssertionError(f"no sensible answer for {step}")

    def generate(self, messages: list[ChatMessage], schema: type[Any], *, timeout: float) -> Any:
        return parse_structured(self._answer(messages, schema), schema)

    async def agenerate(self, messages: list[ChatMessage], schema: type[Any], *, timeout: float) -> Any:
        return self.generate(messages, schema, timeout=timeout)


@pytest.fixture(scope="module")
def kb(make_kb):
    return make_kb(TOOLS, offline_expansion=False)


def _config(**update: Any) -> RetrievalConfig:
    return RetrievalConfig.preset("full").model_copy(update={"llm_timeout": TIMEOUT, "rerank_top_n": 8, **update})


def assert_registry_only(result: SearchResult, kb: ToolKnowledgeBase, k: int) -> None:
    ids = result.ids
    assert ids, "a search over a non-empty registry returns tools"
    assert set(ids) <= set(kb.ids), f"tools outside the registry: {set(ids) - set(kb.ids)}"
    assert len(ids) == len(set(ids)) and len(ids) <= k
    assert all(t.name == kb.get(t.id).name for t in result.tools)


MATRIX: dict[tuple[str, str], str] = {}
#: Faults a step cannot use: the call itself failed, so the step must fall back.
HARD = {"timeout", "error", "empty", "malformed"}


@pytest.fixture(scope="module", autouse=True)
def _write_matrix():
    yield
    out = os.environ.get("TOOLRET_FAULT_MATRIX")
    if out and MATRIX:
        rows = sorted({s for s, _ in MATRIX})
        lines = ["| step | " + " | ".join(FAULTS) + " |", "|---" * (len(FAULTS) + 1) + "|"]
        lines += [f"| {s} | " + " | ".join(MATRIX.get((s, f), "") for f in FAULTS) + " |" for s in rows]
        with open(out, "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")


# ------------------------------------------------------------------ search-time steps
@dataclass(frozen=True)
class SearchStep:
    name: str  # the step's name in toolret.llm.testing.STEP_SCHEMAS
    stage: str  # its stage in the search trace


SEARCH_STEPS = [SearchStep("plan", "plan"), SearchStep("rerank", "rerank"), SearchStep("reflect", "reflect")]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("step", SEARCH_STEPS, ids=lambda s: s.name)
def test_search_survives_fault_in_one_step(kb, step: SearchStep, fault: str) -> None:
    kb.llm = FaultInjectingLLM(SensibleLLM(), faults={step.name: fault})  # type: ignore[dict-item]
    start = time.perf_counter()
    result = kb.search(QUERY, k=4, config=_config())
    assert time.perf_counter() - start < 20
    assert_registry_only(result, kb, 4)
    steps = [s for s in result.trace if s.stage == step.stage]
    assert steps, f"the {step.stage} stage ran"
    faulted = steps[0]
    if fault in HARD:
        assert faulted.path == "fallback" and faulted.note, faulted
    else:  # schema-valid output: used after validation (llm), or refused (fallback)
        assert faulted.path in ("llm", "fallback"), faulted
    others = [s for s in result.trace if s.stage in {o.stage for o in SEARCH_STEPS} - {step.stage}]
    assert all(s.path == "llm" for s in others), "the other steps still use the model"
    MATRIX[(step.name, fault)] = f"{faulted.path}" + (
        f" ({_why(faulted.note)})" if faulted.path == "fallback" or "ignored" in faulted.note else ""
    )


def _why(note: str) -> str:
    for key in ("no answer within", "ConnectionError", "empty", "EOF", "named none", "ignored", "did not match"):
        if key in note:
            return {"EOF": "malformed JSON", "did not match": "invalid output"}.get(key, key)
    return note[:40]


@pytest.mark.parametrize("fault", FAULTS)
async def test_every_step_faulted_at_once_sync_and_async(kb, fault: str) -> None:
    kb.llm = FaultInjectingLLM(fault=fault)  # type: ignore[arg-type]
    for result in (kb.search(QUERY, k=3, config=_config()), await kb.asearch(QUERY, k=3, config=_config())):
        assert_registry_only(result, kb, 3)
        paths = {s.stage: s.path for s in result.trace if s.stage in ("plan", "rerank", "reflect")}
        if fault in HARD:
            assert set(paths.values()) == {"fallback"}, paths


# ------------------------------------------------------------------ indexing-time steps
INDEXED = TOOLS[:4]  # indexing embeds every field of every tool: a few tools keep the matrix fast


def _expand(embedder: Any, llm: FaultInjectingLLM) -> tuple[ToolKnowledgeBase, Any]:
    expander = LLMExpander(llm, timeout=TIMEOUT, judge=True)
    base = ToolKnowledgeBase(embedder=embedder, expander=expander)
    base.add(INDEXED)
    return base, expander.last_report


def _cards(embedder: Any, llm: FaultInjectingLLM) -> tuple[ToolKnowledgeBase, Any]:
    docs = LLMCardWriter(llm, timeout=TIMEOUT).write(INDEXED)
    base = ToolKnowledgeBase(embedder=embedder, offline_expansion=False)
    base.add(docs)
    return base, docs


INDEX_STEPS: dict[str, Callable[[Any, FaultInjectingLLM], tuple[ToolKnowledgeBase, Any]]] = {
    "expand": _expand,
    "judge": _expand,
    "card": _cards,
}


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("step", list(INDEX_STEPS))
def test_indexing_survives_fault_in_one_step(embedder, step: str, fault: str) -> None:
    llm = FaultInjectingLLM(SensibleLLM(), faults={step: fault})  # type: ignore[dict-item]
    base, info = INDEX_STEPS[step](embedder, llm)
    assert sorted(base.ids) == sorted(t.id for t in INDEXED), "every tool is indexed whatever the model does"
    assert_registry_only(base.search("weather in Paris", k=2), base, 2)
    if step == "card":
        sources = [d.expansion.card["source"] for d in info]
        if fault in HARD or fault == "hallucinated":
            assert all(s == "offline" for s in sources), sources  # a card naming another tool is refused
        MATRIX[(step, fault)] = "offline card" if all(s == "offline" for s in sources) else "llm card"
        return
    llm_fields = [f for d in base.docs() for f, src in d.expansion.sources.items() if src.startswith("llm:")]
    if fault in HARD:
        assert info.failed == len(INDEXED) and not llm_fields, info
    MATRIX[(step, fault)] = (
        f"fallback ({info.failed} of {len(INDEXED)} tools kept offline expansion)"
        if info.failed
        else f"llm ({info.dropped_fields} field(s) dropped by the judge)"
    )


# ------------------------------------------------------------------ the per-search LLM budget
def test_zero_budget_keeps_every_step_offline_and_says_why(kb) -> None:
    llm = FaultInjectingLLM(SensibleLLM())
    kb.llm = llm
    result = kb.search(QUERY, k=3, config=_config(llm_budget_s=0.0))
    assert_registry_only(result, kb, 3)
    assert llm.calls == []
    llm_steps = [s for s in result.trace if s.stage in ("plan", "rerank", "reflect")]
    assert llm_steps and all(s.path == "fallback" and "LLM budget spent" in s.note for s in llm_steps), llm_steps


def test_budget_spent_by_a_slow_step_sends_later_steps_offline(kb) -> None:
    llm = FaultInjectingLLM(SensibleLLM(), faults={"plan": "timeout"})
    kb.llm = llm
    start = time.perf_counter()
    result = kb.search(QUERY, k=3, config=_config(llm_timeout=0.3, llm_budget_s=0.3))
    assert time.perf_counter() - start < 0.3 + 5.0
    assert [c[0] for c in llm.calls] == ["plan"], "nothing after the plan may call the model"
    paths = {s.stage: (s.path, s.note) for s in result.trace}
    assert paths["plan"][0] == "fallback" and "no answer within" in paths["plan"][1]
    assert paths["rerank"][0] == "fallback" and "LLM budget spent" in paths["rerank"][1]
    assert_registry_only(result, kb, 3)


def test_each_step_gets_only_what_is_left_of_the_budget(kb) -> None:
    llm = FaultInjectingLLM(SensibleLLM(), faults={"plan": "timeout", "rerank": "timeout"})
    kb.llm = llm
    result = kb.search(QUERY, k=3, config=_config(llm_timeout=0.3, llm_budget_s=0.45))
    (plan, _, plan_timeout), (rerank, _, rerank_timeout) = llm.calls
    assert (plan, rerank) == ("plan", "rerank")
    assert plan_timeout == pytest.approx(0.3, abs=0.01) and 0 < rerank_timeout <= 0.15 + 1e-6
    reflect = [s for s in result.trace if s.stage == "reflect"]
    assert all(s.path == "fallback" and "LLM budget spent" in s.note for s in reflect)
