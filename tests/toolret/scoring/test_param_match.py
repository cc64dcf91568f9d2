"""s_p of many parameters at once equals ArgumentFit.satisfaction_of, parameter by parameter."""

from __future__ import annotations

import itertools

import numpy as np

from toolret import ToolDoc, ToolParam
from toolret.scoring.arguments import ArgumentFit, spot_arguments
from toolret.scoring.param_match import KeyShapes, key_satisfactions
from toolret.scoring.param_table import ParamTable

NAMES = ["city", "start_date", "user_id", "recipient_email", "file_path", "query", "movieId", "x", "unit", "the"]
TYPES = ["string", "integer", "number", "boolean", "array", "object", "string|null", "null", "Any", "List[str]"]
ENUMS = [None, ["Celsius", "kelvin"], ["Paris", ""]]

QUERIES = [
    "convert 30 fahrenheit to celsius",
    "email bob@example.com the file report.pdf",
    'weather in Paris from 2024-05-01, unit "kelvin"',
    "find the user id 42 for the start date tomorrow",
    "movie id please",
    "what can you do",  # no argument values
]


def _table() -> ParamTable:
    combos = itertools.product(NAMES, TYPES, ENUMS)
    docs = [ToolDoc(name=f"t{i}", parameters=[ToolParam(name=n, type=t, enum=e)]) for i, (n, t, e) in enumerate(combos)]
    return ParamTable.build(docs)


def test_every_parameter_gets_the_satisfaction_of_the_one_at_a_time_formula():
    table = _table()
    shapes = KeyShapes.of(table)
    keys = np.arange(len(table.keys))
    for query in QUERIES:
        words = {w.strip(".,\"'") for w in query.lower().split()}
        want = [ArgumentFit(spot_arguments(query), words).satisfaction_of(*key) for key in table.keys]
        got = key_satisfactions(ArgumentFit(spot_arguments(query), words), shapes, keys)
        assert got.tolist() == want, query
        some = keys[::3][::-1]  # any subset, in any order
        assert key_satisfactions(ArgumentFit(spot_arguments(query), words), shapes, some).tolist() == [
            want[k] for k in some.tolist()
        ]
    assert len(set(want)) > 1  # the parameters do not all score alike


def test_shapes_are_built_once_per_table():
    table = _table()
    assert KeyShapes.of(table) is KeyShapes.of(table)
    assert KeyShapes.of(_table()) is not KeyShapes.of(table)


def test_a_table_whose_parameters_have_no_name_words():
    table = ParamTable.build([ToolDoc(name="a", parameters=[ToolParam(name="_", type="integer")])])
    fit = ArgumentFit(spot_arguments("3 apples"), {"3", "apples"})
    assert key_satisfactions(fit, KeyShapes.of(table), np.arange(1)).tolist() == [fit.satisfaction_of("_", "integer")]
