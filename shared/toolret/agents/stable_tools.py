"""Cache-stable tool lists: across a conversation, the tools bound to a model only grow, by appending.

Providers cache the prompt's prefix (OpenAI automatically, Anthropic at ``cache_control``
breakpoints), and the tool definitions come first in it. A selector that binds each turn's own
top-k changes that prefix on nearly every turn, so every turn re-processes the whole conversation
uncached. A *cache-stable* list keeps the previous call's list as the prefix of the next one:

* a turn's tools that the list does not hold yet are appended, in the turn's order (best first);
  the turn's tools the list already holds stay where they are. A turn that needs nothing new
  (a follow-up, a topic the conversation had before) sends exactly the previous list, and the
  provider re-processes only the new messages;
* when appending would pass the cap, the list is rebuilt once, from the turn's own tools, and
  grows again from there (trimming the oldest tool each turn would change the prefix every turn);
* a tool the request may no longer have (outside a changed scope, gone from the agent) leaves
  the list, the others keeping their order: the prefix breaks there, never silently keeping an
  out-of-scope tool bound. A token budget that the list would pass rebuilds it as the cap does.

Each turn's selection is offered whole: the cap never cuts the turn's own tools. What the cap
costs is in docs/prompt-cache.md (definition tokens sent on every call, mostly read from the
cache, against one full re-processing per rebuild).

:class:`StableTools` is what an adapter holds (on or off, the cap, and the lists of recent
conversations, so a conversation re-sent in full without a checkpointer still finds the list its
previous turn bound); :func:`grow` is the rule.

Example:
    >>> grow(["get_weather", "send_email"], ["convert_currency", "get_weather"], cap=5).names
    ['get_weather', 'send_email', 'convert_currency']
    >>> g = grow(["a", "b", "c"], ["d", "e"], cap=4)
    >>> g.names, g.rebuilt
    (['d', 'e'], 'cap')
    >>> grow(["a", "b", "c"], ["c"], cap=4, keep=lambda n: n != "a").rebuilt
    'dropped'
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolret.errors import ConfigError
from toolret.search.conversation import user_turns

__all__ = ["DEFAULT_CACHE_CAP", "Growth", "StableTools", "grow"]

logger = logging.getLogger("toolret")

#: Most tools a cache-stable list holds before it is rebuilt, unless ``cache_cap`` says otherwise
#: (raised to twice the turn's slots for a large ``k``): OpenAI's function-calling guide advises
#: fewer than 20 functions per request for accuracy; docs/prompt-cache.md gives the cost.
DEFAULT_CACHE_CAP = 20

#: Why a list did not keep the previous one as its prefix.
Rebuilt = Literal["cap", "budget", "dropped"]


@dataclass(frozen=True)
class Growth:
    """One model call's cache-stable list: the names bound (in order), those appended, and why the
    previous list is not its prefix (None: it is)."""

    names: list[str]
    added: list[str] = field(default_factory=list)
    rebuilt: Rebuilt | None = None

    @property
    def note(self) -> str:
        """One line for a log or a trace: what changed."""
        if self.rebuilt == "dropped":
            return f"dropped tools the request may not have; appended {self.added}"
        if self.rebuilt is not None:
            return f"rebuilt at the {self.rebuilt} from the turn's {len(self.names)} tools"
        return f"appended {self.added}" if self.added else "unchanged"


def grow(
    bound: Sequence[str],
    wanted: Sequence[str],
    cap: int,
    *,
    keep: Callable[[str], bool] | None = None,
    fits: Callable[[Sequence[str]], bool] | None = None,
) -> Growth:
    """The list after ``bound`` for a call that needs ``wanted`` (the turn's tools, best first).

    ``keep``: may the request have this tool (in its scope, still the agent's)? A held tool it may
    not have is dropped (``rebuilt="dropped"``); a wanted one is never bound. ``fits``: does this
    list fit the token budget? Past ``cap`` tools (or the budget) the list is rebuilt from ``wanted``
    alone, which is always offered whole.

    >>> grow([], ["a", "b"], cap=3).names
    ['a', 'b']
    >>> grow(["a", "b"], ["b", "a"], cap=3).note
    'unchanged'
    """
    ok = keep or (lambda _: True)
    before = list(dict.fromkeys(bound))
    held = [n for n in before if ok(n)]
    wanted = [n for n in dict.fromkeys(wanted) if ok(n)]
    names = held + [n for n in wanted if n not in held]
    reason: Rebuilt = "dropped"
    if held and len(names) > cap:
        names, reason = wanted, "cap"
    elif held and fits is not None and len(names) > len(held) and not fits(names):
        names, reason = wanted, "budget"
    kept = names[: len(before)] == before
    return Growth(names, [n for n in names if n not in before], None if kept else reason)


def _key(texts: Sequence[str]) -> str:
    return hashlib.sha256("\x1e".join(texts).encode("utf-8", "surrogatepass")).hexdigest()


class StableTools:
    """The cache-stable policy one adapter applies: on (the default) or off, the cap, and the list of
    each recent conversation (``memory`` of them), found by its user messages.

    An adapter keeps the list in its graph state (checkpointed with the thread); a conversation
    re-sent in full without a checkpointer has no state, and finds here the list its previous turn
    bound, so its prefix holds too.

    >>> stable = StableTools()
    >>> chat = [{"role": "user", "content": "weather in Oslo"}]
    >>> stable.next(chat, None, ["get_weather", "get_forecast"], slots=2).names
    ['get_weather', 'get_forecast']
    >>> chat += [{"role": "assistant", "content": "Rain."}, {"role": "user", "content": "20 EUR in USD?"}]
    >>> stable.next(chat, None, ["convert_currency"], slots=2).names
    ['get_weather', 'get_forecast', 'convert_currency']
    """

    def __init__(self, enabled: bool = True, cap: int | None = None, *, memory: int = 1024) -> None:
        if not isinstance(enabled, bool):
            raise ConfigError(f"cache_stable must be True or False, not {enabled!r}")
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ConfigError(f"cache_cap must be a positive integer or None, not {cap!r}")
        self.enabled = enabled
        #: The cap given (None: :data:`DEFAULT_CACHE_CAP`, at least twice the turn's slots).
        self.cap = cap
        self._memory = memory
        self._lists: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def cap_for(self, slots: int, limit: int | None = None) -> int:
        """The cap of a list whose turns bring up to ``slots`` tools, at most ``limit`` (the tools a call
        may still be sent, the provider's limit less the fixed ones)."""
        cap = self.cap if self.cap is not None else max(DEFAULT_CACHE_CAP, 2 * slots)
        return max(1, min(cap, limit)) if limit is not None else cap

    def recall(self, turns: Sequence[Any]) -> list[str] | None:
        """The list last bound in the conversation ``turns`` (any message shape): this turn's, else the
        previous turn's; None when it is not remembered."""
        texts = [text for _, text in user_turns(turns)]
        with self._lock:
            for key in (_key(texts), _key(texts[:-1])) if texts else ():
                if key in self._lists:
                    return list(self._lists[key])
        return None

    def remember(self, turns: Sequence[Any], names: Sequence[str]) -> None:
        """Record ``names`` as the list the conversation ``turns`` bound (the oldest conversation beyond
        ``memory`` is forgotten)."""
        texts = [text for _, text in user_turns(turns)]
        if not texts:
            return
        with self._lock:
            key = _key(texts)
            self._lists.pop(key, None)
            self._lists[key] = list(names)
            while len(self._lists) > self._memory:
                self._lists.popitem(last=False)

    def next(
        self,
        turns: Sequence[Any],
        bound: Sequence[str] | None,
        wanted: Sequence[str],
        *,
        slots: int,
        limit: int | None = None,
        keep: Callable[[str], bool] | None = None,
        fits: Callable[[Sequence[str]], bool] | None = None,
        owner: str = "toolret",
    ) -> Growth:
        """The list one model call of the conversation ``turns`` binds: :func:`grow` from ``bound`` (the
        list the adapter's state holds; None: not known, then the remembered one). Off, the turn's
        ``wanted`` as they are."""
        if not self.enabled:
            return Growth([n for n in dict.fromkeys(wanted) if keep is None or keep(n)])
        previous = bound if bound is not None else self.recall(turns) or []
        growth = grow(previous, wanted, self.cap_for(slots, limit), keep=keep, fits=fits)
        if growth.rebuilt is not None or growth.added:
            logger.debug("%s: tool list %s", owner, growth.note)
        self.remember(turns, growth.names)
        return growth

    def __repr__(self) -> str:
        state = "on" if self.enabled else "off"
        return f"StableTools({state}, cap={self.cap or DEFAULT_CACHE_CAP}, {len(self._lists)} conversations)"
