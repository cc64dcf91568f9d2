"""The benchmark guard of tests/conftest.py: a missing ../shared fails the benchmark tests, never skips them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest


def test_a_present_folder_is_returned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(conftest, "BENCHMARKS", tmp_path)
    assert conftest.require_benchmarks() == tmp_path


def test_a_missing_folder_fails_naming_where_it_belongs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(conftest, "BENCHMARKS", tmp_path / "absent")
    with pytest.raises(pytest.fail.Exception, match="needs the dev benchmarks at .*absent"):
        conftest.require_benchmarks()
