"""The LlamaIndex examples run end to end (on a smaller registry or query sample)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, *args], check=False, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_agent_example_serves_every_request_with_the_expected_tool():
    out = run(str(EXAMPLES / "llamaindex_agent.py"), "--modules", "math,statistics,os.path,calendar,json")
    assert "5/5 requests were served by the expected tool" in out
    assert "calendar_monthrange({'year': 2029, 'month': 2}) -> (3, 28) [ok]" in out


@pytest.mark.slow
def test_compare_example_prints_both_indexes(benchmarks, tmp_path):
    out = run(
        str(EXAMPLES / "llamaindex_compare.py"),
        "--root",
        str(benchmarks),
        "--datasets",
        "restbench_spotify",
        "--limit",
        "15",
        "--presets",
        "fast",
        "--json",
        str(tmp_path / "rows.json"),
    )
    assert "ObjectIndex (stock, MiniLM)" in out and "ToolObjectIndex (fast)" in out
    assert (tmp_path / "rows.json").read_text().count('"recall@5"') == 2
