"""The snapshot's parameter table: rows per tool, in order, one key per distinct parameter."""

from __future__ import annotations

import numpy as np

from toolret import ToolDoc, ToolParam
from toolret.index.snapshot import build_snapshot
from toolret.scoring.param_table import ParamTable


def _docs() -> list[ToolDoc]:
    return [
        ToolDoc(name="a", parameters=[ToolParam(name="city", type="string", required=True), ToolParam(name="n")]),
        ToolDoc(name="b"),
        ToolDoc(name="c", parameters=[ToolParam(name="unit", type="string", enum=["C", "F"])]),
        ToolDoc(name="d", parameters=[ToolParam(name="city", type="string"), ToolParam(name="unit", type="string")]),
    ]


def test_rows_follow_the_tools_then_each_tools_parameter_order():
    table = ParamTable.build(_docs())
    assert table.start.tolist() == [0, 2, 2, 3, 5]
    owner, row = table.rows(np.array([3, 1, 0, 2]))
    assert owner.tolist() == [0, 0, 2, 2, 3]
    assert row.tolist() == [3, 4, 0, 1, 2]
    assert table.required[row].tolist() == [False, False, True, False, False]


def test_keys_are_distinct_name_type_and_enum():
    table = ParamTable.build(_docs())
    assert [table.keys[k] for k in table.key.tolist()] == [
        ("city", "string", ()),
        ("n", "any", ()),
        ("unit", "string", ("c", "f")),
        ("city", "string", ()),
        ("unit", "string", ()),
    ]
    assert len(table.keys) == 4


def test_a_snapshot_carries_its_table():
    docs = _docs()
    snap = build_snapshot(docs, [{} for _ in docs], dim=4)
    assert snap.params.start.tolist() == ParamTable.build(docs).start.tolist()
