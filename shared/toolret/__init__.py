"""toolret: hand an LLM agent the few tools a request needs, out of thousands.

Quickstart::

    from toolret import ToolKnowledgeBase
    kb = ToolKnowledgeBase("my_tools.kb")   # or ToolKnowledgeBase() in memory
    kb.add(my_functions)                   # callables, OpenAI tool dicts, ToolDocs...
    kb.save()
    result = kb.search("what's the weather in Paris?", k=5)
    for tool in result.tools:
        print(tool.name, tool.score, tool.field_scores)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolret._exports import lazy_exports

if TYPE_CHECKING:  # the names as type checkers and IDEs see them; at run time each loads on first use
    from toolret.config import FieldWeights, K, PenaltyConfig, RetrievalConfig, validate_k
    from toolret.documents.tool_doc import FIELDS, INDEX_FIELDS, ToolDoc, ToolParam
    from toolret.errors import (
        ConfigError,
        DatasetError,
        InvalidToolError,
        KnowledgeBaseError,
        MissingDependencyError,
        ModelMismatchError,
        QueryError,
        ScopeError,
        ToolConflictError,
        ToolNotAttachedError,
        ToolNotFoundError,
        ToolRetError,
    )
    from toolret.index.writer import SyncReport
    from toolret.knowledge_base import ToolKnowledgeBase
    from toolret.results import ScoredTool, SearchResult, TraceStep
    from toolret.scope.tool_scope import ToolScope, scoped

#: Public name -> the module (under toolret) that defines it. ``import toolret`` loads none of them:
#: a fresh ``toolret search`` imports only what a search needs, and the CLI starts fast (issue 45).
_EXPORTS = {
    **dict.fromkeys(["FieldWeights", "K", "PenaltyConfig", "RetrievalConfig", "validate_k"], "config"),
    **dict.fromkeys(["FIELDS", "INDEX_FIELDS", "ToolDoc", "ToolParam"], "documents.tool_doc"),
    **dict.fromkeys(
        [
            "ConfigError",
            "DatasetError",
            "InvalidToolError",
            "KnowledgeBaseError",
            "MissingDependencyError",
            "ModelMismatchError",
            "QueryError",
            "ScopeError",
            "ToolConflictError",
            "ToolNotAttachedError",
            "ToolNotFoundError",
            "ToolRetError",
        ],
        "errors",
    ),
    "SyncReport": "index.writer",
    "ToolKnowledgeBase": "knowledge_base",
    **dict.fromkeys(["ScoredTool", "SearchResult", "TraceStep"], "results"),
    **dict.fromkeys(["ToolScope", "scoped"], "scope.tool_scope"),
}

__version__ = "0.1.0"

__all__ = [
    "FIELDS",
    "ConfigError",
    "DatasetError",
    "FieldWeights",
    "INDEX_FIELDS",
    "InvalidToolError",
    "K",
    "KnowledgeBaseError",
    "MissingDependencyError",
    "ModelMismatchError",
    "PenaltyConfig",
    "QueryError",
    "ScopeError",
    "RetrievalConfig",
    "ScoredTool",
    "SearchResult",
    "SyncReport",
    "ToolDoc",
    "ToolConflictError",
    "ToolKnowledgeBase",
    "ToolNotAttachedError",
    "ToolNotFoundError",
    "ToolParam",
    "ToolRetError",
    "ToolScope",
    "TraceStep",
    "__version__",
    "scoped",
    "validate_k",
]
_, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
