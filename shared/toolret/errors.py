"""One exception hierarchy for everything toolret raises on purpose.

Callers catch :class:`ToolRetError` to handle any toolret failure; the subclasses say
which part failed. Every message names the tool or field at fault and what to do.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DatasetError",
    "InvalidToolError",
    "KnowledgeBaseError",
    "MissingDependencyError",
    "ModelMismatchError",
    "QueryError",
    "ToolConflictError",
    "ToolNotAttachedError",
    "ToolNotFoundError",
    "ToolRetError",
]


class ToolRetError(Exception):
    """Base class of every error toolret raises deliberately."""


class InvalidToolError(ToolRetError, ValueError):
    """A tool definition could not be turned into a ToolDoc.

    ``tool`` is the tool's name (or a positional label when it has none) and ``field`` the
    offending field, so a registry of thousands of tools points at the one to fix.
    """

    def __init__(self, tool: str, field: str, problem: str) -> None:
        self.tool = tool
        self.field = field
        self.problem = problem
        super().__init__(f"tool {tool!r}, field {field!r}: {problem}")


class ToolConflictError(InvalidToolError):
    """A tool's id is already held by a tool from another source (another file, or ``kb.add``).

    ``existing`` and ``new`` name the two sources, so the message says which file to fix or
    which choice to make (``toolret index --on-conflict replace|keep|rename``).
    """

    def __init__(self, tool: str, existing: str, new: str, problem: str) -> None:
        self.existing = existing
        self.new = new
        super().__init__(tool, "id", problem)


class KnowledgeBaseError(ToolRetError):
    """The knowledge base on disk or on a server is missing, corrupt or inconsistent."""


class ModelMismatchError(KnowledgeBaseError):
    """A knowledge base was reopened with a different embedding model than it was built with."""


class ConfigError(ToolRetError, ValueError):
    """A configuration value is out of range or names something unknown."""


class DatasetError(ToolRetError):
    """A benchmark dataset folder does not follow the expected format."""


class MissingDependencyError(ToolRetError, ImportError):
    """An optional dependency is not installed; the message gives the pip command."""

    def __init__(self, package: str, extra: str | None = None, purpose: str = "") -> None:
        hint = f"pip install 'toolret[{extra}]'" if extra else f"pip install {package}"
        what = f" for {purpose}" if purpose else ""
        super().__init__(f"{package} is required{what}; install it with: {hint}")


class QueryError(ToolRetError, ValueError):
    """A search request is unusable (empty, too long, or asks for an impossible k)."""


class ScopeError(QueryError):
    """A search's ``where=`` scope is malformed (an unknown field, a value of the wrong type).

    Raised, never worked around: a scope that could not be read must not run as no scope.
    """


class ToolNotFoundError(KnowledgeBaseError, KeyError):
    """A tool id is not in the knowledge base."""

    def __str__(self) -> str:  # KeyError would otherwise print the repr of the message
        return str(self.args[0]) if self.args else "tool not found"


class ToolNotAttachedError(KnowledgeBaseError, LookupError):
    """A stored tool was indexed from a live object (a callable, a framework tool) that is not attached.

    Live objects cannot be saved with a knowledge base: after reopening one, re-attach them
    with ``kb.bind(tools)``. The stored definition stays readable with ``kb.get(tool_id)``.
    """
