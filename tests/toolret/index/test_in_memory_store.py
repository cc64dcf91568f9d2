"""An in-memory knowledge base keeps its vectors once: in the snapshot, not in a ChromaDB client too."""

from __future__ import annotations

import numpy as np

from toolret import ToolDoc, ToolKnowledgeBase
from toolret.index.in_memory_store import InMemoryStore


def test_in_memory_knowledge_base_stores_documents_and_history_but_no_vectors(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    store = kb._writer.store
    assert isinstance(store, InMemoryStore)
    kb.add(
        [
            ToolDoc(name="get_weather", description="Weather for a city."),
            ToolDoc(name="convert_currency", description="Convert money between currencies."),
        ]
    )
    assert kb.search("is it raining in Paris?", k=1).tools[0].name == "get_weather"
    assert set(store.read_index()) == {"get_weather", "convert_currency"}
    assert all(s.vectors == {} for s in store.read_all())
    assert not any(isinstance(v, np.ndarray) for v in vars(store).values())
    kb.record("rain in Rome?", ["get_weather"])
    assert kb.history_size == 1 and store.read_history()[1].shape == (1, 384)
    kb.remove(["get_weather"])
    assert set(store.read_index()) == {"convert_currency"} and kb.refresh().unchanged == 1


def test_two_in_memory_knowledge_bases_share_nothing(embedder):
    a, b = ToolKnowledgeBase(embedder=embedder), ToolKnowledgeBase(embedder=embedder)
    a.add([ToolDoc(name="get_weather", description="Weather for a city.")])
    assert len(a) == 1 and len(b) == 0 and a._writer.store.name != b._writer.store.name
