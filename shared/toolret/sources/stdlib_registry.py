"""A real tool registry built from the Python standard library, for demos and tests.

Several hundred documented functions (``math.factorial``, ``os.path.join``, ``json.dumps``,
...) make a registry that needs no download and no API key, yet is large and overlapping
enough for retrieval to matter: "round a number up" has to find ``math.ceil`` among
``math.floor``, ``math.trunc`` and ``decimal`` look-alikes.

Example:
    >>> tools = stdlib_tools()
    >>> 300 <= len(tools) <= 700
    True
    >>> next(t for t in tools if t.name == "math.factorial").parameters[0].name
    'n'
"""

from __future__ import annotations

import datetime
import functools
import importlib
import logging

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import InvalidToolError
from toolret.sources.ingest import from_callable, from_module

__all__ = ["STDLIB_MODULES", "stdlib_tools"]

logger = logging.getLogger("toolret")

#: Modules whose public functions become tools, in registry order. ``operator`` is left out:
#: its fifty near-identical ``add``/``iadd``/``__add__`` entries only add noise.
STDLIB_MODULES: tuple[str, ...] = (
    "math", "cmath", "statistics", "random", "secrets", "string", "textwrap", "re", "difflib",
    "unicodedata", "json", "csv", "html", "base64", "binascii", "hashlib", "zlib", "gzip",
    "datetime", "time", "calendar", "uuid", "urllib.parse", "ipaddress", "mimetypes",
    "os", "os.path", "shutil", "glob", "fnmatch", "filecmp", "tempfile", "platform", "locale",
    "itertools", "functools", "bisect", "heapq", "copy", "pprint", "colorsys", "keyword",
)  # fmt: skip

#: ``datetime`` has no module-level functions; its constructors are what people look for.
_DATETIME_METHODS = (
    ("datetime.date.today", datetime.date.today),
    ("datetime.date.fromisoformat", datetime.date.fromisoformat),
    ("datetime.date.fromtimestamp", datetime.date.fromtimestamp),
    ("datetime.datetime.now", datetime.datetime.now),
    ("datetime.datetime.strptime", datetime.datetime.strptime),
    ("datetime.datetime.fromisoformat", datetime.datetime.fromisoformat),
    ("datetime.datetime.fromtimestamp", datetime.datetime.fromtimestamp),
    ("datetime.datetime.combine", datetime.datetime.combine),
)


def stdlib_tools() -> list[ToolDoc]:
    """The standard-library registry: one ToolDoc per public function, ids unique.

    Order is deterministic (modules as in :data:`STDLIB_MODULES`, functions by name); the
    exact set depends on the platform (``os`` differs between Linux, macOS and Windows).
    Built once per process and cached; the returned list is a fresh copy.
    """
    return list(_build())


@functools.lru_cache(maxsize=1)
def _build() -> tuple[ToolDoc, ...]:
    docs: dict[str, ToolDoc] = {}
    for module_name in STDLIB_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:  # e.g. a Python built without zlib
            logger.debug("stdlib registry: skipping %s (%s)", module_name, exc)
            continue
        for doc in from_module(module, prefix=module_name):
            docs.setdefault(doc.id, doc)
        if module_name == "datetime":
            for name, method in _DATETIME_METHODS:
                try:
                    docs.setdefault(name, from_callable(method, name=name))
                except InvalidToolError as exc:
                    logger.debug("stdlib registry: skipping %s (%s)", name, exc)
    return tuple(docs.values())
