"""The public API is a contract: these names are what users import."""

from __future__ import annotations

import toolret

EXPECTED = {
    "FIELDS",
    "ConfigError",
    "DatasetError",
    "FieldWeights",
    "InvalidToolError",
    "KnowledgeBaseError",
    "MissingDependencyError",
    "ModelMismatchError",
    "PenaltyConfig",
    "QueryError",
    "ScopeError",
    "ToolScope",
    "scoped",
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
    "TraceStep",
    "__version__",
    "K",
    "validate_k",
    "INDEX_FIELDS",
}


def test_public_names_are_exactly_the_documented_ones():
    assert set(toolret.__all__) == EXPECTED
    for name in EXPECTED:
        assert hasattr(toolret, name), name


def test_every_error_derives_from_toolret_error():
    for name in EXPECTED:
        obj = getattr(toolret, name)
        if isinstance(obj, type) and name.endswith("Error"):
            assert issubclass(obj, toolret.ToolRetError), name


def test_importing_toolret_does_not_import_heavy_dependencies():
    import subprocess
    import sys

    heavy = ("sentence_transformers", "torch", "onnxruntime", "tokenizers")
    code = f"import sys, toolret; print(*[m in sys.modules for m in {heavy!r}])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False"] * len(heavy)
