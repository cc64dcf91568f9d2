"""The snapshot file: a saved knowledge base opens without ChromaDB, and never from a stale copy.

Real ChromaDB directories throughout; the embedder is the crash test's hashed bag of words
(the file is about storage, and a subprocess can rebuild that embedder in microseconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from toolret import ToolKnowledgeBase
from toolret.index.local_store import LocalStore
from toolret.index.snapshot_file import MANIFEST, SNAPSHOT_FILE, store_stamp

from ..fixtures.crash_writer import embedder, tool

QUERIES = ["topic5 batch 0", "synthetic tool number 7", "b0_t3", "value arg1"]


def _forget_clients() -> None:
    """Drop ChromaDB's per-path client cache so each open reads the directory afresh."""
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def _open(kb_dir: Path) -> ToolKnowledgeBase:
    _forget_clients()
    return ToolKnowledgeBase.load(kb_dir, embedder=embedder())


def _from_file(kb: ToolKnowledgeBase) -> bool:
    store = kb._writer.store
    assert isinstance(store, LocalStore)
    return store.from_file


def _results(kb: ToolKnowledgeBase) -> list[list[tuple[str, float]]]:
    return [[(t.id, round(t.score, 6)) for t in kb.search(q, k=5).tools] for q in QUERIES]


def _dirty(kb_dir: Path) -> bool:
    return bool(json.loads((kb_dir / MANIFEST).read_text()).get("dirty"))


@pytest.fixture()
def saved_kb(tmp_path: Path) -> Path:
    kb_dir = tmp_path / "tools.kb"
    kb = ToolKnowledgeBase(kb_dir, embedder=embedder())
    kb.add([tool(0, i, 1) for i in range(20)])
    kb.record("find topic5 things", ["b0_t5"])
    kb.save()
    _forget_clients()
    return kb_dir


CHILD = """
import json, sys
from toolret import ToolKnowledgeBase
from tests.toolret.fixtures.crash_writer import embedder
kb = ToolKnowledgeBase.load(sys.argv[1], embedder=embedder())
out = [[(t.id, round(t.score, 6)) for t in kb.search(q, k=5).tools] for q in json.loads(sys.argv[2])]
print(json.dumps({"results": out, "history": kb.history_size,
                  "loaded": sorted(m for m in ("chromadb", "bm25s", "scipy") if m in sys.modules)}))
"""


def test_a_saved_knowledge_base_opens_and_searches_without_chromadb(saved_kb: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(saved_kb), json.dumps(QUERIES)],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    child = json.loads(done.stdout.strip().splitlines()[-1])
    assert child["loaded"] == []  # neither ChromaDB nor bm25s (nor scipy through it) was imported
    (saved_kb / SNAPSHOT_FILE).unlink()  # the same directory read through ChromaDB
    through_chroma = _open(saved_kb)
    assert not _from_file(through_chroma)
    assert [[tuple(p) for p in r] for r in child["results"]] == _results(through_chroma)
    assert child["history"] == through_chroma.history_size == 1


def test_the_file_holds_the_same_vectors_documents_and_history_as_chromadb(saved_kb: Path) -> None:
    fast = _open(saved_kb)
    assert _from_file(fast)
    (saved_kb / SNAPSHOT_FILE).unlink()
    slow = _open(saved_kb)
    assert not _from_file(slow)
    a, b = fast._writer.snapshot, slow._writer.snapshot
    assert [d.model_dump() for d in a.docs] == [d.model_dump() for d in b.docs]
    for f in a.vectors:
        assert np.array_equal(a.vectors[f], b.vectors[f]) and np.array_equal(a.rows[f], b.rows[f])
    assert fast._memory.history.bundles == slow._memory.history.bundles
    assert np.array_equal(fast._memory.history.vectors, slow._memory.history.vectors)
    assert fast._writer.generation == slow._writer.generation is not None


@pytest.mark.parametrize("damage", ["missing", "garbage", "truncated", "other-layout"])
def test_a_missing_or_damaged_file_falls_back_to_chromadb_and_is_rewritten(saved_kb: Path, damage: str) -> None:
    file = saved_kb / SNAPSHOT_FILE
    expected = _results(_open(saved_kb))
    if damage == "missing":
        file.unlink()
    elif damage == "garbage":
        file.write_bytes(b"not an npz file at all")
    elif damage == "truncated":
        file.write_bytes(file.read_bytes()[: file.stat().st_size // 2])
    else:  # a valid .npz of another (future) layout
        meta = np.frombuffer(json.dumps({"format": 999}).encode(), dtype=np.uint8)
        with open(file, "wb") as fh:
            np.savez(fh, meta=meta)
    kb = _open(saved_kb)
    assert not _from_file(kb) and _results(kb) == expected
    again = _open(saved_kb)
    assert _from_file(again) and _results(again) == expected


def test_a_write_without_save_is_never_read_from_the_stale_file(saved_kb: Path) -> None:
    writer = _open(saved_kb)
    writer.add([tool(1, 0, 1)])  # another process's write: ChromaDB changes, the file does not
    assert _dirty(saved_kb)
    reader = _open(saved_kb)
    assert not _from_file(reader) and "b1_t0" in reader
    # no write is running: the first open that read ChromaDB saved what it read and cleared the mark
    assert not _dirty(saved_kb)
    again = _open(saved_kb)
    assert _from_file(again) and "b1_t0" in again and _results(again) == _results(reader)
    writer.add([tool(2, 0, 1)])  # the writer goes on: marked again, the repaired file not trusted
    assert _dirty(saved_kb) and "b2_t0" in _open(saved_kb)
    writer.save()
    assert not _dirty(saved_kb)
    fresh = _open(saved_kb)
    assert _from_file(fresh) and "b1_t0" in fresh and "b2_t0" in fresh and len(fresh) == 22


def test_no_open_repairs_a_dirty_knowledge_base_while_a_write_is_running(saved_kb: Path) -> None:
    from toolret.index import snapshot_file

    writer = _open(saved_kb)
    writer.add([tool(1, 0, 1)])
    with snapshot_file.writing(saved_kb):  # another write in progress (its lock, as LocalStore holds it)
        assert not _from_file(_open(saved_kb)) and _dirty(saved_kb)
        assert not _from_file(_open(saved_kb))  # still dirty: nothing was rewritten under a running write
    assert not _from_file(_open(saved_kb)) and not _dirty(saved_kb)  # the write is over: repaired
    assert _from_file(_open(saved_kb))


def test_an_open_that_reads_a_write_made_meanwhile_does_not_repair(saved_kb: Path, monkeypatch) -> None:
    from toolret.index import persistence

    writer = _open(saved_kb)
    writer.add([tool(1, 0, 1)])
    opened = persistence.opened
    # a write lands between this process's read of ChromaDB and the end of its open
    monkeypatch.setattr(persistence, "opened", lambda w: (writer.add([tool(2, 0, 1)]), opened(w))[1])
    reader = ToolKnowledgeBase.load(saved_kb, embedder=embedder())
    monkeypatch.undo()
    assert "b2_t0" not in reader and _dirty(saved_kb)  # what it read is stale: it must not become the file
    assert "b2_t0" in _open(saved_kb)


def test_a_crash_between_the_chromadb_write_and_the_file_is_detected(saved_kb: Path) -> None:
    kb = _open(saved_kb)
    changed = kb.get("b0_t1").model_copy(update={"description": "changed"})
    kb._writer.store.upsert([changed], kb._writer.embed([changed]))
    # the process dies here: no save(), no change marker
    assert _dirty(saved_kb)
    manifest = json.loads((saved_kb / MANIFEST).read_text())
    (saved_kb / MANIFEST).write_text(json.dumps({**manifest, "dirty": False}))  # even with the mark lost...
    reopened = _open(saved_kb)
    assert not _from_file(reopened)  # ...the stamp of chroma.sqlite3 moved
    assert reopened.get("b0_t1").description == "changed"


def test_a_write_by_another_program_moves_the_stamp(saved_kb: Path) -> None:
    import chromadb

    before = store_stamp(saved_kb)
    _forget_clients()
    client = chromadb.PersistentClient(path=str(saved_kb))
    col = client.get_collection("toolret_meta", embedding_function=None)
    col.upsert(ids=["note"], embeddings=[[1.0]], documents=["x"])
    assert store_stamp(saved_kb) != before
    assert not _from_file(_open(saved_kb))


def test_writes_refresh_and_save_after_a_fast_open(saved_kb: Path) -> None:
    reader = _open(saved_kb)
    assert _from_file(reader) and not reader._writer.store.is_open
    other = ToolKnowledgeBase(saved_kb, embedder=embedder())
    other.add([tool(2, 0, 1)])
    report = reader.refresh()  # opens ChromaDB now and reads the other writer's change
    assert reader._writer.store.is_open and report.added == ["b2_t0"] and "b2_t0" in reader
    reader.add([tool(3, 0, 1)])
    reader.record("topic3 please", ["b3_t0"])
    reader.save()
    fresh = _open(saved_kb)
    assert _from_file(fresh) and {"b2_t0", "b3_t0"} <= set(fresh.ids) and fresh.history_size == 2
    assert fresh.search("b3_t0", k=1).ids == ["b3_t0"]  # the reopened base searches what was added


def test_another_embedder_is_still_refused(saved_kb: Path) -> None:
    from toolret import ModelMismatchError
    from toolret.index.embedding import CallableEmbedder

    _forget_clients()
    with pytest.raises(ModelMismatchError, match="hash-embed"):
        ToolKnowledgeBase.load(saved_kb, embedder=CallableEmbedder(lambda t: [[1.0, 0.0]] * len(t), name="other"))


def test_an_unreadable_file_is_reported_without_numpys_advice_to_unpickle(
    saved_kb: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (saved_kb / SNAPSHOT_FILE).write_bytes(b"not an npz file at all")
    with caplog.at_level("WARNING", logger="toolret"):
        kb = _open(saved_kb)
    assert len(kb) == 20
    text = " ".join(r.getMessage() for r in caplog.records if r.name == "toolret")
    assert SNAPSHOT_FILE in text and "rebuilt" in text
    assert "pickle" not in text.lower()
