"""The benchmark guard of tests/conftest.py: outside CI a missing ../shared skips with the reason;
with TOOLRET_REQUIRE_BENCHMARKS set (CI) it fails, so no benchmark test can be skipped there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest


def test_a_present_folder_is_returned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(conftest, "BENCHMARKS", tmp_path)
    assert conftest.require_benchmarks() == tmp_path


def test_a_missing_folder_skips_with_the_reason_outside_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(conftest, "BENCHMARKS", tmp_path / "absent")
    monkeypatch.delenv("TOOLRET_REQUIRE_BENCHMARKS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="needs the dev benchmarks at .*absent"):
        conftest.require_benchmarks()


def test_a_missing_folder_fails_when_ci_requires_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(conftest, "BENCHMARKS", tmp_path / "absent")
    monkeypatch.setenv("TOOLRET_REQUIRE_BENCHMARKS", "1")
    with pytest.raises(pytest.fail.Exception, match="TOOLRET_REQUIRE_BENCHMARKS is set"):
        conftest.require_benchmarks()
