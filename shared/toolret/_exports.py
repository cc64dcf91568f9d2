"""Lazy re-exports for the sub-packages' ``__init__`` modules.

A sub-package names its public objects in its ``__init__`` but imports a module only when one of
its names is first used (PEP 562). That keeps ``import toolret.index.lexical`` from loading every
sibling module, and it keeps package initialisation out of the import graph, so sub-packages may
depend on each other's modules without a package-level import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package``, whose ``exports`` map name -> module.

    Example (inside ``toolret/documents/__init__.py``)::

        __all__, __getattr__, __dir__ = lazy_exports(__name__, {"ToolDoc": "tool_doc"}, globals())
    """

    def get(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def names() -> list[str]:
        return sorted({*namespace, *exports})

    return sorted(exports), get, names
