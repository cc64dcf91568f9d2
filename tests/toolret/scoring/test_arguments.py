"""Offline argument spotting and parameter satisfaction."""

from __future__ import annotations

import time

import pytest

from toolret import ToolParam
from toolret.scoring.arguments import _EMAIL, _FILE, param_satisfaction, spot_arguments


def kinds(query: str) -> list[str]:
    return [a.kind for a in spot_arguments(query)]


def test_spots_each_kind_of_value():
    assert kinds("write to bob@example.com") == ["email"]
    assert kinds("open https://example.com/a?b=1") == ["url"]
    assert "date" in kinds("book it for March 3rd, 2024")
    assert "date" in kinds("remind me on 2024-05-01")
    assert kinds('search for "deep learning"') == ["quoted"]
    assert kinds("load data.csv please") == ["file"]
    assert kinds("add 3.5 and 40") == ["number", "number"]
    assert "proper_noun" in kinds("what is the weather in New York")


def spans(query: str, kind: str) -> list[str]:
    return [a.text for a in spot_arguments(query) if a.kind == kind]


@pytest.mark.parametrize(
    "query",
    [
        "mail .bob.smith+x@mail.example.com and -eve@x.org, not a@b@c.com or a@b.com@c.com",
        "send a@b.c0 and x@y.toolong now; me@home",
        "open a.b.txt, ./reports/q1-2024.csv and C:\\data\\log.txt or file.abcdefg then report.PDF.",
        "plain words. Then a sentence. x.y z",
    ],
)
def test_emails_and_files_are_the_spans_their_patterns_match(query: str) -> None:
    # The spotter finds them from each "@" and "." instead of running the patterns (which
    # backtrack quadratically); it must return what the patterns would.
    assert spans(query, "email") == [m.group() for m in _EMAIL.finditer(query)]
    expected_files = [
        m.group() for m in _FILE.finditer(query) if not any(m.group() in e for e in spans(query, "email"))
    ]
    assert spans(query, "file") == [f for f in expected_files if f.rsplit(".", 1)[-1].lower() in {"txt", "csv", "pdf"}]


@pytest.mark.parametrize("unit", ["1.", "a.", "$1", "a/", '"a', "Ab cd "])
def test_spotting_is_linear_in_a_pasted_list(unit: str) -> None:
    # "1.1.1.…" took 4.4 s at 20,000 characters before (backtracking e-mail and file patterns,
    # and every claimed span compared with every other); a request may paste a list whole.
    text = unit * (100_000 // len(unit)) + "@x"
    start = time.perf_counter()
    spot_arguments(text)
    assert time.perf_counter() - start < 2.0


def test_plain_request_carries_no_arguments():
    assert kinds("Can I find academic research papers on this topic?") == []
    assert kinds("What can you do?") == []


def test_value_of_matching_kind_satisfies_parameter():
    number = spot_arguments("area with base 10")
    assert param_satisfaction(ToolParam(name="base", type="integer"), number, {"base", "10"}) == 1.0
    assert param_satisfaction(ToolParam(name="email", type="string"), number, {"10"}) < 0.5


def test_enum_value_in_query_satisfies_parameter():
    args = spot_arguments("temperature in Paris in fahrenheit")
    param = ToolParam(name="unit", type="string", enum=["celsius", "fahrenheit"])
    assert param_satisfaction(param, args, {"temperature", "paris", "fahrenheit"}) == 1.0


def test_boolean_and_untyped_parameters_never_count_as_missing():
    args = spot_arguments("resize photo.png to 200")
    assert param_satisfaction(ToolParam(name="keep_ratio", type="boolean"), args, set()) == 1.0
    assert param_satisfaction(ToolParam(name="options", type="any"), args, set()) == 1.0


def test_one_fit_scores_many_parameters_as_param_satisfaction_does():
    from toolret.scoring.arguments import ArgumentFit

    query = 'set the fan to level high in "guest bedroom"'
    args, words = spot_arguments(query), set(query.lower().split())
    params = [
        ToolParam(name="level", type="integer", enum=["low", "high"]),  # the query names a value
        ToolParam(name="level", type="integer", enum=["off", "max"]),  # same name and type, no value named
        ToolParam(name="level", type="integer"),
        ToolParam(name="room_email", type="string"),
        ToolParam(name="device_id", type="string"),
        ToolParam(name="enabled", type="boolean"),
    ]
    fit = ArgumentFit(args, words)
    scores = [fit.satisfaction(p) for p in params]
    assert scores == [param_satisfaction(p, args, words) for p in params]
    assert scores[0] == 1.0 and scores[1] == scores[2] < 1.0  # an enum only counts when a value is named
    assert scores[3] < scores[2]  # an e-mail parameter, no e-mail in the query
    assert scores[4] >= 0.5 and scores[5] == 1.0


def test_a_possessive_apostrophe_opens_no_quoted_value() -> None:
    found = spot_arguments("Append the first track in The Beatle's newest album to my 'My Rock' playlist")
    assert [a.text for a in found if a.kind == "quoted"] == ["'My Rock'"]
    assert [a.kind for a in spot_arguments("don't stop, it's fine")] == []
