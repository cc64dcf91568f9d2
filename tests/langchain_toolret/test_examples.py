"""The LangChain/LangGraph examples run end to end (offline, scripted model) on a smaller registry."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: Enough of the standard-library registry for every example's requests, plus look-alikes.
KEEP = (
    "math_factorial",
    "math_comb",
    "math_perm",
    "math_gcd",
    "math_log",
    "calendar_isleap",
    "calendar_leapdays",
    "calendar_monthrange",
    "calendar_weekday",
    "difflib_get_close_matches",
    "difflib_ndiff",
    "statistics_median",
    "statistics_mean",
    "textwrap_wrap",
    "textwrap_fill",
    "time_time",
    "random_rand",
    "random_random",
    "hashlib_sha256",
    "hashlib_md5",
    "binascii_b2a_hex",
    "binascii_hexlify",
    "string_capwords",
)


@pytest.fixture(scope="module")
def small_registry(monkeypatch_module, embedder):
    # Every example indexes the same tools: embed each text once (same real model, same vectors).
    cache: dict[str, np.ndarray] = {}
    embed = embedder.embed

    def cached(texts):
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            cache.update(zip(missing, embed(missing)))
        return np.stack([cache[t] for t in texts]) if texts else embed(texts)

    monkeypatch_module.setattr(embedder, "embed", cached)
    sys.path.insert(0, str(EXAMPLES))
    helper = importlib.import_module("langchain_stdlib_tools")
    tools = [t for t in helper.stdlib_langchain_tools() if t.name.startswith(KEEP)]
    assert 25 < len(tools) < 50
    yield lambda: list(tools)
    sys.path.remove(str(EXAMPLES))


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _run(name, small_registry, monkeypatch, capsys, *args):
    module = importlib.import_module(name)
    monkeypatch.setattr(module, "stdlib_langchain_tools", small_registry)
    assert module.main(list(args)) == 0
    return capsys.readouterr().out


def test_stdlib_tools_run_safe_functions_and_dry_run_the_rest():
    sys.path.insert(0, str(EXAMPLES))
    try:
        helper = importlib.import_module("langchain_stdlib_tools")
        tools = {t.name: t for t in helper.stdlib_langchain_tools()}
    finally:
        sys.path.remove(str(EXAMPLES))
    assert len(tools) > 500
    assert tools["math_factorial"].invoke({"n": 5}) == "120"
    assert tools["shutil_rmtree"].invoke({"path": "/tmp/x"}).startswith("(dry run) would call shutil.rmtree")


@pytest.mark.slow
def test_middleware_example(small_registry, monkeypatch, capsys):
    out = _run("langchain_middleware", small_registry, monkeypatch, capsys)
    assert "tool math_factorial -> '479001600'" in out and "tool math_comb -> '120'" in out
    assert "tool search_tools -> 'Tools found" in out and "call 7:" in out


@pytest.mark.slow
def test_langgraph_nodes_example(small_registry, monkeypatch, capsys):
    out = _run("langgraph_nodes", small_registry, monkeypatch, capsys)
    assert "tool statistics_median -> 7" in out and "tool calendar_isleap -> True" in out


@pytest.mark.slow
def test_langgraph_subgraph_example(small_registry, monkeypatch, capsys):
    out = _run("langgraph_subgraph", small_registry, monkeypatch, capsys)
    assert "Nodes visited:\n   begin\n   plan\n   retrieve\n   fuse\n   rerank\n   reflect" in out
    assert "hashlib_sha256" in out and "As a subgraph of an agent: bound" in out


@pytest.mark.slow
def test_agentic_example(small_registry, monkeypatch, capsys):
    out = _run("langchain_agentic", small_registry, monkeypatch, capsys)
    assert "tool calendar_monthrange -> '(1, 29)'" in out
    assert "tool difflib_get_close_matches -> \"['graph', 'grape']\"" in out
    bound = [line for line in out.splitlines() if "bound now" in line]
    assert len(bound) == 3 and all(line.count("'") <= 8 for line in bound)  # at most 4 names


@pytest.mark.slow
def test_token_savings_example(small_registry, monkeypatch, capsys, tmp_path):
    out = _run(
        "langchain_token_savings",
        small_registry,
        monkeypatch,
        capsys,
        "--condensed",
        "--json",
        str(tmp_path / "r.json"),
    )
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["selector"]["tokens_per_call_mean"] < report["all_tools_tokens_per_call"] / 5
    assert report["agentic"]["tools_per_call_max"] <= 11
    assert "selection latency per new user turn" in out
    # Condensed descriptions: the same selection, fewer tokens (stdlib docstrings are long).
    assert report["all_tools_condensed_tokens_per_call"] < report["all_tools_tokens_per_call"]
    for mode in ("selector", "agentic"):
        assert report[f"{mode}_condensed"]["tokens_per_call_mean"] < report[mode]["tokens_per_call_mean"]
    assert report["selector_condensed"]["model_calls"] == report["selector"]["model_calls"]
    assert "condensed descriptions (raw -> condensed" in out
