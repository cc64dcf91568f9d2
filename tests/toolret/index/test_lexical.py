"""Saved BM25 indexes are read back without bm25s and score exactly as bm25s does."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from toolret.index.lexical import LexicalIndex, _SavedBM25

TEXTS = [
    "weather forecast for a city",
    "convert an amount of money into another currency",
    "",
    "split a file path into directory and file name; path utilities",
    "compute the sha-256 digest of bytes",
    "weather history of a city, rain and wind",
]
QUERIES = ["city weather rain", "path of a file", "money", "nothing matches zzz", "sha 256 digest bytes weather"]


def test_a_saved_index_is_read_without_bm25s_and_scores_the_same(tmp_path: Path) -> None:
    import bm25s

    built = LexicalIndex.build(TEXTS)
    built.save(tmp_path / "f")
    loaded = LexicalIndex.load(tmp_path / "f")
    assert isinstance(loaded._retriever, _SavedBM25)
    reference = LexicalIndex(bm25s.BM25.load(str(tmp_path / "f"), load_corpus=False), len(TEXTS))
    for query in QUERIES:
        a, b, c = loaded.scores(query), reference.scores(query), built.scores(query)
        assert a.dtype == b.dtype and np.array_equal(a, b) and np.array_equal(a, c), query
        assert loaded.upper_bound(query) == reference.upper_bound(query)
    assert loaded.scores("city weather")[0] > 0 and loaded.scores("city weather")[1] == 0
    assert loaded.doc_freq() == reference.doc_freq() and loaded.doc_freq()["citi"] == 2


def test_a_loaded_index_saves_the_same_index_again(tmp_path: Path) -> None:
    LexicalIndex.build(TEXTS).save(tmp_path / "a")
    LexicalIndex.load(tmp_path / "a").save(tmp_path / "b")
    again = LexicalIndex.load(tmp_path / "b")
    for query in QUERIES:
        assert np.array_equal(again.scores(query), LexicalIndex.load(tmp_path / "a").scores(query))


def test_an_empty_field_loads_as_empty(tmp_path: Path) -> None:
    LexicalIndex.build(["", ""]).save(tmp_path / "e")
    empty = LexicalIndex.load(tmp_path / "e")
    assert empty.n_docs == 2 and not empty.scores("anything").any()


def test_building_an_index_leaves_bm25s_as_quiet_as_the_users_logging() -> None:
    import logging

    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    root = logging.getLogger()
    handler, level = Keep(), root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)  # logging.basicConfig(level=logging.WARNING)
    try:
        LexicalIndex.build(TEXTS)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    noisy = [r.getMessage() for r in records if r.name.startswith("bm25s") and r.levelno < logging.WARNING]
    assert noisy == []
