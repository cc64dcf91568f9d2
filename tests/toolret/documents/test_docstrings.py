"""Docstring parsing: Google, NumPy, reST, C-builtin layouts, and odd input that must not raise."""

from __future__ import annotations

import math
import os

import pytest

from toolret.documents.docstrings import (
    ParsedDocstring,
    docstring_summary,
    doctest_snippets,
    parse_docstring,
)

GOOGLE = """Get the current weather. Uses a live feed.

    Works for any city on Earth.

    Args:
        location (str): City name, e.g.
            "Paris".
        unit: Temperature unit.

    Returns:
        dict: Temperature and conditions.

    Examples:
        >>> get_weather("Paris")
        {'temp': 3}
        >>> get_weather(
        ...     "Oslo", unit="F")
    """

NUMPY = """Add two numbers.

    Parameters
    ----------
    x : int
        First addend.
    y : float, optional
        Second addend.

    Returns
    -------
    float
        The sum.

    Notes
    -----
    Overflow is not checked.

    Examples
    --------
    >>> add(1, 2)
    3.0
    """

REST = """Resize an image.

    Keeps the aspect ratio.

    :param path: File to resize.
    :type path: str
    :param int width: Target width in pixels.
    :returns: Path of the resized copy.
    """


def test_google_docstring_args_become_param_descriptions() -> None:
    doc = parse_docstring(GOOGLE)
    assert doc.params == {"location": 'City name, e.g. "Paris".', "unit": "Temperature unit."}
    assert doc.returns == "Temperature and conditions."


def test_google_docstring_description_excludes_sections() -> None:
    doc = parse_docstring(GOOGLE)
    assert doc.summary == "Get the current weather."
    assert doc.description == "Get the current weather. Uses a live feed.\n\nWorks for any city on Earth."
    assert "Args" not in doc.description and "Returns" not in doc.description


def test_google_examples_section_doctests_become_code_strings() -> None:
    assert parse_docstring(GOOGLE).examples == ['get_weather("Paris")', 'get_weather(\n    "Oslo", unit="F")']


def test_numpy_docstring_params_returns_and_types() -> None:
    doc = parse_docstring(NUMPY)
    assert doc.params == {"x": "First addend.", "y": "Second addend."}
    assert doc.param_types == {"x": "int", "y": "float"}
    assert doc.returns == "The sum."
    assert doc.examples == ["add(1, 2)"]


def test_numpy_notes_section_stays_in_description() -> None:
    doc = parse_docstring(NUMPY)
    assert doc.description == "Add two numbers.\n\nOverflow is not checked."


def test_rest_docstring_params_and_returns() -> None:
    doc = parse_docstring(REST)
    assert doc.params == {"path": "File to resize.", "width": "Target width in pixels."}
    assert doc.param_types == {"path": "str", "width": "int"}
    assert doc.returns == "Path of the resized copy."
    assert doc.description == "Resize an image.\n\nKeeps the aspect ratio."


def test_doctest_in_prose_moves_to_examples() -> None:
    doc = parse_docstring("Split words.\n\n>>> split('a b')\n['a', 'b']\n\nWorks on any text.")
    assert doc.examples == ["split('a b')"]
    assert doc.description == "Split words.\n\nWorks on any text."


def test_prose_examples_section_is_split_into_paragraphs() -> None:
    doc = parse_docstring("Hello.\n\nExample:\n    greet('Ann') says hello.\n\n    greet('') raises.\n")
    assert doc.examples == ["greet('Ann') says hello.", "greet('') raises."]


def test_argument_clinic_blocks_of_builtins_become_params() -> None:
    doc = parse_docstring(os.stat.__doc__)
    assert doc.params["path"].startswith("Path to be examined")
    assert "follow_symlinks" in doc.params
    assert doc.summary == "Perform a stat system call on the given path."
    assert "Path to be examined" not in doc.description


def test_builtin_docstring_without_sections_is_all_description() -> None:
    doc = parse_docstring(math.factorial.__doc__)
    assert doc.summary == "Find n!."
    assert doc.params == {} and doc.returns == "" and doc.examples == []


@pytest.mark.parametrize("text", [None, "", "   \n  ", 42])
def test_empty_or_non_string_docstring_gives_empty_result(text: object) -> None:
    assert parse_docstring(text) == ParsedDocstring()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    ["Args:\n  ::::\n  :param", ":param:\n:returns:", "Parameters\n----------\n : \n", "x" * 5000, ">>>", "\x00\x01"],
)
def test_odd_docstrings_never_raise(text: str) -> None:
    doc = parse_docstring(text)
    assert isinstance(doc, ParsedDocstring)


def test_parser_failure_falls_back_to_raw_text(monkeypatch: pytest.MonkeyPatch) -> None:
    import docstring_parser

    def broken(text: str, *args: object, **kwargs: object) -> None:
        raise docstring_parser.ParseError("boom")

    monkeypatch.setattr(docstring_parser, "parse", broken)
    doc = parse_docstring("Do a thing. Then more.\n\nArgs:\n    x: y")
    assert doc.description == "Do a thing. Then more.\n\nArgs:\n    x: y"
    assert doc.summary == "Do a thing."


def test_first_sentence_stops_at_sentence_end_not_abbreviation_inside_word() -> None:
    assert docstring_summary("Return the value of x.y for x. More.") == "Return the value of x.y for x."
    assert docstring_summary("No full stop here") == "No full stop here"


def test_doctest_snippets_ignore_output_lines() -> None:
    assert doctest_snippets(">>> a = 1\n>>> a\n1\nprose ... not code") == ["a = 1", "a"]


def test_a_tool_doc_is_completed_from_its_docstrings_first_text_first():
    from toolret import ToolDoc
    from toolret.documents.docstrings import with_docstrings

    doc = ToolDoc(
        name="convert",
        description="Convert money.\n\nArgs:\n    amount: How much.\n\nReturns:\n    The converted amount.",
        parameters=[
            {"name": "amount", "type": "number"},
            {"name": "to", "type": "string"},
            {"name": "x", "description": "Kept."},
        ],
    )
    function_doc = "Convert.\n\nArgs:\n    amount: Ignored, the first text has it.\n    to: Target currency.\n\nExamples:\n    >>> convert(1, 'EUR')"
    done = with_docstrings(doc, doc.description, function_doc, metadata={"framework": "demo"})
    assert done.description == "Convert money."
    assert [p.description for p in done.parameters] == ["How much.", "Target currency.", "Kept."]
    assert done.response == "The converted amount." and done.examples and done.metadata == {"framework": "demo"}
    assert with_docstrings(doc, None, "") is doc
