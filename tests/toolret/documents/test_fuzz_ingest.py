"""Fuzzed ingestion: every input gives a valid ToolDoc or an InvalidToolError naming tool and field.

Targets: OpenAI function specs, bare JSON schemas, benchmark records, JSON-lines files, any
Python object handed to ``to_tool_doc``, docstrings, and callables with hostile signatures,
annotations, defaults and docstrings. "Valid" means storable: the document survives a JSON
round trip unchanged (that is how the knowledge base stores it), hashes, and renders every
field. No input may take more than ``SLOW_S`` seconds (a hang is a failure).
Sizes: ``fuzz_strategies.EXAMPLES`` examples per target; ``make fuzz`` runs many more.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import math
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Optional, TypedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolret.documents.docstrings import ParsedDocstring, parse_docstring
from toolret.documents.schema_text import readable_response
from toolret.documents.tool_doc import ToolDoc, ToolParam
from toolret.errors import DatasetError, InvalidToolError
from toolret.sources.ingest import (
    from_callable,
    from_openai,
    from_record,
    load_jsonl,
    params_from_schema,
    to_tool_doc,
)

from ..fuzz_strategies import (
    FUZZ,
    SLOW_S,
    assert_invalid_tool,
    assert_valid_doc,
    check,
    docstrings,
    function_specs,
    json_like,
    pathological,
    schemas,
    small_text,
    text,
    timed,
)


# ------------------------------------------------------------------ dict sources
@FUZZ
@given(function_specs())
def test_fuzzed_function_specs(spec: Any) -> None:
    check(lambda: from_openai(spec))
    check(lambda: to_tool_doc(spec))


@FUZZ
@given(schemas())
def test_fuzzed_json_schemas(schema: Any) -> None:
    params = check(lambda: params_from_schema(schema, tool="t"))
    if isinstance(params, list):
        assert all(isinstance(p, ToolParam) for p in params)
    check(lambda: from_openai({"name": "t", "description": "d", "parameters": schema}))


@FUZZ
@given(pathological)
def test_deep_and_cyclic_schemas_are_refused_by_name(schema: Any) -> None:
    result = check(lambda: from_openai({"name": "deep", "parameters": schema}))
    if isinstance(result, InvalidToolError):
        assert result.tool == "deep" and result.field.startswith("parameters")


@FUZZ
@given(
    st.fixed_dictionaries(
        {"id": st.one_of(small_text, json_like)},
        optional={
            "name": st.one_of(small_text, json_like),
            "category": json_like,
            "source": json_like,
            "description": st.one_of(text, json_like),
            "parameters": schemas(),
            "response": json_like,
        },
    )
)
def test_fuzzed_benchmark_records(record: dict[str, Any]) -> None:
    check(lambda: from_record(record))


@FUZZ
@given(st.one_of(json_like, st.builds(object), st.just(b"\xff\xfe"), st.just(3 + 4j)))
def test_fuzzed_objects_given_to_to_tool_doc(obj: Any) -> None:
    check(lambda: to_tool_doc(obj))


@FUZZ
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=60),
            st.builds(lambda s: json.dumps(s).encode(), st.lists(st.none())),
            st.sampled_from(
                [
                    b'{"name": "a"}',
                    b'{"name": "a"}',
                    b'\xef\xbb\xbf{"name": "b"}',
                    b'{"name": "x", "description": NaN}',
                    b"[" * 100_000,
                    b"\x80abc",
                    b'{"name": "\\ud800"}',
                ]
            ),
        ),
        max_size=6,
    )
)
def test_fuzzed_jsonl_files(tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]) -> None:
    path = Path(tmp_path_factory.mktemp("jsonl")) / "tools.jsonl"
    path.write_bytes(b"\n".join(lines))
    result, seconds = timed(lambda: load_jsonl(path))
    assert seconds < SLOW_S
    if isinstance(result, InvalidToolError):
        assert_invalid_tool(result)
    elif isinstance(result, BaseException):
        assert not isinstance(result, DatasetError), "the file exists; only its content can be bad"
        pytest.fail(f"unexpected {type(result).__name__}: {result}")
    else:
        for doc in result:
            assert_valid_doc(doc)
        assert len({d.id for d in result}) == len(result)


# ------------------------------------------------------------------ docstrings and callables
@FUZZ
@given(st.one_of(docstrings(), text, st.none()))
def test_fuzzed_docstrings_never_raise(doc: Any) -> None:
    parsed, seconds = timed(lambda: parse_docstring(doc))
    assert seconds < SLOW_S
    assert isinstance(parsed, ParsedDocstring), parsed
    assert all(isinstance(v, str) for v in (parsed.summary, parsed.description, parsed.returns))
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in parsed.params.items())
    assert all(isinstance(e, str) for e in parsed.examples)


class Color(enum.Enum):
    RED = "red"
    NAN = math.nan


class Point(NamedTuple):
    x: int


class Movie(TypedDict):
    title: str


_ANNOTATIONS: list[Any] = [
    int,
    str,
    float,
    bool,
    bytes,
    list,
    dict,
    tuple,
    set,
    list[int],
    dict[str, int],
    tuple[int, ...],
    Optional[str],  # noqa: UP045 - an old-style annotation under test
    int | None,
    Literal["a", 1, None, 2.5],
    "not valid python (",
    object(),
    42,
    None,
    type(None),
    Color,
    Annotated[int, "meta"],
    Point,
    Movie,
    typing.Callable[[int], str],
    inspect.Parameter.empty,
    typing.ForwardRef("Missing"),
    typing.TypeVar("T"),
]
_circular: list[Any] = []
_circular.append(_circular)
_DEFAULTS: list[Any] = [
    math.nan,
    math.inf,
    object(),
    print,
    10**400,
    Color.RED,
    b"bytes",
    {1, 2},
    frozenset(),
    _circular,
    (1, (2, 3)),
    {"nested": [math.nan]},
    {1: "int key"},
    "\ud800",
    inspect.Parameter.empty,
]
_KINDS = (
    list(inspect.Parameter.__members__.values())
    if hasattr(inspect.Parameter, "__members__")
    else [
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.VAR_KEYWORD,
    ]
)


def _param(name: str, kind: Any, default: Any, annotation: Any) -> inspect.Parameter:
    param = inspect.Parameter.__new__(inspect.Parameter)  # no validation: hostile names and kinds allowed
    param._name = name  # type: ignore[attr-defined]
    param._kind = kind  # type: ignore[attr-defined]
    param._default = default  # type: ignore[attr-defined]
    param._annotation = annotation  # type: ignore[attr-defined]
    return param


@st.composite
def callables(draw: st.DrawFn) -> Any:
    """Functions, partials, callable objects and classes with fuzzed names, signatures and docs."""
    names = st.one_of(st.sampled_from(["x", "self", "cls", "args", "kwargs", "", "a b", "1x", "ünï"]), small_text)
    params = [
        _param(
            draw(names),
            draw(st.sampled_from(_KINDS)),
            draw(st.one_of(st.sampled_from(_DEFAULTS), json_like)),
            draw(st.sampled_from(_ANNOTATIONS)),
        )
        for _ in range(draw(st.integers(0, 5)))
    ]
    sig = inspect.Signature(
        params, return_annotation=draw(st.sampled_from(_ANNOTATIONS)), __validate_parameters__=False
    )

    def fn(*args: Any, **kwargs: Any) -> None:
        return None

    fn.__name__ = draw(st.one_of(small_text, st.just("get_weather")))
    fn.__qualname__ = fn.__name__
    fn.__doc__ = draw(st.one_of(docstrings(), st.none(), text))
    fn.__module__ = draw(st.one_of(st.none(), small_text, st.just("math")))
    fn.__signature__ = sig  # type: ignore[attr-defined]
    fn.__annotations__ = {p.name: p.annotation for p in params}
    shape = draw(st.integers(0, 4))
    if shape == 0:
        return fn
    if shape == 1:
        return functools.partial(fn, draw(json_like))
    if shape in (2, 3):
        cls = type(fn.__name__ if fn.__name__.isidentifier() else "Cls", (), {"__call__": lambda self, x: x})
        cls.__doc__ = fn.__doc__  # set afterwards: type() refuses a docstring that is not valid Unicode
        return cls() if shape == 2 else cls
    return draw(
        st.sampled_from(
            [
                math.log,
                math.factorial,
                len,
                print,
                sorted,
                dict.get,
                str.join,
                max,
                json.dumps,
                inspect.signature,
                lambda: None,
            ]
        )
    )


@FUZZ
@given(callables(), st.one_of(st.none(), small_text))
def test_fuzzed_callables(fn: Any, name: str | None) -> None:
    check(lambda: from_callable(fn, name=name))
    check(lambda: to_tool_doc(fn))


@FUZZ
@given(docstrings())
def test_fuzzed_docstrings_through_a_function(doc: str) -> None:
    def tool(city: str, days: int = 3) -> str:
        return city

    tool.__doc__ = doc
    check(lambda: from_callable(tool))


class _Hostile:
    """A callable whose attribute lookups raise: ingestion reports it, it does not crash."""

    def __call__(self) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name} for you")

    @property
    def __signature__(self) -> Any:
        raise RuntimeError("signature exploded")


def test_callable_whose_introspection_raises_gives_invalid_tool_error() -> None:
    result = check(lambda: from_callable(_Hostile(), name="hostile"))
    assert isinstance(result, (InvalidToolError, ToolDoc))


def test_docstring_parser_regex_blowup_is_avoided() -> None:
    """docstring_parser's epydoc regex is quadratic after a line starting with "@" (found by fuzzing)."""
    for doc in ("@\n" + "x" * 49_000, "Do it.\n@param " + "x" * 30_000, "@" + "x " * 20_000):
        parsed, seconds = timed(lambda doc=doc: parse_docstring(doc))
        assert isinstance(parsed, ParsedDocstring) and seconds < 2.0, seconds


@FUZZ
@given(st.one_of(json_like.map(lambda v: json.dumps(v, default=str)), text))
def test_fuzzed_response_schemas_read_as_text(raw: str) -> None:
    out, seconds = timed(lambda: readable_response(raw))
    assert isinstance(out, str) and seconds < SLOW_S, out
