"""The index writer: one change-set path for add, remove and sync; only changed tools are embedded."""

from __future__ import annotations

import threading

import pytest

from toolret import KnowledgeBaseError, RetrievalConfig, ToolDoc, ToolNotFoundError
from toolret.index.store import ChromaStore
from toolret.index.writer import IndexWriter


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, real):
        self.real = real
        self.name = real.name
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return self.real.embed(texts)


def doc(name: str, description: str) -> ToolDoc:
    return ToolDoc(name=name, description=description)


@pytest.fixture()
def writer(embedder):
    store = ChromaStore(path=None, client=None, name="writer_test")
    counting = CountingEmbedder(embedder)
    store.open(counting.name)
    out = IndexWriter(store, counting, RetrievalConfig(max_tools=3), offline_expansion=False)
    yield out
    store.drop()


def test_add_embeds_only_new_or_changed_tools_and_marks_the_store(writer):
    writer.add([doc("a", "alpha tool"), doc("b", "beta tool")])
    first = writer.embedder.texts
    marker = writer.store.generation()
    writer.add([doc("a", "alpha tool")])  # unchanged: nothing embedded, nothing written
    assert writer.embedder.texts == first and writer.store.generation() == marker
    with pytest.warns(UserWarning, match="replaced 1 existing tool"):
        writer.add([doc("a", "alpha tool, now with more words")])
    assert writer.embedder.texts > first and writer.store.generation() != marker
    assert [d.id for d in writer.snapshot.docs] == ["a", "b"]


def test_sync_reports_by_difference_and_forgets_live_objects_of_removed_tools(writer):
    def live_a() -> None:
        """Alpha tool."""

    writer.add([live_a, doc("b", "beta tool")])
    assert writer.live.get("live_a") is live_a
    report = writer.sync([doc("b", "beta tool, changed"), doc("c", "gamma tool")])
    assert (report.added, report.updated, report.removed, report.unchanged) == (["c"], ["b"], ["live_a"], 0)
    assert "live_a" not in writer.live and [d.id for d in writer.snapshot.docs] == ["b", "c"]


def test_a_refused_change_leaves_the_registry_as_it_was(writer):
    writer.add([doc("a", "alpha"), doc("b", "beta")])
    before = writer.snapshot
    with pytest.raises(KnowledgeBaseError, match="max_tools=3"):
        writer.add([doc("c", "gamma"), doc("d", "delta")])
    with pytest.raises(ToolNotFoundError, match="'zzz'"):
        writer.remove(["a", "zzz"])
    assert writer.snapshot is before


def test_readers_see_the_old_or_the_new_snapshot_never_a_mix(writer):
    writer.add([doc("a", "alpha"), doc("b", "beta")])
    seen: list[tuple[str, ...]] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.append(tuple(d.id for d in writer.snapshot.docs))

    reader = threading.Thread(target=read)
    reader.start()
    for _ in range(3):
        writer.sync([doc("c", "gamma")])
        writer.sync([doc("a", "alpha"), doc("b", "beta")])
    stop.set()
    reader.join()
    assert set(seen) <= {("a", "b"), ("c",)}


def test_progress_shows_on_a_terminal_for_jobs_over_one_batch_only(monkeypatch):
    import io
    import sys

    from toolret.index.writer import EMBED_BATCH, _progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a pipe or a log file: no bar
    assert type(_progress(10 * EMBED_BATCH, "embedding", True)).__name__ == "_NullBar"
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert type(_progress(EMBED_BATCH, "embedding", True)).__name__ == "_NullBar"  # one batch: instant
    assert type(_progress(10 * EMBED_BATCH, "embedding", False)).__name__ == "_NullBar"
    bar = _progress(10 * EMBED_BATCH, "embedding tool fields", True)
    bar.update(EMBED_BATCH)
    bar.close()
    assert "embedding tool fields" in terminal.getvalue()


def test_each_distinct_text_is_embedded_once_and_shared_by_its_fields(writer):
    writer.config = RetrievalConfig(max_tools=10)
    docs = [
        ToolDoc(id="v1/get_weather", name="get_weather", description="Weather for a city."),  # doc variants
        ToolDoc(id="v2/get_weather", name="get_weather", description="Weather for a city."),
        ToolDoc(name="forecast", description="Five days ahead.", response="Five days ahead."),
    ]
    fields = writer.embed(docs)
    texts = {t for d in docs for f in ("description", "parameters", "response", "examples") if (t := d.field_text(f))}
    assert writer.embedder.texts == len(texts) == 3 < sum(len(v) for v in fields) == 4
    assert (fields[0]["description"] == fields[1]["description"]).all()
    alone = writer.embedder.real.embed([docs[2].field_text("response")])[0]
    assert float(fields[2]["response"] @ alone) > 0.9999
