"""Input guards (toolret.documents.guards): what a framework tool's metadata keeps for scopes."""

from __future__ import annotations

from toolret.documents.guards import plain_metadata


def test_a_framework_tools_tags_and_plain_metadata_are_kept_and_anything_else_dropped_without_error():
    extra = {
        "annotations": {"readOnlyHint": True},
        "framework": "overridden?",  # the adapter's own keys win
        "client": object(),  # not JSON: never meant for toolret
        7: "not a string key",
        "nan": float("nan"),
    }
    meta = plain_metadata({"framework": "demo"}, ("fs", 3), extra, tool="read_file")
    assert meta == {"framework": "demo", "tags": ["fs", "3"], "annotations": {"readOnlyHint": True}, "nan": None}
    assert plain_metadata({"framework": "demo"}, None, None, tool="t") == {"framework": "demo"}
