"""Counting the tokens of a tool definition: an LLM's tokenizer where one is installed, a stated estimate where not.

A token budget (``kb.search(..., token_budget=)``, :mod:`toolret.search.token_budget`) is about
the model's context, so what counts is an LLM's tokenizer. Chosen once per process:

1. ``tiktoken``'s ``o200k_base`` (else ``cl100k_base``) when tiktoken is installed and the
   encoding's file is already on disk, checked against its published SHA-256: in tiktoken's
   own cache (``TIKTOKEN_CACHE_DIR``, ``DATA_GYM_CACHE_DIR``, ``<tmp>/data-gym-cache``), or the
   copy llama-index-core ships (which also installs tiktoken). Counting never downloads.
2. Else an estimate: 4 ASCII characters a token, every other character a token. On the compact
   JSON definitions of the five dev registries it gives 1.02-1.20 times ``o200k_base`` on average
   (0.86-1.38 for 90% of single definitions; ``o200k_base`` and ``cl100k_base`` agree within 2%).

The tokenizer toolret always has offline, all-MiniLM-L6-v2's WordPiece, is not used: on the same
definitions it counts 1.41-1.67 times ``o200k_base`` (every JSON brace, quote and colon is a
token), so a budget would hold about 60% of what it says. The counter's name is in every trace
step that counts.

Example:
    >>> token_counter().count('{"name":"get_weather"}') > 0
    True
    >>> ESTIMATE.count("x" * 10), ESTIMATE.count("日本語"), ESTIMATE.name
    (3, 3, 'estimate: 4 ASCII characters a token')
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

__all__ = ["ESTIMATE", "TokenCounter", "token_counter"]

logger = logging.getLogger("toolret")

#: Each encoding: where tiktoken fetches it (its cache file is named by the SHA-1 of this
#: address) and the SHA-256 tiktoken expects of it.
_TIKTOKEN_FILES = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}
_ENV_LOCK = threading.Lock()


@dataclass(frozen=True)
class TokenCounter:
    """A named ``text -> tokens`` function; ``estimated`` when it is no tokenizer."""

    name: str
    count: Callable[[str], int]
    estimated: bool = False


def _estimate(text: str) -> int:
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    return -(-ascii_chars // 4) + len(text) - ascii_chars


ESTIMATE = TokenCounter("estimate: 4 ASCII characters a token", _estimate, estimated=True)


def _tiktoken_dirs() -> list[Path]:
    """Where an encoding file may already be: tiktoken's cache (by tiktoken's rule), then llama-index-core's copy."""
    own = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    dirs = [Path(tempfile.gettempdir(), "data-gym-cache") if own is None else Path(own)] if own != "" else []
    try:
        spec = importlib.util.find_spec("llama_index.core")  # located, not imported
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        dirs.append(Path(spec.origin).parent / "_static" / "tiktoken_cache")
    return dirs


def _cached_file(url: str, sha256: str) -> Path | None:
    name = hashlib.sha1(url.encode()).hexdigest()
    for folder in _tiktoken_dirs():
        path = folder / name
        try:
            if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256:
                return path
        except OSError:
            continue
    return None


def _tiktoken_count(encoding: Any, text: str) -> int:
    return len(encoding.encode(text, disallowed_special=()))  # a tool's text is never a special token


def _tiktoken() -> TokenCounter | None:
    try:
        import tiktoken
    except ImportError:
        return None
    for name, (url, sha256) in _TIKTOKEN_FILES.items():
        path = _cached_file(url, sha256)
        if path is None:
            continue
        with _ENV_LOCK:  # tiktoken reads its cache folder from the environment (as llama-index does it)
            before = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = str(path.parent)
            try:
                encoding = tiktoken.get_encoding(name)
            except Exception as exc:  # noqa: BLE001 - an unreadable file only means the next counter
                logger.debug("tiktoken %s did not load (%s); trying the next token counter", name, exc)
                continue
            finally:
                if before is None:
                    os.environ.pop("TIKTOKEN_CACHE_DIR", None)
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = before
        return TokenCounter(f"tiktoken {name}", partial(_tiktoken_count, encoding))
    return None


@lru_cache(maxsize=1)
def token_counter() -> TokenCounter:
    """The counter of this process (see the module doc for the order and why)."""
    return _tiktoken() or ESTIMATE
