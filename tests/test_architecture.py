"""The layout is part of the design (docs/architecture.md): these checks keep it from drifting."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[1] / "shared" / "toolret"
ADAPTERS = ["langchain_toolret", "llamaindex_toolret"]
SUBPACKAGES = [
    "agents",
    "cards",
    "config",
    "documents",
    "eval",
    "index",
    "llm",
    "memory",
    "providers",
    "scope",
    "scoring",
    "search",
    "sources",
    "training",
]
#: Only the public surface sits at the top of the engine; everything else lives in a sub-package.
TOP_LEVEL = {"__init__", "_exports", "cli", "errors", "knowledge_base", "results"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ENGINE.rglob("*.py")):
        parts = list(path.relative_to(ENGINE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(path: Path, module: str, known: set[str]) -> set[str]:
    """Every toolret module ``module`` imports, at the top or inside a function (lazy imports count)."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            # `from toolret.index import persistence` imports the module toolret.index.persistence
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        found.update(n for n in names if n in known and n != module)
    return found


def test_no_module_is_longer_than_500_lines():
    long = {m: n for m, p in _modules().items() if (n := len(p.read_text().splitlines())) > 500}
    assert not long, f"split these modules by concern: {long}"


def test_the_knowledge_base_is_a_facade_of_at_most_300_lines():
    assert len((ENGINE / "knowledge_base.py").read_text().splitlines()) <= 300


def test_the_top_level_holds_only_the_public_surface():
    top = {p.stem for p in ENGINE.glob("*.py")}
    assert top == TOP_LEVEL
    assert sorted(p.name for p in ENGINE.iterdir() if p.is_dir() and (p / "__init__.py").exists()) == SUBPACKAGES


def test_there_is_no_import_cycle():
    modules = _modules()
    known = set(modules)
    graph = {m: _imports(p, m, known) for m, p in modules.items()}
    # A sub-package __init__ only names lazy exports; importing a module of it never runs the others.
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_benchmark_code_stays_out_of_the_runtime_path():
    runtime = [m for m in _modules() if not m.startswith(("toolret.eval", "toolret.cli", "toolret.training"))]
    graph = {m: _imports(p, m, set(_modules())) for m, p in _modules().items()}
    leaks = {m: sorted(i for i in graph[m] if i.startswith("toolret.eval")) for m in runtime}
    assert not {m: v for m, v in leaks.items() if v}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (a module's, class's or function's first statement)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            out.add(id(body[0].value))
    return out


def test_the_engine_never_names_an_adapter_in_code():
    """Adapters depend on the engine, never the other way: an adapter's converter is found through
    the ``toolret.converters`` entry points (pyproject.toml), not by a module name the engine holds."""
    offenders = []
    for module, path in _modules().items():
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if "langchain_toolret" in node.value or "llamaindex_toolret" in node.value:
                    offenders.append(f"{module}:{node.lineno}")
    assert not offenders, offenders


def test_training_code_stays_out_of_the_runtime_path():
    """Searching never imports the training package (it needs torch; search must not)."""
    runtime = [m for m in _modules() if not m.startswith(("toolret.training", "toolret.cli"))]
    graph = {m: _imports(p, m, set(_modules())) for m, p in _modules().items()}
    leaks = {m: sorted(i for i in graph[m] if i.startswith("toolret.training")) for m in runtime}
    assert not {m: v for m, v in leaks.items() if v}


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_every_name_a_subpackage_exports_resolves(package):
    module = importlib.import_module(f"toolret.{package}")
    assert module.__all__, package
    assert list(module.__all__) == sorted(set(module.__all__))
    for name in module.__all__:
        assert getattr(module, name) is not None, f"toolret.{package}.{name}"
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


def test_every_subpackage_is_packaged():
    """pyproject.toml lists packages by name: a new sub-package missing there would be absent
    from a built wheel while an editable install still finds it."""
    import tomllib

    listed = set(tomllib.loads((ENGINE.parents[1] / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {"toolret"} | {f"toolret.{p.parent.name}" for p in ENGINE.glob("*/__init__.py")}
    assert on_disk <= listed, sorted(on_disk - listed)
    assert set(SUBPACKAGES) == {p.parent.name for p in ENGINE.glob("*/__init__.py")}


def _documented_modules() -> dict[str, set[str]]:
    """{package: module names} of docs/architecture.md's module table."""
    doc = (ENGINE.parents[1] / "docs" / "architecture.md").read_text()
    rows = {}
    for line in doc.splitlines():
        if match := re.match(r"\| `(\w+)/`[^|]*\| (.*) \|$", line):
            rows[match.group(1)] = set(re.findall(r"`(\w+)`", match.group(2)))
    return rows


def test_the_architecture_page_names_every_module():
    rows = _documented_modules()
    packages = [ENGINE / name for name in SUBPACKAGES] + [ENGINE.parents[1] / a for a in ADAPTERS]
    missing = [
        f"{package.name}/{path.stem}"
        for package in packages
        for path in sorted(package.glob("*.py"))
        if path.stem != "__init__" and path.stem not in rows.get(package.name, set())
    ]
    assert not missing, f"docs/architecture.md does not name these modules: {missing}"


def test_the_search_pipeline_is_one_package_of_at_most_18_modules():
    assert len(list((ENGINE / "search").glob("*.py"))) <= 18
    # nothing in the search imports the adapters' package
    for path in (ENGINE / "search").glob("*.py"):
        assert "toolret.agents" not in path.read_text(), path.name
