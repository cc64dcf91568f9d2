"""The names of a knowledge base's tools in a JSON file beside it: how an adapter re-attaches live tools.

Live tool objects cannot be saved (and nothing of a knowledge base is ever pickled), so an
adapter that persists an index writes the tool *names* (``{"format": 1, "tools": [...]}``,
atomically) and, when the index is reopened with the live tools, checks every name is among
them. A missing or foreign file is a :class:`~toolret.errors.KnowledgeBaseError` naming it.

Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> write_names(folder, "tools.json", ["get_weather", "convert_currency"])
    >>> read_names(folder, "tools.json", written_by="the example")
    ['convert_currency', 'get_weather']
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from toolret.errors import KnowledgeBaseError

__all__ = ["read_names", "write_names"]

_FORMAT = 1


def write_names(folder: str | os.PathLike[str], fname: str, names: Iterable[str]) -> None:
    """Write ``names`` (sorted) to ``folder/fname`` atomically (a temporary file, then a rename)."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    tmp = target / f".{fname}.tmp"
    tmp.write_text(json.dumps({"format": _FORMAT, "tools": sorted(names)}, indent=1, ensure_ascii=False), "utf-8")
    tmp.replace(target / fname)


def read_names(folder: str | os.PathLike[str], fname: str, *, written_by: str) -> list[str]:
    """The names :func:`write_names` wrote in ``folder``; ``written_by`` names the writer for the error."""
    path = Path(folder) / fname
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KnowledgeBaseError(f"no {fname} in {str(folder)!r}: not a directory written by {written_by}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise KnowledgeBaseError(f"cannot read {path}: {exc}") from exc
    tools = payload.get("tools") if isinstance(payload, dict) else None
    if (
        not isinstance(payload, dict)
        or payload.get("format") != _FORMAT
        or not isinstance(tools, list)
        or not all(isinstance(t, str) for t in tools)
    ):
        raise KnowledgeBaseError(f"{path} is not a toolret tool-names file (format {_FORMAT})")
    return tools
