"""Loading benchmark folders: the happy path, every DatasetError, and reproducible samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolret.errors import DatasetError
from toolret.eval.datasets import EvalQuery, load_dataset, sample_queries

TOOLS = [
    {
        "id": "get_weather",
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": None,
        "response": None,
        "examples": [],
        "category": None,
        "source": "test",
    },
    {
        "id": "send_email",
        "name": "send_email",
        "description": "Send an e-mail.",
        "parameters": None,
        "response": None,
        "examples": [],
        "category": None,
        "source": "test",
    },
]
QUERIES = [
    {"id": "q1", "query": "weather in Paris", "relevant": ["get_weather"]},
    {
        "id": "q2",
        "query": "mail Bob the weather",
        "relevant": ["get_weather", "send_email"],
        "args": {"calls": [{"tool": "get_weather", "arguments": {"city": ["Paris"]}}]},
    },
]


def write_dataset(folder: Path, tools: list[Any] = TOOLS, queries: list[Any] = QUERIES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tools.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tools), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    return folder


def test_load_dataset_reads_tools_and_queries(tmp_path: Path) -> None:
    ds = load_dataset(write_dataset(tmp_path / "tiny"))
    assert ds.name == "tiny"
    assert ds.tool_ids == ["get_weather", "send_email"]
    assert ds.tools[0]["source"] == "test"  # raw records are kept as they are
    assert [q.id for q in ds.queries] == ["q1", "q2"]
    assert ds.queries[1].relevant == ["get_weather", "send_email"]
    assert ds.queries[1].args == QUERIES[1]["args"]
    assert ds.queries[0].args is None


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "tiny")
    with (folder / "queries.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n   \n")
    assert len(load_dataset(folder).queries) == 2


def test_missing_folder_is_a_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_dataset(tmp_path / "nowhere")


def test_missing_queries_file_names_the_file(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "tiny")
    (folder / "queries.jsonl").unlink()
    with pytest.raises(DatasetError, match=r"queries\.jsonl: file not found"):
        load_dataset(folder)


def test_bad_json_names_file_and_line(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "tiny")
    with (folder / "tools.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "broken", \n')
    with pytest.raises(DatasetError, match=r"tools\.jsonl:3: not valid JSON"):
        load_dataset(folder)


def test_query_without_relevant_names_file_and_line(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "tiny", queries=[QUERIES[0], {"id": "q2", "query": "hello"}])
    with pytest.raises(DatasetError, match=r"queries\.jsonl:2: query 'q2' needs 'relevant'"):
        load_dataset(folder)


def test_query_with_empty_relevant_is_rejected(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "tiny", queries=[{"id": "q1", "query": "hi", "relevant": []}])
    with pytest.raises(DatasetError, match="needs 'relevant'"):
        load_dataset(folder)


def test_relevant_id_not_among_tools_is_rejected(tmp_path: Path) -> None:
    queries = [{"id": "q1", "query": "book a flight", "relevant": ["book_flight"]}]
    folder = write_dataset(tmp_path / "tiny", queries=queries)
    with pytest.raises(DatasetError, match=r"queries\.jsonl:1: query 'q1' lists relevant tool 'book_flight'"):
        load_dataset(folder)


def test_duplicate_tool_id_is_rejected(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "tiny", tools=[TOOLS[0], TOOLS[1], TOOLS[0]])
    with pytest.raises(DatasetError, match=r"tools\.jsonl:3: tool id 'get_weather' appears twice"):
        load_dataset(folder)


def test_sample_queries_is_reproducible_and_keeps_order() -> None:
    queries = [EvalQuery(id=f"q{i}", query=f"query {i}", relevant=["t"]) for i in range(50)]
    first = sample_queries(queries, 10)
    assert [q.id for q in first] == [q.id for q in sample_queries(queries, 10)]
    positions = [queries.index(q) for q in first]
    assert positions == sorted(positions) and len(set(positions)) == 10
    assert [q.id for q in sample_queries(queries, 10, seed=1)] != [q.id for q in first]
    assert sample_queries(queries, None) == queries
    assert sample_queries(queries, 500) == queries


def test_real_restbench_tmdb_loads(benchmarks: Path) -> None:
    ds = load_dataset(benchmarks / "restbench_tmdb")
    assert ds.name == "restbench_tmdb"
    assert len(ds.tools) == 54
    assert len(ds.queries) == 100
    assert ds.queries[0].relevant == ["GET /search/person", "GET /person/{person_id}/movie_credits"]
    # README: avg_relevant 2.25
    assert sum(len(q.relevant) for q in ds.queries) / len(ds.queries) == pytest.approx(2.25)


def test_the_training_split_is_read_where_a_set_has_one(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path / "intents")
    assert load_dataset(folder, split="train").queries == load_dataset(folder).queries  # no split: the queries
    train = [{"id": "t-0", "query": "I never got my card", "relevant": [TOOLS[0]["id"]]}]
    (folder / "train_queries.jsonl").write_text("\n".join(json.dumps(q) for q in train) + "\n")
    assert [q.id for q in load_dataset(folder, split="train").queries] == ["t-0"]
    assert [q.id for q in load_dataset(folder).queries] == [q["id"] for q in QUERIES]  # scored on the test split
    with pytest.raises(DatasetError, match="split"):
        load_dataset(folder, split="dev")
