"""Plain-text tables: columns line up in a terminal whatever script the cells are written in."""

from __future__ import annotations

from toolret.eval.tables import display_width, fit_width, format_table


def test_columns_are_padded_by_display_width_not_characters() -> None:
    table = format_table(["tool", "score"], [["天気予報を取得", 1.5], ["get_weather", 0.25], ["為替", 2.0]])
    lines = table.splitlines()
    assert len({display_width(line) for line in lines}) == 1, table  # every line ends in the same column
    assert lines[2] == "天気予報を取得  1.500"  # 14 columns for 7 wide characters: no padding needed
    assert lines[4] == "為替            2.000"


def test_a_cut_cell_fits_its_width_in_columns() -> None:
    assert display_width(fit_width("天気予報を取得する道具", 9)) <= 9
    assert fit_width("get_weather", 60) == "get_weather"
    assert display_width("ｔｏｏｌ") == 8  # full-width Latin takes two columns too
