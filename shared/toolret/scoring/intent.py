"""Arguments are not intent: the request without its argument values, for the fields that say what a tool does.

"Clone ~/projects/site to a new repo" wants a clone tool; the path is what it will be called
with, and its word "projects" must not pull GitHub's projects tools up. So the values a request
carries -- e-mail addresses, URLs, quoted strings, file names, paths, repository slugs
(``owner/name``, where it looks like one), ``@user`` mentions and stand-alone numbers -- are taken out of the text that
every field but ``parameters`` is matched against: by BM25 by default, by BM25 and the embedder
with ``RetrievalConfig.intent_without_arguments="all"`` (docs/method.md §3a: the embedder reads a
value in its sentence, and taking it out of the embedded text cost on the dev sets). The
parameters field and the parameter-missing penalty (:mod:`toolret.scoring.arguments`) still read
the whole request. Dates and proper nouns stay: "tomorrow" and "Slack" are often the intent.

:func:`toolret.scoring.candidates.rank_tools` matches this text by BM25
(:func:`toolret.scoring.candidates.word_fields`); under ``"all"`` the search also embeds it beside
the request (one batch) as the intent fields' own query. The dev-set signal cache
(:mod:`toolret.eval.signals`) does the same, so the two stay one computation.

Example:
    >>> intent_text('Clone ~/projects/site and email bob@example.com the file "notes.txt"')
    'Clone and email the file'
    >>> intent_text("compute the SHA-256 digest of 12 bytes")
    'compute the SHA-256 digest of bytes'
    >>> intent_text("open a pull request on acme/widgets for @jane")
    'open a pull request on for'
    >>> intent_text("what is the weather in Oslo tomorrow?") is None, intent_text("read and/or write") is None
    (True, True)
"""

from __future__ import annotations

import re

from toolret.documents.tool_doc import INDEX_FIELDS
from toolret.scoring.arguments import argument_spans

__all__ = ["INTENT_FIELDS", "intent_field_texts", "intent_text"]

#: The fields matched against the request without its argument values (all but ``parameters``).
INTENT_FIELDS: tuple[str, ...] = tuple(f for f in INDEX_FIELDS if f != "parameters")
#: Spotted kinds that are values, not intent (toolret.scoring.arguments); numbers only stand-alone.
_VALUE_KINDS = frozenset({"email", "url", "quoted", "file"})
#: Paths (``~/a/b``, ``/var/log``, ``./x``) and ``@user`` mentions.
_PATH = re.compile(r"(?<![\w/:.])(?:~|\.{1,2})?/[\w.\-~/]+")
#: ``owner/name``: a repository slug when it has a ``-``, ``_``, ``.`` or digit, or the request speaks of
#: repositories; otherwise "and/or", "input/output" are words.
_SLUG = re.compile(r"(?<![\w/@.])[A-Za-z][\w.\-]*/\w[\w.\-]*(?![\w/])")
_SLUG_MARK = re.compile(r"[-_.\d]")
_REPO_WORDS = re.compile(
    r"\b(?:repo|repos|repository|repositories|github|gitlab|fork|clone|branch|pull request|PR)\b", re.I
)
_MENTION = re.compile(r"(?<![\w@])@[A-Za-z][\w.\-]*")
_SPACES = re.compile(r"\s+")


def _stand_alone(query: str, start: int, end: int) -> bool:
    """A number that is a value ("12 bytes"), not part of a name ("SHA-256", "top-1", "mp3")."""
    before = query[start - 1] if start else " "
    after = query[end] if end < len(query) else " "
    return (before.isspace() or before in "($") and (after.isspace() or after in ".,;:!?)%")


def intent_text(query: str) -> str | None:
    """``query`` without its argument values, or None when it carries none (or is nothing but values)."""
    spans = [
        (start, end)
        for kind, start, end in argument_spans(query)
        if kind in _VALUE_KINDS or (kind == "number" and _stand_alone(query, start, end))
    ]
    spans += [m.span() for m in _PATH.finditer(query)] + [m.span() for m in _MENTION.finditer(query)]
    repo_context = _REPO_WORDS.search(query) is not None
    spans += [m.span() for m in _SLUG.finditer(query) if repo_context or _SLUG_MARK.search(m.group(0))]
    if not spans:
        return None
    keep = [True] * len(query)
    for start, end in spans:
        keep[start:end] = [False] * (end - start)
    text = _SPACES.sub(" ", "".join(ch if kept else " " for ch, kept in zip(query, keep))).strip()
    text = re.sub(r"\s+([?.!,;:])", r"\1", text)
    if not re.search(r"\w", text) or text == query.strip():
        return None
    return text


def intent_field_texts(query: str, explicit: dict[str, str] | None = None) -> dict[str, str]:
    """The intent fields' query text where it differs from ``query`` (fields with an ``explicit`` text keep it)."""
    text = intent_text(query)
    explicit = explicit or {}
    if text is None:
        return dict(explicit)
    return {**{f: text for f in INTENT_FIELDS}, **explicit}
