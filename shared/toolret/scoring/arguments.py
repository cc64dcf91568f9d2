"""Offline argument spotting and how well a query can fill a tool's parameters.

MFTR penalises a tool whose required parameters the query cannot supply. Without an LLM,
toolret finds the argument values a query carries (numbers, dates, quoted strings,
e-mails, URLs, file names, proper nouns) and scores each parameter by whether some
spotted value has a compatible kind.

Example:
    >>> [a.kind for a in spot_arguments('Email bob@example.com the file "report.pdf"')]
    ['email', 'quoted']
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from toolret.documents.text import split_identifier
from toolret.documents.tool_doc import ToolParam

__all__ = [
    "ID_FLOOR",
    "NAMED_FLOOR",
    "ArgumentFit",
    "ParamShape",
    "SpottedArgument",
    "param_satisfaction",
    "param_shape",
    "spot_arguments",
]

ArgKind = Literal["email", "url", "date", "quoted", "file", "number", "proper_noun"]


@dataclass(frozen=True)
class SpottedArgument:
    kind: ArgKind
    text: str


_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")  # what _anchored_spans finds, in linear time
_EMAIL_DOMAIN = re.compile(r"[\w-]+(?:\.[\w-]+)+\b")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DATE = re.compile(
    r"\b(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}|"
    rf"(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})(?:,?\s+\d{{4}})?|"
    r"today|tomorrow|yesterday|tonight|next\s+(?:week|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    re.IGNORECASE,
)
# A single quote opens only where no letter precedes it and closes only where none follows: in "The Beatle's
# newest album to my 'My Rock' playlist" the possessive is not a quote.
_QUOTED = re.compile(r"\"([^\"]{1,200})\"|(?<!\w)'([^']{2,200})'(?!\w)|“([^”]{1,200})”|`([^`]{1,200})`")
_FILE = re.compile(r"\b[\w\-/\\]+\.(?:[a-z0-9]{1,5})\b", re.IGNORECASE)  # what _anchored_spans finds, in linear time
_FILE_EXT = re.compile(r"[a-z0-9]{1,5}\b", re.IGNORECASE)
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?\$?\d+(?:[.,]\d+)*%?(?![\w])|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|hundred|thousand|million)\b",
    re.IGNORECASE,
)
_PROPER = re.compile(r"\b[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)*")
_COMMON_CAPS = frozenset(
    [
        "i",
        "i'm",
        "i'd",
        "i'll",
        "can",
        "could",
        "would",
        "should",
        "will",
        "please",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "how",
        "is",
        "are",
        "do",
        "does",
        "did",
        "find",
        "get",
        "give",
        "show",
        "tell",
        "list",
        "make",
        "create",
        "calculate",
        "compute",
        "help",
        "let",
        "it",
        "the",
        "a",
        "an",
        "my",
        "me",
        "we",
        "you",
        "hi",
        "hello",
        "hey",
        "thanks",
        "ok",
        "okay",
    ]
)
_FILE_EXTS = frozenset(
    [
        "txt",
        "csv",
        "json",
        "xml",
        "pdf",
        "doc",
        "docx",
        "xls",
        "xlsx",
        "ppt",
        "pptx",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "mp3",
        "mp4",
        "wav",
        "zip",
        "tar",
        "gz",
        "py",
        "js",
        "ts",
        "java",
        "c",
        "cpp",
        "h",
        "html",
        "htm",
        "css",
        "md",
        "yaml",
        "yml",
        "log",
        "sql",
        "db",
        "ini",
        "cfg",
        "toml",
        "sh",
        "bat",
        "exe",
        "bin",
        "dat",
        "parquet",
    ]
)


def spot_arguments(query: str) -> list[SpottedArgument]:
    """The argument values a query carries, most specific kinds first, each span once.

    Linear in the query's length: a pasted document or list reaches this function whole (up
    to ``RetrievalConfig.max_query_chars``), so no step may backtrack or compare every span
    with every other.
    """
    return [SpottedArgument(kind, query[start:end]) for kind, start, end in argument_spans(query)]


def argument_spans(query: str) -> list[tuple[ArgKind, int, int]]:
    """:func:`spot_arguments`' values as (kind, start, end) spans of ``query``, in the order they were claimed."""
    found: list[tuple[ArgKind, int, int]] = []
    starts: list[int] = []  # the claimed spans, disjoint and sorted by start
    ends: list[int] = []

    def claim(kind: ArgKind, start: int, end: int) -> None:
        at = bisect.bisect_right(starts, start)
        if (at and ends[at - 1] > start) or (at < len(starts) and starts[at] < end):
            return
        starts.insert(at, start)
        ends.insert(at, end)
        found.append((kind, start, end))

    for start, end in _anchored_spans(query, "@", ".+-", _EMAIL_DOMAIN):
        claim("email", start, end)
    for kind, pattern in (("url", _URL), ("date", _DATE), ("quoted", _QUOTED)):
        for match in pattern.finditer(query):
            claim(kind, *match.span())  # type: ignore[arg-type]
    for start, end in _anchored_spans(query, ".", "-/\\", _FILE_EXT):
        if query[start:end].rsplit(".", 1)[-1].lower() in _FILE_EXTS:
            claim("file", start, end)
    for match in _NUMBER.finditer(query):
        claim("number", *match.span())
    for match in _PROPER.finditer(query):
        if _is_sentence_start(query, match.start()) and " " not in match.group(0):
            continue
        words = match.group(0).split()
        if all(w.lower().strip("'") in _COMMON_CAPS for w in words):
            continue
        claim("proper_noun", *match.span())
    return found


def _is_word(ch: str) -> bool:
    """``re``'s ``\\w`` for one character."""
    return ch.isalnum() or ch == "_"


def _boundary(text: str, i: int) -> bool:
    """``re``'s ``\\b`` at position ``i``."""
    return (i > 0 and _is_word(text[i - 1])) != (i < len(text) and _is_word(text[i]))


def _run_start(text: str, end: int, floor: int, extra: str) -> int | None:
    """Where the run of word characters and ``extra`` ending at ``end`` may start a match: the
    first position at or after ``floor`` (the previous match's end) with a word boundary, as
    ``\\b[\\w<extra>]+`` would find it; None when there is none before ``end``."""
    start = end
    while start > floor and (_is_word(text[start - 1]) or text[start - 1] in extra):
        start -= 1
    return next((i for i in range(start, end) if _boundary(text, i)), None)


def _anchored_spans(text: str, anchor: str, extra: str, tail: re.Pattern[str]) -> list[tuple[int, int]]:
    """The spans of ``\\b[\\w<extra>]+<anchor><tail>``, found from each ``anchor`` instead of by that
    pattern, which backtracks quadratically over a long run of its characters without the anchor.
    :data:`_EMAIL` is ``@`` with ``.+-`` and :data:`_EMAIL_DOMAIN`; :data:`_FILE` is ``.`` with
    ``-/\\`` and :data:`_FILE_EXT`."""
    spans: list[tuple[int, int]] = []
    last = 0
    at = text.find(anchor)
    while at != -1:
        start = _run_start(text, at, last, extra)
        rest = tail.match(text, at + 1) if start is not None else None
        if start is not None and rest:
            spans.append((start, rest.end()))
            last = rest.end()
        at = text.find(anchor, max(at + 1, last))
    return spans


def _is_sentence_start(text: str, index: int) -> bool:
    i = index - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i < 0 or text[i] in ".!?:;\n\"'("


_NAME_HINTS: dict[str, tuple[str, ...]] = {
    "email": ("email", "mail", "recipient", "sender"),
    "url": ("url", "uri", "link", "website", "endpoint", "href", "domain"),
    "file": ("file", "path", "filename", "dir", "directory", "folder", "document"),
    "date": ("date", "time", "day", "when", "start", "end", "since", "until", "deadline", "datetime", "timestamp"),
}

# Identifiers (``movie_id``, ``user_uuid``) usually come from an earlier tool's output (search,
# then details), so a request that does not spell one out is weak evidence against the tool.
_ID_WORDS = frozenset({"id", "ids", "uuid", "guid", "key", "handle"})
ID_FLOOR = 0.5
#: s_p of a parameter the query names (all its name words are query words), at least.
NAMED_FLOOR = 0.8

# How well a value of each kind can fill a parameter of a generic JSON type.
_KIND_FOR_TYPE: dict[str, dict[str, float]] = {
    "integer": {"number": 1.0, "date": 0.6},
    "number": {"number": 1.0},
    "string": {"quoted": 1.0, "proper_noun": 0.9, "file": 0.9, "email": 0.8, "url": 0.8, "date": 0.8, "number": 0.6},
    "array": {"quoted": 0.8, "proper_noun": 0.8, "number": 0.8, "file": 0.8, "email": 0.8, "url": 0.8, "date": 0.7},
    "object": {"quoted": 0.6, "proper_noun": 0.6, "number": 0.6, "file": 0.6, "email": 0.6, "url": 0.6, "date": 0.6},
}


@dataclass(frozen=True)
class ParamShape:
    """What :func:`param_satisfaction` reads from a parameter's name and type, whatever the query."""

    base_type: str
    #: booleans and untyped parameters: always satisfiable.
    free: bool
    name_words: frozenset[str]
    hinted: str | None
    table: dict[str, float]
    is_id: bool


@lru_cache(maxsize=65536)
def param_shape(name: str, type_: str) -> ParamShape:
    """A parameter's shape, computed once per (name, type): splitting names is most of the cost
    of scoring a query's candidates, and registries repeat the same parameters across tools."""
    base_type = type_.split("|")[0].strip().lower() or "any"
    name_words = frozenset(split_identifier(name))
    hinted: str | None = None
    for kind, hints in _NAME_HINTS.items():
        if name_words & set(hints):
            hinted = kind
            break
    table = _KIND_FOR_TYPE.get(base_type, _KIND_FOR_TYPE["string"])
    free = base_type in ("boolean", "any", "null")
    return ParamShape(base_type, free, name_words, hinted, table, bool(name_words & _ID_WORDS))


class ArgumentFit:
    """One query's spotted arguments, ready to score many parameters.

    :meth:`satisfaction` is :func:`param_satisfaction`; scoring a query's candidates asks it for
    hundreds of parameters, so the best value for each kind of parameter (type and name hint) is
    worked out once per query, not once per parameter.
    """

    def __init__(self, args: list[SpottedArgument], query_words: set[str]) -> None:
        self.args = args
        self.query_words = query_words
        self._joined: str | None = None
        self._best: dict[tuple[str, str | None], float] = {}
        self._by_shape: dict[tuple[str, str], float] = {}

    def kind_best(self, shape: ParamShape) -> float:
        """The best fit of any spotted value for parameters of this shape's kind (type and name hint)."""
        hinted = shape.hinted if shape.base_type == "string" else None
        key = (shape.base_type, hinted)
        best = self._best.get(key)
        if best is None:
            best = 0.0
            for arg in self.args:
                score = shape.table.get(arg.kind, 0.0)
                if hinted is not None:
                    score = 1.0 if arg.kind == hinted else score * 0.3
                best = max(best, score)
            self._best[key] = best
        return best

    def satisfaction(self, param: ToolParam) -> float:
        """s_p in [0, 1]: can the query supply a value for this parameter? (:func:`param_satisfaction`)"""
        enum = tuple(str(v).lower() for v in param.enum or () if str(v))
        return self.satisfaction_of(param.name, param.type, enum)

    def satisfaction_of(self, name: str, type_: str, enum: tuple[str, ...] = ()) -> float:
        """s_p of a parameter known by its name, type and allowed values (lowercased text).

        It depends on nothing else, so each is worked out once per query (registries repeat
        ``name``, ``location``, ``id``...). A parameter whose allowed value the query's words
        contain is satisfied.
        """
        if enum and self.enum_filled(enum):
            return 1.0
        key = (name, type_)
        known = self._by_shape.get(key)
        if known is None:
            known = self._by_shape[key] = self._score(param_shape(name, type_))
        return known

    def enum_filled(self, enum: tuple[str, ...]) -> bool:
        """Do the query's words contain one of a parameter's allowed values (lowercased text)?"""
        if self._joined is None:
            self._joined = " ".join(sorted(self.query_words))
        joined = self._joined
        return any(value in joined for value in enum)

    def _score(self, shape: ParamShape) -> float:
        if shape.free:
            return 1.0
        best = self.kind_best(shape)
        if shape.name_words and shape.name_words <= self.query_words:
            best = max(best, NAMED_FLOOR)
        if shape.is_id:
            best = max(best, ID_FLOOR)
        return best


def param_satisfaction(param: ToolParam, args: list[SpottedArgument], query_words: set[str]) -> float:
    """s_p in [0, 1]: can the query supply a value for this parameter?

    1 when a spotted value has the parameter's kind (a number for an integer, an e-mail for
    an ``email`` field...), partial credit for looser fits, and a floor of 0.8 when the query
    names the parameter itself. Booleans and untyped parameters are assumed satisfiable:
    a query rarely spells out a flag, and that is no evidence against the tool. Scoring many
    parameters for one query: :class:`ArgumentFit`.
    """
    return ArgumentFit(args, query_words).satisfaction(param)
