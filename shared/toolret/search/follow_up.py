"""Follow-up requests: when an earlier turn may add tools to the current one, and how.

Selecting tools from the latest user message alone fails on real follow-ups: "and in Rome?"
names no tool. Reading every message together with the earlier turns fails the other way:
after "send an email to Bob", "is it raining in Oslo? also convert 100 dollars to euros" would
inherit the e-mail tool in place of the weather one. So the latest message is searched on its
own, and that selection is the turn's: earlier turns only ever *add* to it. They are searched
(:func:`add_context`) only when the message reads as a follow-up (:func:`follow_up_reason`): it
opens as a continuation ("and in Rome?", "what about Lyon?"), names a back-reference that is
not a pronoun ("there", "again", "the same"), or matches no tool well on its own
(``ScoredTool.similarity``, the raw cosine, comparable across queries). A pronoun alone is
not enough: "is it raining" is a new request. Then :func:`with_context` keeps every tool the
message matches well first, in its order, and fills only the other places (the message's
weakly matched ones) from the earlier turns. A ``follow_up`` trace step says which rule fired
and which tools came from context. Framework adapters only say which messages are the
user's; the rule is here.

Example:
    >>> from toolret.results import ScoredTool, SearchResult
    >>> own = SearchResult(query="and in Rome?", tools=[ScoredTool(id="translate", name="translate",
    ...                    score=1.1, similarity=0.13)])
    >>> needs_context("and in Rome?", own), refers_back("is it raining in Oslo?")
    (True, False)
    >>> earlier = SearchResult(query="weather in Oslo", tools=[ScoredTool(id="get_weather",
    ...                        name="get_weather", score=2.7, similarity=0.41)])
    >>> with_context(own, earlier, 1, "weather in Oslo").ids
    ['get_weather']
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

from toolret.config import K
from toolret.llm.protocol import ChatMessage
from toolret.results import ScoredTool, SearchResult, TraceStep
from toolret.search.conversation import context_query

__all__ = [
    "FOLLOW_UP_MIN_SIMILARITY",
    "add_context",
    "follow_up_reason",
    "needs_context",
    "refers_back",
    "with_context",
]

#: A message none of whose tools is at least this similar to it (the raw query-to-field cosine)
#: does not retrieve well on its own; only its own tools at least this similar keep their places.
FOLLOW_UP_MIN_SIMILARITY = 0.25
#: Words that point back at an earlier turn (English; other languages rely on the similarity
#: test). No pronoun: "it", "that", "them" are as often a request's own words ("is it raining",
#: "send that file") as references, so a pronoun alone never makes a follow-up.
_BACK_WORDS = re.compile(r"\b(again|instead|same|previous|earlier|above)\b", re.IGNORECASE)
#: "there" as a place ("book a table there"), not as in "is there…" / "there are…".
_THERE = re.compile(r"\b(?:(?:is|are|was|were|be)\s+)?(there)\b(\s+(?:is|are|was|were)\b|'s\b)?", re.IGNORECASE)
#: Openings that continue the previous request: "and in Rome?", "what about Lyon?", "also for Bob".
_CONTINUATION = re.compile(r"^\s*(and|or|but|also|then|same|what about|how about|now)\b", re.IGNORECASE)


def _back_reference(text: str) -> str | None:
    if word := _BACK_WORDS.search(text):
        return word.group(1).lower()
    for there in _THERE.finditer(text):
        if there.group(0).lower() == "there":
            return "there"
    return None


def refers_back(text: str) -> bool:
    """True when ``text`` reads as a continuation of an earlier request: it opens with one
    ("and…", "what about…", "also…") or names a back-reference ("there", "again", "the same").
    A pronoun alone does not count, nor "also" / "then" inside the message (they join its own parts)."""
    return bool(_CONTINUATION.match(text)) or _back_reference(text) is not None


def follow_up_reason(query: str, own: SearchResult) -> str | None:
    """Why ``query`` (whose own result is ``own``) reads as a follow-up, or None for a new request."""
    if opening := _CONTINUATION.match(query):
        return f"opens with {opening.group(1).lower()!r}"
    if back := _back_reference(query):
        return f"refers back with {back!r}"
    best = max((t.similarity for t in own.tools), default=0.0)
    if best < FOLLOW_UP_MIN_SIMILARITY:
        return f"no tool matches it well on its own (best similarity {best:.2f} < {FOLLOW_UP_MIN_SIMILARITY:g})"
    return None


def needs_context(query: str, own: SearchResult) -> bool:
    """Whether the earlier turns should be searched too for ``query``, whose own result is ``own``."""
    return follow_up_reason(query, own) is not None


def _names(tools: Sequence[ScoredTool]) -> str:
    return ", ".join(t.name for t in tools) or "none"


def with_context(own: SearchResult, extra: SearchResult, k: K, context: str, reason: str = "") -> SearchResult:
    """``own`` with the tools it matches well first, in its order, and ``extra`` (the search with
    the earlier turns, ``context``) filling only the other places; a ``follow_up`` trace step says
    which rule fired (``reason``) and which tools came from context.

    With ``k="auto"`` there are as many places as the larger of the two sets, and at least one
    beyond the follow-up's own matches: a follow-up whose own search found nothing ("and in Rome?")
    gets the context search's precise set, never none, and one whose own words match other tools
    ("what about tomorrow?": set_reminder) still gets the earlier turn's best (get_weather).
    """
    start = time.perf_counter()
    keep = [t for t in own.tools if t.similarity >= FOLLOW_UP_MIN_SIMILARITY]
    size = max(len(own.tools), len(extra.tools), len(keep) + min(1, len(extra.tools))) if k == "auto" else int(k)
    merged = list(keep)
    for scored in [*extra.tools, *own.tools]:
        if len(merged) < size and all(t.id != scored.id for t in merged):
            merged.append(scored)
    own_ids = {t.id for t in own.tools}
    added = [t for t in merged if t.id not in own_ids]
    dropped = [t for t in own.tools if all(t.id != m.id for m in merged)]
    note = (
        f"follow-up ({reason or 'needs context'}): kept the request's own {_names(keep)}; "
        f"from earlier turns ({context!r}): {_names(added)}"
    )
    if dropped:
        note += f"; in place of its weakly matched {_names(dropped)}"
    step = TraceStep(stage="follow_up", path="offline", ms=(time.perf_counter() - start) * 1000, note=note)
    return own.model_copy(update={"tools": merged, "trace": [*own.trace, *extra.trace, step]})


def add_context(
    query: str,
    own: SearchResult,
    history: Sequence[ChatMessage],
    k: K,
    search: Callable[[str], SearchResult],
) -> SearchResult:
    """The turn's tools: ``own`` (the search for ``query`` alone), plus the earlier turns' tools in
    the places it does not need when ``query`` reads as a follow-up (``search`` runs the context
    query, :func:`~toolret.search.conversation.context_query`). Without an earlier user turn
    ``own`` is returned as it is; otherwise a ``follow_up`` trace step says what was decided.
    """
    context = context_query(query, history)
    if context is None:
        return own
    reason = follow_up_reason(query, own)
    if reason is None:
        best = max((t.similarity for t in own.tools), default=0.0)
        note = (
            f"a new request (no continuation or back-reference, best similarity {best:.2f} >= "
            f"{FOLLOW_UP_MIN_SIMILARITY:g}): earlier turns not searched"
        )
        return own.model_copy(
            update={"trace": [*own.trace, TraceStep(stage="follow_up", path="skipped", ms=0.0, note=note)]}
        )
    return with_context(own, search(context), k, context, reason)
