"""Text normalisation shared by indexing and querying.

Identifiers are split into words (``GetRecord`` -> "get record", ``math.factorial`` ->
"math factorial") because tool names carry much of a tool's meaning but never match a
natural-language query token for token.
"""

from __future__ import annotations

import re

__all__ = ["first_sentence", "humanize_name", "joined_compounds", "split_identifier", "stem_tokens", "tokenize"]

_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")
# "HTTPServer" -> "HTTP Server": a space after a capital that starts "Xy". A lookahead, not
# ``([A-Z]+)([A-Z][a-z])``, which backtracks quadratically on a long capital run (3 s at 20,000).
_CAMEL_2 = re.compile(r"([A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_\-./#:{}()\[\]<>,;|\\@$=+*&^%!?~`'\"\s]+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Runs of word characters and hyphens: one character class, so matching is linear in the text
# (a pattern of words joined by hyphens backtracks quadratically on "aaaa…a-", 5 s at 20,000 chars).
_WORD_RUN = re.compile(r"[\w-]+", re.UNICODE)
_COMPOUND_BREAK = re.compile(r"_|-{2,}")  # inside a run: what ends a hyphenated compound
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
# English clitics after a letter: "what's", "user's", "don't", "we're", "I'd" (straight or typographic
# apostrophe). Split at the apostrophe they leave stray tokens ("s", "t") that every text with a
# possessive shares, so a query's "what's" would count as a word the registry knows (issue 41).
_CLITIC = re.compile(r"(?<=[^\W\d_])(?:n['’]t|['’](?:s|d|m|ll|re|ve))\b", re.IGNORECASE)

_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
        "can",
        "could",
        "would",
        "should",
        "please",
        "do",
        "does",
        "did",
        "get",
    ]
)


def split_identifier(identifier: str) -> list[str]:
    """Split a code identifier into lowercase words.

    >>> split_identifier("GetRecord")
    ['get', 'record']
    >>> split_identifier("math.factorial")
    ['math', 'factorial']
    >>> split_identifier("HTTPServer_v2")
    ['http', 'server', 'v2']
    """
    spaced = _CAMEL_2.sub(r"\1 ", _CAMEL_1.sub(r"\1 \2", identifier))
    return [part.lower() for part in _SEPARATORS.split(spaced) if part]


def humanize_name(name: str) -> str:
    """A tool name as plain words, e.g. ``"get_current_weather"`` -> ``"get current weather"``."""
    return " ".join(split_identifier(name))


def tokenize(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Lowercase word tokens for the lexical index, identifiers split into words.

    The same function tokenizes tools and queries, so both sides agree on what a word is.
    Stopwords (including request filler such as "please", "can", "get") are dropped
    because they match every tool equally, and so are English clitics ("'s", "n't", "'re"),
    on both sides alike.
    """
    words: list[str] = []
    for raw in _WORD.findall(_CLITIC.sub("", text)):
        for word in split_identifier(raw) if not raw.islower() else [raw.lower()]:
            if drop_stopwords and word in _STOPWORDS:
                continue
            words.append(word)
    return words


def joined_compounds(text: str) -> list[str]:
    """Hyphenated names of letters and digits written as one word: "SHA-256" -> "sha256".

    A request writes "SHA-256", "GPT-2" or "UTF-8" where the tool is named ``hashlib.sha256``,
    ``gpt2`` or ``utf8_decode``; :func:`tokenize` splits the request's form into "sha" and "256",
    which never meet the name's one token. Compounds without a digit ("e-mail", "real-time") or
    without a letter (dates, phone numbers) are not joined.

    >>> joined_compounds("hash it with SHA-256, not a real-time 2024-01-05 check")
    ['sha256']
    """
    if "-" not in text:
        return []
    joined: list[str] = []
    for run in _WORD_RUN.findall(text):
        if "-" not in run:
            continue
        for piece in _COMPOUND_BREAK.split(run):
            piece = piece.strip("-")
            if "-" in piece and any(ch.isdigit() for ch in piece) and any(ch.isalpha() for ch in piece):
                joined.append(piece.replace("-", "").lower())
    return joined


_STEMMER: object | None = None


def _stem_word(word: str) -> str:
    global _STEMMER
    if _STEMMER is None:
        try:
            import Stemmer

            _STEMMER = Stemmer.Stemmer("english")
        except ImportError:  # PyStemmer is a base dependency; degrade to no stemming
            _STEMMER = False
    if _STEMMER is False:
        return word
    return _STEMMER.stemWord(word)  # type: ignore[union-attr]


def stem_tokens(words: list[str]) -> list[str]:
    """English Snowball stems (``forecasts`` -> ``forecast``), so inflections still match."""
    return [_stem_word(w) for w in words]


def first_sentence(text: str, max_words: int = 20) -> str:
    """The first sentence of ``text``, cut to ``max_words`` words (a tool's one-line purpose).

    >>> first_sentence("Gets the weather. Needs a key.")
    'Gets the weather.'
    """
    text = " ".join(text.split())
    if not text:
        return ""
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
    words = sentence.split()
    return " ".join(words[:max_words])
