"""Follow-up requests: when an earlier turn may add tools to the current one, and how.

Selecting tools from the latest user message alone fails on real follow-ups: "and in Rome?"
names no tool. Reading every short message together with the earlier turns fails the other way:
after "turn on the kitchen lights", "play some jazz" would inherit the lights tool. So the
latest message is searched on its own, and the earlier turns are searched too only when it
:func:`needs_context`: it refers back (:func:`refers_back`) or no tool matches it well
(``ScoredTool.similarity``, the raw cosine, which unlike the pool-relative score is comparable
across queries). Then :func:`with_context` keeps the message's own well-matched tools in their
places and fills the rest from the earlier turns. Framework adapters only say which messages
are the user's; the rule is here.

Example:
    >>> from toolret.results import ScoredTool, SearchResult
    >>> own = SearchResult(query="and in Rome?", tools=[ScoredTool(id="translate", name="translate",
    ...                    score=1.1, similarity=0.13)])
    >>> needs_context("and in Rome?", own), refers_back("play some jazz")
    (True, False)
    >>> earlier = SearchResult(query="weather in Oslo", tools=[ScoredTool(id="get_weather",
    ...                        name="get_weather", score=2.7, similarity=0.41)])
    >>> with_context(own, earlier, 1, "weather in Oslo").ids
    ['get_weather']
"""

from __future__ import annotations

import re
import time

from toolret.config import K
from toolret.results import SearchResult, TraceStep

__all__ = ["FOLLOW_UP_MIN_SIMILARITY", "needs_context", "refers_back", "with_context"]

#: A message none of whose tools is at least this similar to it (the raw query-to-field cosine)
#: does not retrieve well on its own; only its own tools at least this similar keep their places.
FOLLOW_UP_MIN_SIMILARITY = 0.25
#: Words that point back at an earlier turn (English; other languages rely on the similarity test).
_BACK_WORDS = frozenset(
    "it its it's that this those these them they there then again same also too instead "
    "he she him her his their previous last above earlier".split()
)
#: Openings that continue the previous request: "and in Rome?", "what about Lyon?".
_CONTINUATION = re.compile(r"^\s*(and|or|but|also|then|same|what about|how about|now)\b", re.IGNORECASE)
_WORD = re.compile(r"[\w']+")


def refers_back(text: str) -> bool:
    """True when ``text`` reads as a continuation of an earlier request (a pronoun, "again",
    "there", or an opening such as "and…" / "what about…")."""
    if _CONTINUATION.match(text):
        return True
    return any(word in _BACK_WORDS for word in _WORD.findall(text.lower()))


def needs_context(query: str, own: SearchResult) -> bool:
    """Whether the earlier turns should be searched too for ``query``, whose own result is ``own``."""
    best = max((t.similarity for t in own.tools), default=0.0)
    return refers_back(query) or best < FOLLOW_UP_MIN_SIMILARITY


def with_context(own: SearchResult, extra: SearchResult, k: K, context: str) -> SearchResult:
    """``own`` with its well-matched tools first and ``extra`` (the search with the earlier turns,
    ``context``) filling the other places; a ``follow_up`` trace step says so."""
    start = time.perf_counter()
    keep = [t for t in own.tools if t.similarity >= FOLLOW_UP_MIN_SIMILARITY]
    merged = list(keep)
    for scored in [*extra.tools, *own.tools]:
        if all(t.id != scored.id for t in merged):
            merged.append(scored)
    size = len(own.tools) if k == "auto" else int(k)
    note = f"follow-up: kept {len(keep)} tool(s) of the message's own, filled the rest from the earlier turns ({context!r})"
    step = TraceStep(stage="follow_up", path="offline", ms=(time.perf_counter() - start) * 1000, note=note)
    return own.model_copy(update={"tools": merged[:size], "trace": [*own.trace, *extra.trace, step]})
