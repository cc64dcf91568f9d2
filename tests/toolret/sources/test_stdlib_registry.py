"""The standard-library demo registry: size, unique ids, and real content."""

from __future__ import annotations

from toolret.sources.stdlib_registry import STDLIB_MODULES, stdlib_tools


def test_registry_size_is_several_hundred_with_unique_ids() -> None:
    tools = stdlib_tools()
    assert 300 <= len(tools) <= 700
    assert len({t.id for t in tools}) == len(tools)


def test_math_factorial_has_a_parameter_and_a_description() -> None:
    factorial = next(t for t in stdlib_tools() if t.id == "math.factorial")
    assert [p.name for p in factorial.parameters] == ["n"]
    assert factorial.parameters[0].required
    assert factorial.description.startswith("Find n!")
    assert factorial.metadata["module"] == "math"


def test_submodules_are_named_as_imported() -> None:
    names = {t.name for t in stdlib_tools()}
    assert {"os.path.join", "urllib.parse.quote", "json.dumps", "datetime.datetime.now"} <= names
    assert not any(name.startswith("posixpath.") for name in names)


def test_only_functions_no_classes_or_private_names() -> None:
    names = {t.name for t in stdlib_tools()}
    assert "json.JSONDecoder" not in names and "datetime.datetime" not in names
    assert not any(name.rsplit(".", 1)[-1].startswith("_") for name in names)


def test_every_tool_belongs_to_a_listed_module_and_order_is_stable() -> None:
    tools = stdlib_tools()
    assert all(any(t.name.startswith(m + ".") for m in STDLIB_MODULES) for t in tools)
    assert [t.id for t in tools] == [t.id for t in stdlib_tools()]


def test_most_tools_have_a_description() -> None:
    tools = stdlib_tools()
    assert sum(1 for t in tools if t.description) >= 0.9 * len(tools)
