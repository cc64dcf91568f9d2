"""The text a search runs on: one rule for long and noisy queries, for every entry point.

A request that reaches a tool selector is not always a sentence. An agent may paste a whole
document, a log, a stack trace, a base64 attachment or a hex dump into it (one real MCP request
is over 18,000 characters). Refusing it would break the agent; embedding it whole would drown the
few words that say what the user wants. So the engine searches the *informative part*:

1. blobs are dropped: base64 / hex / URL-safe runs of :data:`BLOB_MIN_CHARS` or more characters
   without a space (no natural language has words that long), ``data:`` URIs, and long runs of
   punctuation (ASCII art, separators);
2. log-like lines are dropped when they hold :data:`LOG_MIN_CHARS` or more characters or the text
   is over ``max_chars``: a line that starts with a timestamp, or whose words are 30% or more
   machine tokens (numbers, paths, ``key=value``, dotted names, JSON keys). What the user typed
   around the paste stays wherever it is: prose lines before, between or after, and the plain
   words that open the first line or close the last one (a request typed on a log's line). A
   text that is only a log keeps it (step 4 cuts it);
3. whitespace is collapsed;
4. a text still over ``max_chars`` reads each repeated sentence once, then keeps its head (cut
   at a word boundary when there is one) and, when it fits, its last sentence or line — where a
   pasted document is usually followed by the question.

Nothing is translated or filtered by language: CJK text without spaces is kept (it is not in the
blob alphabet) and is only ever cut by length. Whatever was changed is said in :attr:`QueryText.note`,
which the search puts in its trace (stage ``query_text``), so a shortened query is never silent.

Example:
    >>> q = informative_query("what is in this file? " + "QUJD" * 200, max_chars=8_000)
    >>> q.text, q.shortened
    ('what is in this file?', True)
    >>> q.note
    'query shortened from 822 to 21 characters: dropped 1 blob(s) (base64/hex/punctuation runs, 800 characters)'
    >>> log = "".join(f"2024-11-24T10:00:{i % 60:02d}Z ERROR api timeout after {i} ms\\n" for i in range(40))
    >>> q = informative_query(log + "restart the checkout service in prod", max_chars=8_000)
    >>> q.text, q.note
    ('restart the checkout service in prod', 'query shortened from 2066 to 36 characters: dropped 40 log-like line(s) (1990 characters)')
    >>> informative_query("東京の天気は？", max_chars=8_000).text
    '東京の天気は？'
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from toolret.documents.guards import clean_query
from toolret.results import TraceStep

__all__ = ["BLOB_MIN_CHARS", "LOG_MIN_CHARS", "QueryText", "informative_query"]

#: Shortest run without a space that counts as a blob (base64, hex, tokens, URL-safe ids).
BLOB_MIN_CHARS = 64
#: Characters of log-like lines from which they are dropped even within ``max_chars``: a pasted
#: log this long outweighs a one-line request in every signal (BM25 terms, the 256-token embedding).
LOG_MIN_CHARS = 1_000
#: Share of ``max_chars`` kept for the head when a last sentence is appended.
_HEAD_SHARE = 0.8
#: Share of a line's words that are machine tokens from which the line reads as a log or data.
_LOG_SHARE = 0.3
#: Consecutive plain words that make a line with numbers or names in it a written sentence, not data.
_SENTENCE_WORDS = 6
#: Plain words a request typed on a log's first or last line must have to be kept.
_MIN_REQUEST_WORDS = 3

_BLOB = re.compile(
    r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=_-]*"  # data: URIs, whatever their length
    rf"|[A-Za-z0-9+/=_-]{{{BLOB_MIN_CHARS},}}"  # base64, hex and URL-safe runs
    r"|[^\w\s]{16,}"  # punctuation runs: separators, ASCII art
)
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
#: A log record's time: 10:00:01 (syslog, most loggers) or 2024-11-24T10:00 / 2024-11-24 10:00 (ISO).
_TIMESTAMP = re.compile(r"\b\d{1,2}:\d{2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
#: Punctuation around a word that leaves it a word ("(most", "last):", "«bonjour»").
_EDGE = "\"'`()[]{}<>,.;:!?¿¡«»“”‘’"
#: What never occurs inside a written word: digits, path and assignment characters, and
#: internal dots, colons or brackets (``java.lang.Error``, ``host:port``, ``f(x)``).
_MACHINE_CHAR = re.compile(r"[\d=/\\\[\]{}<>|@#$%^*~_&+.:;,()]")
_JSON_TOKEN = re.compile(r'^"[^"]*"[:,]$')


@dataclass(frozen=True)
class QueryText:
    """The text a search runs on, how long the request was, and what was changed (``note``)."""

    text: str
    original_chars: int
    note: str = ""
    #: Milliseconds finding the informative part took: the ``query_text`` step's own time.
    ms: float = 0.0

    @property
    def shortened(self) -> bool:
        return bool(self.note)

    def trace(self) -> list[TraceStep]:
        """The trace a search starts with: one ``query_text`` step when the query was shortened."""
        return [TraceStep(stage="query_text", path="offline", ms=self.ms, note=self.note)] if self.note else []


def _cut_at_word(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at the last space when one is near."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return head[:space].rstrip() if space >= limit // 2 else head.rstrip()


def _is_blob(run: str) -> bool:
    # A long identifier (``get_weather_for_a_city_...``) is words joined by ``_`` or ``-`` and
    # has no digit; base64 and hex of this length almost always have one, and never read as
    # words. Punctuation runs, data: URIs and runs of 256+ characters are blobs whatever they hold.
    if not run[0].isalnum() or run.startswith("data:") or len(run) >= 256:
        return True
    return any(c.isdigit() for c in run) or not ("_" in run or "-" in run)


def _kind(token: str) -> int:
    """1 for a plain word, -1 for a machine token, 0 for neither: punctuation alone, and
    all-caps words (``ERROR`` in a log line, ``API`` in a request)."""
    if _JSON_TOKEN.match(token):
        return -1
    core = token.strip(_EDGE)
    if not core:
        return 0
    if _MACHINE_CHAR.search(core):
        return -1
    return 0 if core.isupper() and len(core) > 1 else 1


def _is_log_line(line: str) -> bool:
    """A log, trace or data line: it starts with a timestamp; or 30%+ of its words are machine
    tokens and no run of :data:`_SENTENCE_WORDS` plain words (a written sentence) is among them;
    or, shorter than 3 words, it holds no plain word."""
    if _TIMESTAMP.search(line[:40]):
        return True
    kinds = [k for k in map(_kind, line.split()) if k]
    if len(kinds) < 3:  # a short line is data when it holds no word: "{", '"id": 42,', "0/1"
        return all(k < 0 for k in kinds) if kinds else not any(c.isalpha() for c in line)
    if kinds.count(-1) < _LOG_SHARE * len(kinds):
        return False
    run = 0
    for kind in kinds:
        run = run + 1 if kind > 0 else 0
        if run >= _SENTENCE_WORDS:
            return False
    return True


def _plain_run(line: str, *, from_end: bool) -> str:
    """The words that open (or close) ``line`` before its first machine token, when 3 or more
    are plain: a request typed on the same line as a pasted log."""
    tokens = line.split()
    run: list[str] = []
    for token in reversed(tokens) if from_end else tokens:
        if _kind(token) < 0:
            break
        run.append(token)
    if from_end:
        run.reverse()
    return " ".join(run) if sum(_kind(t) > 0 for t in run) >= _MIN_REQUEST_WORDS else ""


def _without_logs(lines: list[str], max_chars: int) -> tuple[list[str], str]:
    """``lines`` without their log-like lines, and the note saying so (step 2 of the module doc)."""
    logs = [_is_log_line(line) for line in lines]
    log_chars = sum(len(line) for line, log in zip(lines, logs) if log)
    if not log_chars or (log_chars < LOG_MIN_CHARS and sum(map(len, lines)) + len(lines) - 1 <= max_chars):
        return lines, ""
    # A log-like line holds a machine token, so its opening and closing runs never overlap.
    opening = _plain_run(lines[0], from_end=False) if logs[0] else ""
    closing = _plain_run(lines[-1], from_end=True) if logs[-1] else ""
    kept = [opening] * bool(opening) + [line for line, log in zip(lines, logs) if not log] + [closing] * bool(closing)
    if not kept:  # only a log: the length rule keeps its head and last line
        return lines, ""
    where = " and ".join(w for w, run in (("start", opening), ("end", closing)) if run)
    return kept, (
        f"dropped {sum(logs)} log-like line(s) ({log_chars} characters)"
        + (f", kept the plain words at its {where}" if where else "")
    )


def informative_query(query: str, max_chars: int) -> QueryText:
    """The informative part of ``query`` in at most ``max_chars`` characters (see the module doc).

    Never raises on length or language; a query that was only a blob keeps its head instead,
    so a search always has words to run on. A query within the limit without blobs or a
    pasted log is returned as it is.
    """
    start = time.perf_counter()
    original = clean_query(query).strip()
    blobs = [m.group() for m in _BLOB.finditer(original) if _is_blob(m.group())]
    if not blobs and len(original) <= min(max_chars, LOG_MIN_CHARS):
        return QueryText(text=original, original_chars=len(original), ms=_ms(start))
    notes: list[str] = []
    text = original
    if blobs:
        text = _BLOB.sub(lambda m: " " if _is_blob(m.group()) else m.group(), original)
        notes.append(f"dropped {len(blobs)} blob(s) (base64/hex/punctuation runs, {sum(map(len, blobs))} characters)")
    lines = [line for line in (_SPACE.sub(" ", raw).strip() for raw in text.splitlines()) if line]
    if not lines:  # nothing but a blob: search its head rather than nothing
        text = _cut_at_word(_SPACE.sub(" ", original), min(max_chars, 256))
        return _shortened(original, text, ["the query is only a blob; kept its first characters"], start)
    lines, log_note = _without_logs(lines, max_chars)
    if log_note:
        notes.append(log_note)
    elif not notes and len(original) <= max_chars:  # no blob, no log, within the limit: as it is
        return QueryText(text=original, original_chars=len(original), ms=_ms(start))
    segments = [part for line in lines for part in _SENTENCE_END.split(line) if part]
    text = " ".join(segments)
    if len(text) > max_chars:  # a pasted document repeats itself: each sentence once
        unique = list(dict.fromkeys(segments))
        if len(unique) < len(segments):
            notes.append(f"dropped {len(segments) - len(unique)} repeated sentence(s)")
            segments, text = unique, " ".join(unique)
    if len(text) > max_chars:
        last = segments[-1] if len(segments) > 1 and any(c.isalpha() for c in segments[-1]) else ""
        with_last = bool(last) and len(last) < max_chars * (1 - _HEAD_SHARE)
        head = _cut_at_word(text, int(max_chars * _HEAD_SHARE) - 1 if with_last else max_chars)
        text = f"{head} {last}" if with_last else head
        notes.append(
            f"kept the first {len(head)} characters{' and the last sentence' if with_last else ''} "
            f"(RetrievalConfig.max_query_chars={max_chars})"
        )
    return _shortened(original, text, notes, start)


def _shortened(original: str, text: str, notes: list[str], start: float) -> QueryText:
    note = f"query shortened from {len(original)} to {len(text)} characters: " + "; ".join(notes)
    return QueryText(text=text, original_chars=len(original), note=note, ms=_ms(start))


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000
