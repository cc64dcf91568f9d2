"""Query evidence: how much a query should trust exact matching, measured against the registry."""

from __future__ import annotations

import pytest

from toolret import ToolDoc, ToolKnowledgeBase
from toolret.index.lexical import analyze
from toolret.scoring.evidence import query_evidence, registry_df
from toolret.scoring.mftr import evidence_score, query_beta

DOCS = [
    ToolDoc(name="get_weather", description="Get the current weather for a city."),
    ToolDoc(name="get_news", description="Get the latest news for a topic."),
    ToolDoc(name="get_stock_quote", description="Get the latest stock quote for a ticker."),
    ToolDoc(name="hdf5_dataset_reader", description="Read a dataset from an HDF5 file."),
]


def _evidence(kb: ToolKnowledgeBase, text: str) -> float:
    ev = query_evidence(text, analyze(text), *registry_df(kb._writer.snapshot))
    return float(evidence_score(ev.oov_share, ev.n_ident))


def test_document_frequencies_come_from_the_registry(embedder) -> None:
    kb = ToolKnowledgeBase.from_tools(DOCS, embedder=embedder)
    df, n = registry_df(kb._writer.snapshot)
    assert n == 4
    assert df["latest"] == 2 and df["hdf5"] == 1 and "get" not in df  # a stopword is not indexed


def test_identifier_heavy_query_moves_the_balance_toward_lexical(embedder) -> None:
    kb = ToolKnowledgeBase.from_tools(DOCS, embedder=embedder)
    paraphrase = _evidence(kb, "what is going on in the world today")
    identifier = _evidence(kb, "read it with hdf5_dataset_reader")
    assert identifier > paraphrase + 0.5
    assert query_beta(0.5, 1.0, identifier) > 0.5 > query_beta(0.5, 1.0, paraphrase)
    assert query_beta(0.5, 0.0, identifier) == 0.5  # slope 0: the same balance for every query


def test_rare_registry_words_weigh_more_than_common_ones() -> None:
    df = {"weather": 3, "latest": 2, "hdf5": 1}
    rare = query_evidence("hdf5", ["hdf5"], df, 4)
    common = query_evidence("weather", ["weather"], df, 4)
    assert rare.idf_mass > common.idf_mass
    assert query_evidence("zebra", ["zebra"], df, 4).oov_share == pytest.approx(1.0)
