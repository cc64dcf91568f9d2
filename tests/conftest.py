"""Shared fixtures: the real packaged embedding model, loaded once per test session."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Rewritten models (toolret.index.onnx_dynamic) go to a folder of this test session, not the user's cache.
os.environ.setdefault("TOOLRET_CACHE_DIR", tempfile.mkdtemp(prefix="toolret-test-cache-"))

#: ../shared/benchmarks beside the repository (read-only team folder).
BENCHMARKS = Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks"


@pytest.fixture(scope="session")
def embedder():
    """The real default embedder (all-MiniLM-L6-v2 from its PyPI package)."""
    from toolret.index.embedding import resolve_embedder

    emb = resolve_embedder(None)
    emb.embed(["warm up"])
    return emb


@pytest.fixture(scope="session")
def make_kb(embedder) -> Iterator[Callable[..., Any]]:
    """``make_kb(tools, path=None, **kwargs)``: a knowledge base over ``tools`` with the real embedder.

    Every knowledge base made is closed at the end of the session (an in-memory one frees its
    ChromaDB collections; a persistent one keeps its files).
    """
    from toolret import ToolKnowledgeBase

    made: list[ToolKnowledgeBase] = []

    def make(tools: Iterable[Any], path: Any = None, **kwargs: Any) -> ToolKnowledgeBase:
        kb = ToolKnowledgeBase(path, embedder=embedder, **kwargs)
        kb.add(tools)
        made.append(kb)
        return kb

    yield make
    for kb in made:
        kb.close()


def require_benchmarks() -> Path:
    """``../shared/benchmarks``, or fail the calling test naming where the folder belongs.

    The dev sets are part of every checkout's setting (the team folder beside the repository, as
    CI lays it out), so a missing folder is an error to fix, never a skip that would pass the
    benchmark tests without running them.
    """
    if not BENCHMARKS.is_dir():
        pytest.fail(f"needs the dev benchmarks at {BENCHMARKS} (../shared beside the repository)")
    return BENCHMARKS


@pytest.fixture(scope="session")
def benchmarks() -> Path:
    """The dev benchmark sets (:func:`require_benchmarks`)."""
    return require_benchmarks()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def free_port() -> Callable[[], int]:
    """A function returning a free TCP port on 127.0.0.1 (for servers a test starts and stops)."""
    return _free_port
