"""One knowledge base shared by several processes: ChromaDB client mode, refresh() semantics.

In-process tests share one ChromaDB client between two knowledge-base objects (a writer
and a reader); the server tests start a real ``chroma run`` on 127.0.0.1 and real reader
processes (tests/toolret/fixtures/kb_reader.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings

from toolret import KnowledgeBaseError, ToolKnowledgeBase
from toolret.eval import load_dataset
from toolret.index.store import http_client

READER = Path(__file__).parent / "fixtures" / "kb_reader.py"
CHROMA = Path(sys.executable).parent / "chroma"


@pytest.fixture(scope="module")
def tmdb(benchmarks):
    return load_dataset(benchmarks / "restbench_tmdb").tool_docs()


@pytest.fixture(scope="module")
def tmdb_small(tmdb):
    """20 TMDB tools, among them every tool :func:`_changed` touches."""
    touched = {"GET /tv/popular", "GET /movie/top_rated", "GET /person/popular", "GET /movie/{movie_id}/keywords"}
    return [d for d in tmdb if d.id in touched] + [d for d in tmdb if d.id not in touched][:16]


def _changed(docs):
    """The registry after a writer's sync: 3 tools gone, 1 reworded, 1 new."""
    kept = [d for d in docs if d.id not in {"GET /tv/popular", "GET /movie/top_rated", "GET /person/popular"}]
    reworded = [
        d.model_copy(update={"description": d.description + " Also lists alternative titles."})
        if d.id == "GET /movie/{movie_id}/keywords"
        else d
        for d in kept
    ]
    from toolret import ToolDoc, ToolParam

    new = ToolDoc(
        id="POST /movie/{movie_id}/rating",
        name="POST /movie/{movie_id}/rating",
        description="Rate a movie\nSubmit your star rating for a movie.",
        parameters=[
            ToolParam(name="movie_id", type="integer", required=True),
            ToolParam(name="value", type="number", required=True),
        ],
    )
    return [*reworded, new]


# ------------------------------------------------------------------ in process, shared client
@pytest.mark.slow
def test_reader_sees_a_writers_sync_after_refresh_and_not_before(tmdb_small, embedder):
    tmdb = tmdb_small
    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False, allow_reset=False))
    name = f"shared_{uuid.uuid4().hex[:8]}"
    writer = ToolKnowledgeBase(client=client, collection=name, embedder=embedder)
    writer.add(tmdb)
    reader = ToolKnowledgeBase(client=client, collection=name, embedder=embedder)
    assert len(reader) == len(tmdb)
    assert reader.refresh().added == []  # nothing changed: the marker matches

    report = writer.sync(_changed(tmdb))
    assert report.removed and report.added and report.updated
    assert "GET /tv/popular" in reader  # not automatic: the reader's snapshot is unchanged
    before = embedder.texts_embedded
    seen = reader.refresh()
    assert embedder.texts_embedded == before  # refresh reads vectors, it never re-embeds
    assert sorted(seen.removed) == sorted(report.removed)
    assert seen.added == ["POST /movie/{movie_id}/rating"]
    assert seen.updated == ["GET /movie/{movie_id}/keywords"]
    assert "GET /tv/popular" not in reader
    assert reader.get("GET /movie/{movie_id}/keywords").description.endswith("alternative titles.")
    top = [t.id for t in reader.search("give my star rating to a movie", k=3).tools]
    assert "POST /movie/{movie_id}/rating" in top
    assert reader.ids == writer.ids


def test_refresh_never_takes_half_a_write(tmdb, embedder):
    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False, allow_reset=False))
    name = f"midwrite_{uuid.uuid4().hex[:8]}"
    writer = ToolKnowledgeBase(client=client, collection=name, embedder=embedder)
    writer.add(tmdb[:10])
    reader = ToolKnowledgeBase(client=client, collection=name, embedder=embedder)
    store = writer._writer.store
    old = tmdb[0]
    new = old.model_copy(update={"description": "Reworded while a reader looks."})
    vectors = writer._writer.embed([new])

    # 1. A writer stopped after its field records, before its tool record: the reader keeps
    #    the old version, since the tool record (the commit point) still names it.
    store._fields.upsert(
        ids=[f"{old.id}::field::description"],
        embeddings=[vectors[0]["description"].tolist()],
        documents=[new.field_text("description")],
        metadatas=[{"tool_id": old.id, "field": "description", "hash": new.content_hash}],
    )
    store.bump_generation()
    assert reader.refresh().updated == []
    assert reader.get(old.id).description == old.description
    store.upsert([new], vectors)  # the write completes
    store.bump_generation()
    assert reader.refresh().updated == [old.id]
    assert reader.get(old.id).description == "Reworded while a reader looks."

    # 2. A tool record whose fields do not match it (a later write's fields landed between
    #    the reader's two reads): skipped, and the change marker is not trusted next time.
    newer = new.model_copy(update={"description": "Reworded twice."})
    store._tools.upsert(
        ids=[old.id],
        embeddings=[vectors[0]["description"].tolist()],
        documents=[newer.model_dump_json()],
        metadatas=[{"name": newer.name, "hash": newer.content_hash}],
    )
    store.bump_generation()
    assert reader.refresh().updated == []
    assert reader.get(old.id).description == "Reworded while a reader looks."
    assert reader._writer.generation is None
    store.upsert([newer], writer._writer.embed([newer]))  # fields catch up; no new marker needed
    assert reader.refresh().updated == [old.id]
    assert reader.get(old.id).description == "Reworded twice."


def test_sync_with_a_prefix_leaves_other_sources_alone(tmdb, embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    try:
        a = [d.model_copy(update={"id": f"a/{d.id}"}) for d in tmdb[:4]]
        b = [d.model_copy(update={"id": f"b/{d.id}"}) for d in tmdb[4:8]]
        kb.add(a + b)
        report = kb.sync(b[:2], prefix="b/")
        assert sorted(report.removed) == sorted(d.id for d in b[2:])
        assert sorted(kb.ids) == sorted(d.id for d in a + b[:2])
        with pytest.raises(Exception, match="outside that prefix"):
            kb.sync(a, prefix="b/")
    finally:
        kb.close()


def test_connecting_to_no_server_names_the_address():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: nothing answers there
        with pytest.raises(KnowledgeBaseError, match=f"127.0.0.1:{port}"):
            http_client("127.0.0.1", port)


# ------------------------------------------------------------------ a real chroma server


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory, free_port):
    """`chroma run` on 127.0.0.1 and a free port, stopped (by its pid) after the module."""
    port = free_port()
    folder = tmp_path_factory.mktemp("chroma")
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                http_client("127.0.0.1", port)
                break
            except KnowledgeBaseError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"chroma run did not start: {(folder / 'server.log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.3)
        yield "127.0.0.1", port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


class Reader:
    """A reader process speaking JSON lines (see fixtures/kb_reader.py)."""

    def __init__(self, host: str, port: int, collection: str) -> None:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        self.proc = subprocess.Popen(
            [sys.executable, str(READER), host, str(port), collection],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, f"reader exited with {self.proc.poll()}"
        return json.loads(line)

    def send(self, **cmd) -> None:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def ask(self, **cmd) -> dict:
        self.send(**cmd)
        return self.read()

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.mark.slow
def test_processes_search_one_server_registry_while_one_syncs_it(chroma_server, tmdb, embedder):
    host, port = chroma_server
    collection = f"tmdb_{uuid.uuid4().hex[:8]}"
    writer = ToolKnowledgeBase.connect(host, port, collection=collection, embedder=embedder)
    writer.add(tmdb)
    readers = [Reader(host, port, collection) for _ in range(2)]
    try:
        for reader in readers:
            assert reader.read() == {"ready": True, "size": len(tmdb)}
            # Opening read every vector from the server: only the warm-up query was embedded.
            assert reader.ask(op="stats")["texts_embedded"] == 1
        queries = ["popular tv shows this week", "keywords of a movie", "top rated movies", "who is popular"]
        for reader in readers:  # both processes search while the writer syncs
            reader.send(op="hammer", queries=queries, rounds=4)
        new_registry = _changed(tmdb)
        report = writer.sync(new_registry)
        results = [reader.read() for reader in readers]
        allowed = {d.id for d in tmdb} | {d.id for d in new_registry}
        for result in results:
            assert result["errors"] == []
            assert set(result["seen"]) <= allowed  # never a tool that is in neither registry
        for reader in readers:  # the last refresh may have preceded the write's end
            reader.ask(op="refresh")
            assert reader.ask(op="stats")["size"] == len(new_registry)
            assert reader.ask(op="get", id="GET /tv/popular") == {"missing": True}
            assert reader.ask(op="get", id="GET /movie/{movie_id}/keywords")["description"].endswith("titles.")
            assert "POST /movie/{movie_id}/rating" in reader.ask(op="search", query="rate a movie", k=3)["ids"]
        assert len(report.removed) == 3

        # A later change reaches readers only when they refresh, and costs them no embedding.
        writer.remove(["GET /movie/{movie_id}/keywords"])
        reader = readers[0]
        embedded = reader.ask(op="stats")["texts_embedded"]
        assert reader.ask(op="get", id="GET /movie/{movie_id}/keywords") != {"missing": True}
        assert reader.ask(op="refresh")["removed"] == ["GET /movie/{movie_id}/keywords"]
        assert reader.ask(op="get", id="GET /movie/{movie_id}/keywords") == {"missing": True}
        assert reader.ask(op="stats")["texts_embedded"] == embedded
    finally:
        for reader in readers:
            reader.close()
