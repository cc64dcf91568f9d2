"""Self-reflection (post-retrieval): does every sub-task have a tool? If not, search again for it.

A multi-part request ("the weather tomorrow, and book a table") fails if one part ends up with
no tool, however good the others are. After reranking, the pipeline's reflect stage
(:func:`toolret.search.stages.stage_reflect`, ordered by :class:`toolret.search.search.Search`)
checks coverage with :func:`judge_coverage`, and :func:`fill_uncovered` re-queries each uncovered
sub-task with a rewritten query and puts the best new tool in, for at most ``reflect_rounds``
rounds (Toolshed §3.4.3), one ``reflect`` trace step per round.

Coverage is judged by an LLM (:class:`LLMCoverageJudge`) or offline by :func:`coverage_offline`,
a score threshold. A threshold is a usable offline signal because MFTR scores share one scale
across queries and tools: each field score lies in [0, 1], the field weights are renormalised
over the fields a tool has, and the penalty is small — so "the best tool for this sub-task scores
below 0.4" means the same thing for every query (the same reason ``k="auto"``'s margin works).
The LLM reranker keeps that scale (it reuses the head's score values); a cross-encoder's
sigmoid lands in [0, 1] but not on MFTR's distribution, so set the threshold for that model.

Example:
    >>> from toolret.search.planning import QueryPlan, SubTask
    >>> plan = QueryPlan(original="q", rewritten="q", subtasks=[SubTask(text="weather tomorrow"),
    ...                                                         SubTask(text="book a table")])
    >>> tools = [ScoredTool(id="forecast", name="forecast", score=0.7, subtask="weather tomorrow")]
    >>> coverage_offline(plan, tools, threshold=0.35)
    [1]
    >>> search = lambda query, n: [ScoredTool(id="reserve", name="reserve", score=0.6)]
    >>> fill_uncovered(plan, tools, Coverage(uncovered=[1]), search_fn=search, k=3)
    (['reserve'], '')
    >>> [(t.id, t.subtask) for t in tools]
    [('forecast', 'weather tomorrow'), ('reserve', 'book a table')]
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from toolret.documents.text import tokenize
from toolret.documents.tool_doc import ToolDoc
from toolret.llm.protocol import LLM, ChatMessage, structured_call
from toolret.llm.steps import LLMSteps
from toolret.results import ScoredTool, StagePath, TraceStep
from toolret.search.planning import QueryPlan
from toolret.search.rerank import MAX_QUERY_CHARS, card_line

__all__ = [
    "DEFAULT_COVERAGE_THRESHOLD",
    "Coverage",
    "CoverageJudgment",
    "LLMCoverageJudge",
    "coverage_offline",
    "fill_uncovered",
    "judge_coverage",
    "offline_rewrite",
]

logger = logging.getLogger("toolret")

#: Offline: a sub-task whose best tool scores below this is uncovered (MFTR scale, see above).
#: On toole_multi the best tool of a sub-task scores 0.37 (median) when it is a relevant one and
#: 0.34 when not; of 0.3 / 0.35 / 0.4, 0.4 gave the best Recall@5 there (restbench_tmdb: no change).
DEFAULT_COVERAGE_THRESHOLD = 0.4
MAX_REWRITE_CHARS = 300

#: What :func:`reflect` calls to judge coverage: ``(plan, tools, threshold=...) -> (Coverage, step)``.
Judge = Callable[..., "tuple[Coverage, TraceStep]"]


class Coverage(BaseModel):
    """Which sub-tasks (0-based indices into ``plan.subtasks``) no tool covers, with optional rewrites."""

    model_config = ConfigDict(frozen=True)

    uncovered: list[int]
    rewrites: dict[int, str] = Field(default_factory=dict)


def coverage_offline(plan: QueryPlan, tools: list[ScoredTool], *, threshold: float) -> list[int]:
    """Indices of the sub-tasks that no tool covers with a score of at least ``threshold``.

    A sub-task is covered by a tool tagged with its text (``ScoredTool.subtask``); a plan of one
    sub-task is covered when the best tool, tagged or not, reaches the threshold.
    """
    if len(plan.subtasks) == 1:
        return [] if any(t.score >= threshold for t in tools) else [0]
    covered = {t.subtask for t in tools if t.score >= threshold}
    return [i for i, sub in enumerate(plan.subtasks) if sub.text not in covered]


def offline_rewrite(text: str) -> str:
    """The offline re-query: the sub-task's content words (stopwords and request filler dropped).

    Offline there is no better wording to be had; the re-query mostly reaches deeper into the
    sub-task's own ranking (the tools already selected are skipped), and the dense side sees a
    query without "can you please".

    >>> offline_rewrite("Can you please book a table for two?")
    'book table two'
    """
    return " ".join(tokenize(text)) or " ".join(text.split())


class CoverageJudgment(BaseModel):
    """The LLM judge's output schema: 1-based sub-task numbers, as the prompt shows them."""

    uncovered: list[int] = Field(description="numbers of the sub-tasks no selected tool can do")
    rewrites: dict[int, str] = Field(default_factory=dict, description="sub-task number -> better search query")

    @field_validator("uncovered", mode="before")
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, (list, tuple)):
            return value  # let validation fail, so the model is asked again
        return [
            int(v)
            for v in value
            if (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, str) and v.strip().isdigit())
        ]

    @field_validator("rewrites", mode="before")
    @classmethod
    def _clip(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return {}
        return {
            int(k): " ".join(v.split())[:MAX_REWRITE_CHARS]
            for k, v in value.items()
            if str(k).strip().isdigit() and isinstance(v, str) and v.strip()
        }


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


class LLMCoverageJudge:
    """Ask an LLM which sub-tasks no selected tool covers, and for a better query for each.

    The request, the sub-tasks and the selected tools' cards go into data blocks; numbers out of
    range are ignored (and counted in the trace). Any failure falls back to
    :func:`coverage_offline` with a ``fallback`` step. Bind the documents and timeout to hand it
    to :func:`reflect`: ``judge=functools.partial(j.judge, docs=docs, timeout=10.0)``.

    >>> from toolret.llm.testing import ScriptedLLM
    >>> from toolret.search.planning import QueryPlan, SubTask
    >>> plan = QueryPlan(original="q", rewritten="q", subtasks=[SubTask(text="a b"), SubTask(text="c d")])
    >>> tools = [ScoredTool(id="t", name="t", score=0.9, subtask="a b")]
    >>> judge = LLMCoverageJudge(ScriptedLLM(['{"uncovered": [2, 7], "rewrites": {"2": "reserve a table"}}']))
    >>> cov, step = judge.judge(plan, tools, {}, timeout=1.0)
    >>> cov.uncovered, cov.rewrites, step.path
    ([1], {1: 'reserve a table'}, 'llm')
    """

    def __init__(self, llm: LLM, *, retries: int = 1, steps: LLMSteps | None = None) -> None:
        self.steps = steps or LLMSteps()
        self.llm, self.retries = llm, self.steps.retries_or(retries)
        self.name = f"llm-judge:{getattr(llm, 'name', type(llm).__name__)}"

    def messages(self, plan: QueryPlan, tools: list[ScoredTool], docs: Mapping[str, ToolDoc]) -> list[ChatMessage]:
        """The prompt: the request, the numbered sub-tasks and the selected tools' cards, all as data."""
        from toolret.llm.prompts import REFLECT_V1, render  # only with an LLM: not on every search's path

        cards = [
            card_line(t.id, docs.get(t.id), t.name) + (f" | covers: {t.subtask}" if t.subtask else "") for t in tools
        ]
        return render(
            REFLECT_V1,
            query=(plan.rewritten or plan.original)[:MAX_QUERY_CHARS],
            subtasks=[s.text for s in plan.subtasks],
            tools=cards,
        )

    def _result(self, plan: QueryPlan, out: CoverageJudgment, start: float) -> tuple[Coverage, TraceStep]:
        n = len(plan.subtasks)
        uncovered = sorted({u - 1 for u in out.uncovered if 1 <= u <= n})
        bad = len({u for u in out.uncovered if not 1 <= u <= n})
        rewrites = {k - 1: v for k, v in out.rewrites.items() if k - 1 in uncovered}
        from toolret.llm.prompts import REFLECT_V1

        note = f"{len(uncovered)} of {n} sub-task(s) uncovered by {self.name} ({REFLECT_V1.id})"
        if bad:
            note += f", ignored {bad} out-of-range number(s)"
        return Coverage(uncovered=uncovered, rewrites=rewrites), TraceStep(
            stage="reflect", path="llm", ms=_ms(start), note=note
        )

    def _fallback(
        self, plan: QueryPlan, tools: list[ScoredTool], exc: Exception, threshold: float, start: float
    ) -> tuple[Coverage, TraceStep]:
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        logger.warning("LLM coverage judge failed, using the offline score threshold: %s", reason)
        coverage = Coverage(uncovered=coverage_offline(plan, tools, threshold=threshold))
        return coverage, TraceStep(
            stage="reflect",
            path="fallback",
            ms=_ms(start),
            note=f"{reason}; offline coverage (threshold {threshold:g})",
        )

    def _trivial(self, plan: QueryPlan, tools: list[ScoredTool], start: float) -> tuple[Coverage, TraceStep] | None:
        if plan.subtasks and tools:
            return None
        return Coverage(uncovered=list(range(len(plan.subtasks)))), TraceStep(
            stage="reflect", path="skipped", ms=_ms(start), note="no sub-task or no tool to judge"
        )

    def judge(
        self,
        plan: QueryPlan,
        tools: list[ScoredTool],
        docs: Mapping[str, ToolDoc],
        *,
        timeout: float,
        threshold: float = DEFAULT_COVERAGE_THRESHOLD,
    ) -> tuple[Coverage, TraceStep]:
        """Which sub-tasks are uncovered; ``threshold`` is used only by the offline fallback."""
        start = time.perf_counter()
        if (trivial := self._trivial(plan, tools, start)) is not None:
            return trivial
        try:
            out = structured_call(
                self.llm, self.messages(plan, tools, docs), CoverageJudgment, timeout=timeout, retries=self.retries
            )
            return self._result(plan, out, start)
        except Exception as exc:  # judging never fails a search, unless steps.on_malformed says so  # noqa: BLE001
            self.steps.reraise(exc)
            return self._fallback(plan, tools, exc, threshold, start)


def _place(selected: list[ScoredTool], new: ScoredTool, k: int) -> bool:
    """Append ``new`` if there is room; else replace the lowest-scoring tool of another sub-task that
    has more than one, if ``new`` scores higher. Tools found for the whole request (``subtask=None``)
    are never replaced: letting them go cost restbench_tmdb up to 3.8 points of Recall@5."""
    if len(selected) < k:
        selected.append(new)
        return True
    sizes = Counter(t.subtask for t in selected)
    donors = [
        n for n, t in enumerate(selected) if t.subtask is not None and t.subtask != new.subtask and sizes[t.subtask] > 1
    ]
    if not donors:
        return False
    victim = min(donors, key=lambda n: (selected[n].score, -n))
    if new.score <= selected[victim].score:
        return False
    selected[victim] = new
    return True


def judge_coverage(
    plan: QueryPlan, tools: list[ScoredTool], *, judge: Judge | None, threshold: float
) -> tuple[Coverage, StagePath, str]:
    """One coverage check: (coverage, how it was judged, a note to append when the judge fell back)."""
    if judge is None:
        return Coverage(uncovered=coverage_offline(plan, tools, threshold=threshold)), "offline", ""
    coverage, judged = judge(plan, tools, threshold=threshold)
    path: StagePath = judged.path if judged.path != "skipped" else "offline"
    return coverage, path, f"; {judged.note}" if judged.path == "fallback" else ""


def fill_uncovered(
    plan: QueryPlan,
    selected: list[ScoredTool],
    coverage: Coverage,
    *,
    search_fn: Callable[[str, int], list[ScoredTool]],
    k: int,
    cache: dict[str, list[ScoredTool]] | None = None,
) -> tuple[list[str], str]:
    """Re-query each uncovered sub-task and place its best new tool into ``selected`` (in place).

    For each uncovered sub-task, search ``search_fn(query, n)`` with the judge's rewrite or
    :func:`offline_rewrite`, take the best tool not already selected, tag it with the sub-task,
    and append it while fewer than ``k`` tools are selected — else it replaces the lowest-scoring
    tool of another sub-task that has more than one, if it scores higher (never a sub-task's only
    tool, a better tool, or a tool found for the whole request). Added tools are results of
    ``search_fn``, never ids a model wrote. Returns the ids added and a note on failed re-queries
    (empty when none failed). ``cache`` keeps results across rounds so an identical query is
    searched once.

    Measured offline (balanced preset, k=5, 2 rounds, threshold 0.4): toole_multi Recall@5
    0.715 -> 0.728 and Completeness@5 0.505 -> 0.529 (497 queries); restbench_tmdb unchanged.
    A small gain: offline, the re-query can only dig deeper into a sub-task's own ranking; an LLM
    judge's rewrites are where new tools come from.
    """
    cache = {} if cache is None else cache
    added: list[str] = []
    failed = ""
    for index in coverage.uncovered:
        sub = plan.subtasks[index]
        query = coverage.rewrites.get(index) or offline_rewrite(sub.text)
        if query not in cache:
            try:
                cache[query] = list(search_fn(query, k + 1))
            except Exception as exc:  # a failed re-query leaves the selection as it is  # noqa: BLE001
                logger.warning("reflection re-query %r failed: %s", query, exc)
                cache[query] = []
                failed += f"; re-query failed: {type(exc).__name__}"
        ids = {t.id for t in selected}
        found = next((t for t in cache[query] if t.id not in ids), None)
        if found is not None and _place(selected, found.model_copy(update={"subtask": sub.text}), k):
            added.append(found.id)
    return added, failed
