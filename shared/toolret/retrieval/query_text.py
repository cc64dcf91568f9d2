"""The text a search runs on: one rule for long and noisy queries, for every entry point.

A request that reaches a tool selector is not always a sentence. An agent may paste a whole
document, a stack trace, a base64 attachment or a hex dump into it (one real MCP request is over
18,000 characters). Refusing it would break the agent; embedding it whole would drown the few
words that say what the user wants. So the engine searches the *informative part*:

1. blobs are dropped: base64 / hex / URL-safe runs of :data:`BLOB_MIN_CHARS` or more characters
   without a space (no natural language has words that long), ``data:`` URIs, and long runs of
   punctuation (ASCII art, separators);
2. whitespace is collapsed;
3. a text still over ``max_chars`` keeps its head (cut at a word boundary when there is one) and,
   when it fits, its last sentence — where a pasted document is usually followed by the question.

Nothing is translated or filtered by language: CJK text without spaces is kept (it is not in the
blob alphabet) and is only ever cut by length. Whatever was changed is said in :attr:`QueryText.note`,
which the search puts in its trace (stage ``query_text``), so a shortened query is never silent.

Example:
    >>> q = informative_query("what is in this file? " + "QUJD" * 200, max_chars=8_000)
    >>> q.text, q.shortened
    ('what is in this file?', True)
    >>> q.note
    'query shortened from 822 to 21 characters: dropped 1 blob(s) (base64/hex/punctuation runs, 800 characters)'
    >>> informative_query("東京の天気は？", max_chars=8_000).text
    '東京の天気は？'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolret.documents.guards import clean_query
from toolret.results import TraceStep

__all__ = ["BLOB_MIN_CHARS", "QueryText", "informative_query"]

#: Shortest run without a space that counts as a blob (base64, hex, tokens, URL-safe ids).
BLOB_MIN_CHARS = 64
#: Share of ``max_chars`` kept for the head when a last sentence is appended.
_HEAD_SHARE = 0.8

_BLOB = re.compile(
    r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=_-]*"  # data: URIs, whatever their length
    rf"|[A-Za-z0-9+/=_-]{{{BLOB_MIN_CHARS},}}"  # base64, hex and URL-safe runs
    r"|[^\w\s]{16,}"  # punctuation runs: separators, ASCII art
)
_SPACE = re.compile(r"\s+")
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True)
class QueryText:
    """The text a search runs on, how long the request was, and what was changed (``note``)."""

    text: str
    original_chars: int
    note: str = ""

    @property
    def shortened(self) -> bool:
        return bool(self.note)

    def trace(self) -> list[TraceStep]:
        """The trace a search starts with: one ``query_text`` step when the query was shortened."""
        return [TraceStep(stage="query_text", path="offline", ms=0.0, note=self.note)] if self.note else []


def _cut_at_word(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at the last space when one is near."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return head[:space].rstrip() if space >= limit // 2 else head.rstrip()


def _last_sentence(text: str) -> str:
    parts = [p.strip() for p in _SENTENCE_END.split(text) if p.strip()]
    return parts[-1] if len(parts) > 1 else ""


def _is_blob(run: str) -> bool:
    # A long identifier (``get_weather_for_a_city_...``) is words joined by ``_`` or ``-`` and
    # has no digit; base64 and hex of this length almost always have one, and never read as
    # words. Punctuation runs, data: URIs and runs of 256+ characters are blobs whatever they hold.
    if not run[0].isalnum() or run.startswith("data:") or len(run) >= 256:
        return True
    return any(c.isdigit() for c in run) or not ("_" in run or "-" in run)


def informative_query(query: str, max_chars: int) -> QueryText:
    """The informative part of ``query`` in at most ``max_chars`` characters (see the module doc).

    Never raises on length or language; a query that was only a blob keeps its head instead,
    so a search always has words to run on. A query without blobs and within the limit is
    returned as it is.
    """
    original = clean_query(query).strip()
    blobs = [m.group() for m in _BLOB.finditer(original) if _is_blob(m.group())]
    if not blobs and len(original) <= max_chars:
        return QueryText(text=original, original_chars=len(original))
    notes: list[str] = []
    text = original
    if blobs:
        text = _BLOB.sub(lambda m: " " if _is_blob(m.group()) else m.group(), original)
        notes.append(f"dropped {len(blobs)} blob(s) (base64/hex/punctuation runs, {sum(map(len, blobs))} characters)")
    text = _SPACE.sub(" ", text).strip()
    if not text:  # nothing but a blob: search its head rather than nothing
        text = _cut_at_word(_SPACE.sub(" ", original), min(max_chars, 256))
        notes = ["the query is only a blob; kept its first characters"]
    if len(text) > max_chars:  # a pasted log or report repeats itself: each sentence once
        sentences = [s for s in _SENTENCES.split(text) if s]
        unique = list(dict.fromkeys(sentences))
        if len(unique) < len(sentences):
            text = " ".join(unique)
            notes.append(f"dropped {len(sentences) - len(unique)} repeated sentence(s)")
    if len(text) > max_chars:
        last = _last_sentence(text)
        with_last = bool(last) and len(last) < max_chars * (1 - _HEAD_SHARE)
        head = _cut_at_word(text, int(max_chars * _HEAD_SHARE) - 1 if with_last else max_chars)
        text = f"{head} {last}" if with_last else head
        notes.append(
            f"kept the first {len(head)} characters{' and the last sentence' if with_last else ''} "
            f"(RetrievalConfig.max_query_chars={max_chars})"
        )
    return QueryText(
        text=text,
        original_chars=len(original),
        note=f"query shortened from {len(original)} to {len(text)} characters: " + "; ".join(notes),
    )
