"""The choices for a tool whose id another source already holds (``toolret index --on-conflict``).

Kept apart from :mod:`toolret.sources.tool_files` so that the command line can offer them
without loading the tool model: ``toolret search`` starts by building its argument parser, and
a fresh process should pay only for what a search needs (issue 45, cold start).
"""

from __future__ import annotations

__all__ = ["ON_CONFLICT"]

#: What :func:`~toolret.sources.tool_files.index_tool_file` does with a tool whose id another source
#: holds: stop (``error``), let the file's tool win (``replace``), leave the indexed one (``keep``), or
#: index the file's tool under ``"<file stem>/<id>"`` (``rename``; the name the model calls stays).
ON_CONFLICT = ("error", "replace", "keep", "rename")
