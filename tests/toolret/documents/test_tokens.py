"""The token counter of a token budget: an LLM's tokenizer where one loads offline, a stated estimate where not."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from toolret.documents import tokens
from toolret.documents.tokens import ESTIMATE, token_counter


@pytest.fixture(autouse=True)
def _fresh_counter():
    """The counter is chosen once per process: each test chooses again, and leaves no choice behind."""
    token_counter.cache_clear()
    yield
    token_counter.cache_clear()


def _cache_name(encoding: str) -> str:
    return hashlib.sha1(tokens._TIKTOKEN_FILES[encoding][0].encode()).hexdigest()


def _packaged_cache(encoding: str) -> Path:
    """llama-index-core's bundled tiktoken folder (the dev extras install it, and tiktoken with it):
    a missing file is a broken test environment, not a reason to skip."""
    packaged = [d for d in tokens._tiktoken_dirs() if d.name == "tiktoken_cache"]
    assert packaged and (packaged[0] / _cache_name(encoding)).is_file(), (
        f"llama-index-core's tiktoken file for {encoding} is missing: `make test` installs the dev extras"
    )
    return packaged[0]


def _no_download(monkeypatch):
    import tiktoken

    def download(name):
        raise AssertionError(f"tiktoken asked to fetch {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", download)


def test_the_copy_llama_index_ships_is_read_without_a_download_and_the_environment_is_left_as_it_was(monkeypatch):
    _packaged_cache("o200k_base")
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    counter = token_counter()
    assert counter.name == "tiktoken o200k_base" and not counter.estimated
    assert counter.count("hello world") == 2 and counter.count("<|endoftext|>") > 1  # never a special token
    assert "TIKTOKEN_CACHE_DIR" not in os.environ


def test_tiktokens_own_cache_is_read_by_tiktokens_rule(monkeypatch, tmp_path):
    packaged = _packaged_cache("cl100k_base")
    shutil.copy(packaged / _cache_name("cl100k_base"), tmp_path / _cache_name("cl100k_base"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert tokens._tiktoken_dirs()[0] == tmp_path
    monkeypatch.setattr(tokens, "_tiktoken_dirs", lambda: [tmp_path])  # only that cache: cl100k_base
    assert token_counter().name == "tiktoken cl100k_base"
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path)


def test_a_missing_or_damaged_encoding_file_means_the_estimate_never_a_download(monkeypatch, tmp_path):
    (tmp_path / _cache_name("o200k_base")).write_bytes(b"not the encoding")
    monkeypatch.setattr(tokens, "_tiktoken_dirs", lambda: [tmp_path])
    _no_download(monkeypatch)
    assert token_counter() is ESTIMATE


def test_without_tiktoken_the_count_is_a_stated_estimate(monkeypatch):
    monkeypatch.setattr(tokens, "_tiktoken", lambda: None)
    counter = token_counter()
    assert counter is ESTIMATE and counter.estimated and "estimate" in counter.name
    assert counter.count("x" * 9) == 3 and counter.count("天気") == 2 and counter.count("") == 0
