"""Tool names beside an index, for re-attaching live tools (toolret.index.names_file)."""

from __future__ import annotations

import json

import pytest

from toolret import KnowledgeBaseError
from toolret.index.names_file import read_names, write_names


def test_names_are_written_sorted_as_json_and_read_back(tmp_path):
    write_names(tmp_path / "idx", "tools.json", ["b", "a"])
    assert json.loads((tmp_path / "idx" / "tools.json").read_text()) == {"format": 1, "tools": ["a", "b"]}
    assert read_names(tmp_path / "idx", "tools.json", written_by="the test") == ["a", "b"]


def test_a_missing_or_foreign_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(KnowledgeBaseError, match="no tools.json in .*not a directory written by the test"):
        read_names(tmp_path, "tools.json", written_by="the test")
    (tmp_path / "tools.json").write_text(json.dumps({"format": 2, "tools": []}))
    with pytest.raises(KnowledgeBaseError, match="not a toolret tool-names file"):
        read_names(tmp_path, "tools.json", written_by="the test")
    (tmp_path / "tools.json").write_text("[1, 2]")
    with pytest.raises(KnowledgeBaseError, match="not a toolret tool-names file"):
        read_names(tmp_path, "tools.json", written_by="the test")
