"""A selection as the adapters make it: its settings, the options they take, what it leaves in a trace.

* :class:`Selection`: ``k``, the token budget and what is bound of a tool over an agent's tools
  (:class:`~toolret.agents.agent_tools.AgentTools`), so a graph node built over a retriever
  selects as the retriever does;
* :func:`checked_options`: an adapter's keyword options, a framework's name for one mapped to
  toolret's, an unknown one an error naming those it takes;
* :func:`selection_record`: what a selection shows in a framework's tracing (LangSmith, callbacks):
  the query, the tools chosen, their scores and the engine's trace.

Example:
    >>> checked_options({"similarity_top_k": 3}, {"k", "similarity_top_k"}, aliases={"similarity_top_k": "k"}, owner="demo")
    {'k': 3}
    >>> selection_record("weather", None, ["get_weather"])
    {'query': 'weather', 'tools': ['get_weather'], 'scores': {}, 'trace': []}
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolret.agents.agent_tools import AgentTools
from toolret.config import K
from toolret.errors import ConfigError
from toolret.results import SearchResult

__all__ = ["Selection", "checked_options", "selection_record"]


@dataclass(frozen=True)
class Selection:
    """How a selection is made over an agent's tools: the :class:`AgentTools`, ``k``, the token budget and
    what is bound of a tool (``present``: its condensed copy, None: the tool). A retriever brings its own
    settings this way into the graph nodes built over it (an adapter's ``Selection.of``)."""

    index: AgentTools
    k: K
    token_budget: int | None = None
    present: Callable[[Any], Any] | None = None

    def fit(self, result: SearchResult) -> SearchResult:
        """``result`` as it can be bound, within the budget (a tool that cannot be bound is left out)."""
        return self.index.fit(result, self.token_budget, present=self.present)


def checked_options(
    options: Mapping[str, Any], allowed: Collection[str], *, aliases: Mapping[str, str] | None = None, owner: str
) -> dict[str, Any]:
    """An adapter's keyword options: one it does not take is a :class:`ConfigError` naming it and the
    ones it takes, never a silently ignored setting; a framework's name for an option (``aliases``:
    LlamaIndex's ``similarity_top_k`` for ``k``) becomes toolret's, and both given differently is an error.
    """
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ConfigError(f"unsupported option(s) {', '.join(unknown)}; {owner} take {', '.join(sorted(allowed))}")
    out = dict(options)
    for alias, name in (aliases or {}).items():
        if alias in out:
            value = out.pop(alias)
            if name in out and out[name] != value:
                raise ConfigError(f"pass either {alias} or {name}, not both")
            out[name] = value
    return out


def selection_record(query: str | None, result: SearchResult | None, tools: Sequence[str]) -> dict[str, Any]:
    """What a selection shows in a framework's tracing: the query, the chosen tools, their scores and
    the engine's trace steps."""
    scores = {t.name: round(t.score, 4) for t in result.tools} if result is not None else {}
    trace = [step.model_dump() for step in result.trace] if result is not None else []
    return {"query": query, "tools": list(tools), "scores": scores, "trace": trace}
