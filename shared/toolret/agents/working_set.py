"""The tools an agent keeps on offer across model calls: a bounded, recency-ordered working set.

A selection is not only the latest search: an agent that searched for a tool, or called one,
expects it on offer again ("and what about tomorrow?" names no tool, while the model, seeing the
earlier call, calls it again). Every adapter needs the same three rules, so they live here once:

* :func:`lru_add` — the bound set as a least-recently-used list cut to a cap, so a long
  conversation never grows the prompt without bound (the LangChain tool-search agent);
* :class:`RecentTools` — the last N tools an agent called, thread-safe (the LlamaIndex object
  retriever's ``keep_used``);
* :func:`share_slots` — search hits and remembered tools sharing ``k`` slots, the best hit keeping
  its slot;
* :func:`capped` — at most a provider's tool limit, with a warning naming the cut;
* :func:`pinned_selection`, :func:`pin_record` — one selection per user turn, pinned for the
  turn's tool loop (the LangChain middleware keeps the pin in the agent's state);
* :func:`found_by_search` — the tools a tool-search tool found within the turn, offered beside it.

Example:
    >>> lru_add(["a", "b", "c"], ["d", "a"], cap=3)
    ['c', 'a', 'd']
    >>> share_slots(["w1", "w2", "w3"], ["used"], 3)
    ['w1', 'w2', 'used']
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from toolret.config import K, RetrievalConfig
from toolret.errors import ConfigError

__all__ = [
    "RecentTools",
    "add_new",
    "capped",
    "found_by_search",
    "lru_add",
    "offered",
    "pin_record",
    "pinned_selection",
    "rebind",
    "share_slots",
    "slots",
]

logger = logging.getLogger("toolret")

T = TypeVar("T")


def lru_add(bound: Sequence[str], names: Sequence[str], cap: int | None = None) -> list[str]:
    """``bound`` with ``names`` made most recent (``names[0]`` the most), cut to the ``cap`` newest."""
    out = list(bound)
    for name in reversed(list(dict.fromkeys(names))):
        if name in out:
            out.remove(name)
        out.append(name)
    return out[-cap:] if cap is not None else out


def add_new(bound: Sequence[str], names: Sequence[str]) -> list[str]:
    """``bound`` extended by the ``names`` it does not hold yet, in order (a set that only grows, as
    langgraph-bigtool's ``selected_tool_ids`` reducer keeps it).

    >>> add_new(["a", "b"], ["b", "c"])
    ['a', 'b', 'c']
    """
    return list(bound) + [name for name in names if name not in set(bound)]


def slots(k: K, config: RetrievalConfig) -> int:
    """The tool slots ``k`` gives: itself, or for ``"auto"`` the most it may return (``config.auto_k.max_k``)."""
    return k if isinstance(k, int) else config.auto_k.max_k


def rebind(
    bound: Sequence[str],
    seeded: Sequence[str],
    events: Sequence[tuple[Sequence[str], bool]],
    known: Collection[str],
    cap: int,
) -> list[str]:
    """The bound set after one model call, least recently used first: the ``seeded`` tools, then each
    tool result in order (``(names, True)``: a search found them; ``(names, False)``: they were
    called, and a called tool already bound becomes most recent), kept to ``known`` tools, the ``cap`` newest.

    >>> rebind(["a", "b"], ["c"], [(["d"], True), (["a"], False)], known="abcd", cap=3)
    ['c', 'd', 'a']
    """
    out = lru_add(bound, seeded)
    for names, found in events:
        out = lru_add(out, names if found else [n for n in names if n in out])
    return [n for n in out if n in known][-cap:]


def share_slots(found: Sequence[str], used: Sequence[str], limit: int) -> list[str]:
    """Search hits and remembered tools in at most ``limit`` slots; the best hit keeps its slot.

    Each remembered tool takes a slot, so the hits get what is left; a remembered tool that is
    also a hit is counted once, wherever the search ranked it (the tool just called stays on offer
    even when a search puts it below the hits that fit).

    >>> share_slots(["w1", "w2", "used"], ["used", "older"], 3)
    ['w1', 'used', 'older']
    >>> share_slots(["used", "w1", "w2"], ["used"], 2)
    ['used', 'w1']
    """
    hits, kept = list(dict.fromkeys(found)), list(dict.fromkeys(used))
    keep = max(1 if hits else 0, limit - len(kept))
    while keep < len(hits) and len(set(hits[: keep + 1]) | set(kept)) <= limit:
        keep += 1
    head = hits[:keep]
    return (head + [t for t in kept if t not in head])[:limit]


def offered(
    found: Sequence[str],
    used: Sequence[str],
    live: Callable[[str], object | None],
    limit: int,
    beyond: bool = False,
    how_to_attach: str = "attach it to the index",
) -> list[str]:
    """The ids an agent is handed: each retrieved id with a live object (one without is skipped with a
    warning naming it: it could be retrieved, never called), then the remembered ``used`` ones with live
    objects, within ``limit`` slots (:func:`share_slots`) or, with ``beyond``, after them.

    >>> offered(["a", "gone", "b"], ["c"], {"a": 1, "b": 2, "c": 3}.get, limit=2)
    ['a', 'c']
    >>> offered(["a", "b", "c"], ["c", "d"], {"a": 1, "b": 2, "c": 3, "d": 4}.get, limit=3)
    ['a', 'c', 'd']
    """
    hits: list[str] = []
    for tool_id in found:
        if live(tool_id) is None:
            logger.warning("no live tool attached for %r; skipped (%s)", tool_id, how_to_attach)
        elif tool_id not in hits:
            hits.append(tool_id)
    kept = [t for t in used if live(t) is not None]
    return hits + [t for t in kept if t not in hits] if beyond else share_slots(hits, kept, limit)


def capped(tools: list[T], limit: int, owner: str) -> list[T]:
    """``tools`` cut to ``limit`` (put the tools that must stay first), with a warning when cut."""
    if len(tools) <= limit:
        return tools
    logger.warning("%s: %d tools exceed tool_limit=%d; sending the first %d", owner, len(tools), limit, limit)
    return tools[:limit]


class RecentTools:
    """The last ``size`` tool ids an agent called, most recent first; thread-safe; 0 keeps none."""

    def __init__(self, size: int = 0) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ConfigError(f"keep_used must be a non-negative integer, got {size!r}")
        self.size = size
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def called(self, tool_id: str, live: Callable[[str], T | None], how_to_attach: str = "attach it") -> T | None:
        """The live object of ``tool_id``, which the agent asked for by its exact name to call it, remembered as
        used; None, with a warning naming it, when no live object is attached (the agent reports "not found")."""
        tool = live(tool_id)
        if tool is None:
            logger.warning("no live tool attached for %r (%s)", tool_id, how_to_attach)
            return None
        self.remember(tool_id)
        return tool

    def remember(self, tool_id: str) -> None:
        """Make ``tool_id`` the most recent (the oldest beyond ``size`` is forgotten)."""
        if self.size == 0:
            return
        with self._lock:
            self._ids.pop(tool_id, None)
            self._ids[tool_id] = None
            while len(self._ids) > self.size:
                self._ids.popitem(last=False)

    @property
    def ids(self) -> list[str]:
        with self._lock:
            return list(reversed(self._ids))

    def clear(self) -> None:
        with self._lock:
            self._ids.clear()

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return f"RecentTools({self.ids!r}, size={self.size})"


def pinned_selection(pinned: Mapping[str, Any] | None, turn: str | None) -> tuple[list[str], str | None] | None:
    """The tools and query pinned for ``turn``, or None when ``pinned`` (the stored pin) is another turn's.

    A selection is made once per user turn and pinned for the turn's tool loop, so the model's
    calls within one turn see the same tools; no pin (a state without a checkpointer) or an earlier
    turn's means a new search.

    >>> pinned_selection({"turn": "t2", "query": "weather", "tools": ["get_weather"]}, "t2")
    (['get_weather'], 'weather')
    >>> pinned_selection({"turn": "t1", "tools": ["get_weather"]}, "t2") is None
    True
    """
    if pinned and turn is not None and pinned.get("turn") == turn:
        return list(pinned.get("tools", [])), pinned.get("query")
    return None


def pin_record(turn: str | None, query: str | None, tools: Sequence[str], bound: list[str] | None) -> dict[str, Any]:
    """The pin :func:`pinned_selection` reads back: the turn, its query, its own tools, and the
    conversation's cache-stable bound list (None when the list is not kept cache-stable)."""
    return {"turn": turn, "query": query, "tools": list(tools), "bound": bound}


def found_by_search(results: Iterable[Any]) -> list[str]:
    """The tool names the turn's tool-search results listed (each result's ``artifact``), in order:
    tools the model discovered itself, offered beside the turn's selection.

    >>> class Result:
    ...     artifact = ["get_weather", "send_email"]
    >>> found_by_search([Result()])
    ['get_weather', 'send_email']
    """
    return [
        str(name)
        for message in results
        if isinstance(artifact := getattr(message, "artifact", None), list)
        for name in artifact
    ]
