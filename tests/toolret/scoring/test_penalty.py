"""The parameter penalty: the per-pool version agrees bit for bit with the per-tool formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolret import PenaltyConfig, RetrievalConfig, ToolDoc, ToolParam
from toolret.scoring.arguments import ArgumentFit, param_satisfaction, spot_arguments
from toolret.scoring.param_table import ParamTable
from toolret.scoring.penalty import candidate_penalties, parameter_penalty

DOCS = [
    ToolDoc(name="no_params"),
    ToolDoc(
        name="send_mail",
        parameters=[
            ToolParam(name="recipient_email", type="string", required=True),
            ToolParam(name="subject", type="string"),
            ToolParam(name="urgent", type="boolean"),
        ],
    ),
    ToolDoc(
        name="convert",
        parameters=[
            ToolParam(name="amount", type="number", required=True),
            ToolParam(name="unit", type="string", required=True, enum=["Celsius", "fahrenheit", ""]),
            ToolParam(name="precision", type="integer"),
        ],
    ),
    ToolDoc(name="get_movie", parameters=[ToolParam(name="movie_id", type="integer", required=True)]),
    ToolDoc(
        name="weather",
        parameters=[
            ToolParam(name="city", type="string", required=True),
            ToolParam(name="start_date", type="string|null"),
            ToolParam(name="unit", type="string", enum=["celsius", "kelvin"]),
        ],
    ),
    ToolDoc(name="files", parameters=[ToolParam(name="path", type="string", required=True), ToolParam(name="x")]),
]

QUERIES = [
    "convert 30 fahrenheit to celsius",
    "email bob@example.com about the movie",
    "weather in Paris from 2024-05-01 in kelvin",
    "open report.pdf",
    "what is the weather like",  # no argument values: no penalty
]


def _reference(doc: ToolDoc, query: str, config: RetrievalConfig) -> float:
    """MFTR eq. 3 written out, one parameter at a time."""
    args, words = spot_arguments(query), set(query.lower().split())
    pen = config.penalty
    if not pen.enabled or not args or not doc.parameters:
        return 0.0
    total = 0.0
    for param in doc.parameters:
        x = pen.alpha * (pen.tau - param_satisfaction(param, args, words))
        gate = 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
        total += gate * (pen.w_required if param.required else pen.w_optional)
    return pen.scale * total


@pytest.mark.parametrize("query", QUERIES)
def test_pool_penalties_equal_the_per_tool_formula_exactly(query):
    config = RetrievalConfig.preset("fast")
    fit = ArgumentFit(spot_arguments(query), set(query.lower().split()))
    table = ParamTable.build(DOCS)
    candidates = np.array([4, 0, 2, 1, 5, 3])
    pooled = candidate_penalties(table, candidates, fit, config).tolist()
    expected = [_reference(DOCS[i], query, config) for i in candidates.tolist()]
    assert pooled == expected
    assert [parameter_penalty(DOCS[i], fit.args, fit.query_words, config) for i in candidates.tolist()] == expected
    if fit.args:
        assert any(p > 0 for p in pooled)  # the check is not vacuous


def test_no_penalty_when_disabled_or_without_arguments():
    table = ParamTable.build(DOCS)
    candidates = np.arange(len(DOCS))
    off = RetrievalConfig.preset("fast").model_copy(update={"penalty": PenaltyConfig(enabled=False)})
    fit = ArgumentFit(spot_arguments("convert 30 fahrenheit"), {"convert", "30", "fahrenheit"})
    assert candidate_penalties(table, candidates, fit, off).tolist() == [0.0] * len(DOCS)
    bare = ArgumentFit([], {"convert"})
    assert candidate_penalties(table, candidates, bare, RetrievalConfig.preset("fast")).tolist() == [0.0] * len(DOCS)
    assert candidate_penalties(table, np.zeros(0, dtype=np.int64), fit, RetrievalConfig.preset("fast")).shape == (0,)
