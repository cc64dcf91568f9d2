"""ChromaDB storage: what a knowledge base's collections hold, in a real ChromaDB directory."""

from __future__ import annotations

from pathlib import Path

from toolret import ToolKnowledgeBase
from toolret.index.snapshot_file import SNAPSHOT_FILE

from ..fixtures.crash_writer import embedder, tool


def _forget_clients() -> None:
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def test_field_records_hold_vectors_and_metadata_but_not_the_text(tmp_path: Path) -> None:
    # The text of a field is derived from the tool record's ToolDoc; storing it again cost a
    # third of the upsert. The tool record keeps the whole ToolDoc.
    kb = ToolKnowledgeBase(tmp_path / "tools.kb", embedder=embedder())
    kb.add([tool(0, i, 1) for i in range(6)])
    store = kb._writer.store
    fields = store._fields.get(include=["documents", "embeddings", "metadatas"])
    assert len(fields["ids"]) >= 6
    assert all(doc is None for doc in fields["documents"])
    assert all(len(vec) == 64 for vec in fields["embeddings"])
    assert {m["field"] for m in fields["metadatas"]} >= {"description", "parameters"}
    tools = store._tools.get(ids=["b0_t3"], include=["documents"])
    assert '"name":"b0_t3"' in tools["documents"][0]


def test_a_knowledge_base_read_back_through_chromadb_searches_as_before(tmp_path: Path) -> None:
    kb_dir = tmp_path / "tools.kb"
    kb = ToolKnowledgeBase(kb_dir, embedder=embedder())
    kb.add([tool(0, i, 1) for i in range(20)])
    kb.save()
    queries = ["topic5 batch 0", "synthetic tool number 7", "value arg1"]
    before = [[(t.id, round(t.score, 6)) for t in kb.search(q, k=5).tools] for q in queries]
    (kb_dir / SNAPSHOT_FILE).unlink()  # no snapshot file: every tool and vector comes from ChromaDB
    _forget_clients()
    reopened = ToolKnowledgeBase.load(kb_dir, embedder=embedder())
    after = [[(t.id, round(t.score, 6)) for t in reopened.search(q, k=5).tools] for q in queries]
    assert after == before
    assert reopened.get("b0_t7").description == kb.get("b0_t7").description
