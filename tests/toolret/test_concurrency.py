"""Concurrency: many threads and coroutines searching one knowledge base get exactly the serial
results, and a ``sync`` running meanwhile is never seen half done.

The registry is a real benchmark (restbench_tmdb: 54 TMDB API operations, 50 of its queries),
embedded with the real packaged model. Searches at volume use :class:`MemoEmbedder`, the real
model behind a thread-safe memo (an identical query gets the identical vector, so the 8,000
searches measure the engine's shared state, not 8,000 encoder calls); one test runs threads
through the bare model too.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from toolret import ToolKnowledgeBase
from toolret.sources.ingest import load_jsonl

THREADS = 8
PER_THREAD = 1_000
PRESETS = ("fast", "balanced")


class MemoEmbedder:
    """The real embedder with a memo of the texts it has embedded (thread-safe)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name = inner, inner.name
        self.texts_embedded = 0
        self._memo: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            vectors = self.inner.embed(missing)
            with self._lock:
                self._memo.update(zip(missing, vectors))
        return np.stack([self._memo[t] for t in texts]) if texts else self.inner.embed([])


def _queries(root: Path, dataset: str, n: int = 50) -> list[str]:
    lines = (root / dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines[:n]]


@pytest.fixture(scope="module")
def tmdb(benchmarks: Path, embedder) -> tuple[ToolKnowledgeBase, list[str]]:
    kb = ToolKnowledgeBase(embedder=MemoEmbedder(embedder))
    kb.add(load_jsonl(benchmarks / "restbench_tmdb" / "tools.jsonl"))
    return kb, _queries(benchmarks, "restbench_tmdb")


def _key(result: Any) -> tuple[tuple[str, float], ...]:
    return tuple((t.id, t.score) for t in result.tools)


def _expected(kb: ToolKnowledgeBase, queries: list[str]) -> dict[tuple[str, str], tuple]:
    return {(q, p): _key(kb.search(q, k=5, config=p)) for q in queries for p in PRESETS}


@pytest.mark.slow
def test_8_threads_x_1000_searches_equal_the_serial_results(tmdb) -> None:
    kb, queries = tmdb
    expected = _expected(kb, queries)
    jobs = list(expected)

    def worker(seed: int) -> int:
        rng = random.Random(seed)
        wrong = 0
        for _ in range(PER_THREAD):
            query, preset = rng.choice(jobs)
            wrong += _key(kb.search(query, k=5, config=preset)) != expected[(query, preset)]
        return wrong

    with ThreadPoolExecutor(THREADS) as pool:
        mismatches = list(pool.map(worker, range(THREADS)))
    assert mismatches == [0] * THREADS


@pytest.mark.slow
async def test_8000_concurrent_async_searches_equal_the_serial_results(tmdb) -> None:
    kb, queries = tmdb
    expected = _expected(kb, queries)
    jobs = [random.Random(i).choice(list(expected)) for i in range(THREADS * PER_THREAD)]
    results = await asyncio.gather(*(kb.asearch(q, k=5, config=p) for q, p in jobs))
    assert sum(_key(r) != expected[job] for r, job in zip(results, jobs)) == 0


def test_threads_through_the_bare_model_equal_the_serial_results(tmdb, embedder) -> None:
    kb, queries = tmdb
    queries = queries[:16]
    expected = {q: [t.id for t in kb.search(q, k=5).tools] for q in queries}
    memo, kb.embedder = kb.embedder, embedder  # the same model without the memo: every search encodes
    try:
        with ThreadPoolExecutor(THREADS) as pool:
            got = list(pool.map(lambda q: [t.id for t in kb.search(q, k=5).tools], queries * 4))
    finally:
        kb.embedder = memo
    assert got == [expected[q] for q in queries * 4]


@pytest.mark.slow
def test_concurrent_sync_never_exposes_a_half_updated_registry(benchmarks: Path, embedder) -> None:
    tmdb = load_jsonl(benchmarks / "restbench_tmdb" / "tools.jsonl")
    spotify = load_jsonl(benchmarks / "restbench_spotify" / "tools.jsonl")
    tmdb_v2 = [d.model_copy(update={"description": d.description + " (v2)"}) for d in tmdb]
    registries = {"tmdb": tmdb, "spotify": spotify, "tmdb_v2": tmdb_v2}

    def registry_of(docs: Sequence[Any]) -> set[str]:
        names = set()
        for doc in docs:
            if doc.id in {d.id for d in spotify}:
                names.add("spotify")
            else:
                names.add("tmdb_v2" if doc.description.endswith("(v2)") else "tmdb")
        return names

    kb = ToolKnowledgeBase(embedder=MemoEmbedder(embedder))
    kb.sync(tmdb)
    ids_of = {name: {d.id for d in docs} for name, docs in registries.items()}
    stop = threading.Event()
    seen: list[str] = []
    problems: list[str] = []

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        queries = ["top rated movies", "add a track to my playlist", "search for a person", "album tracks"]
        while not stop.is_set():
            state = kb.begin_search(rng.choice(queries), k=5).state
            names = registry_of(state.snap.docs)
            if len(names) != 1:
                problems.append(f"snapshot mixes {names}")
                continue
            name = names.pop()
            result = kb.search(rng.choice(queries), k=5)
            if not (set(result.ids) <= ids_of["tmdb"] or set(result.ids) <= ids_of["spotify"]):
                problems.append(f"result mixes registries: {result.ids}")
            seen.append(name)
            stop.wait(0.002)  # let the writer run: three spinning readers would starve it of the GIL

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    order = ["spotify", "tmdb_v2", "tmdb"] * 2
    try:
        for name in order:
            kb.sync(registries[name])
            assert registry_of(kb.docs()) == {name}
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not problems, problems[:5]
    assert len(set(seen)) >= 2, "the readers searched while the registry changed"
