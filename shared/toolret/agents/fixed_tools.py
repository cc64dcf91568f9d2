"""Which of an agent's tools one model call is offered: the fixed ones, the selection, a fallback, a limit.

A selector in front of a model call splits the agent's tools into *fixed* ones, sent on every
call and first (``always_include``, then the search tool), and *candidates*, which are searched;
when selection fails it offers a fallback set rather than break the agent; and it never sends
more than the provider's limit (:func:`toolret.agents.working_set.capped`). These rules read
tool names only, so any adapter applies them to its framework's tools (the LangChain middleware
does, ``langchain_toolret.narrowing``).

Example:
    >>> split_fixed(["search_tools", "get_weather", "ask_user"], ["ask_user"], "search_tools", "demo")
    (['ask_user', 'search_tools'], ['get_weather'])
    >>> keep = fallback_filter("always_include", ["ask_user"], "search_tools")
    >>> [n for n in ["get_weather", "ask_user", "search_tools"] if keep is None or keep(n)]
    ['ask_user', 'search_tools']
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

from toolret.errors import ConfigError

__all__ = [
    "DEFAULT_TOOL_LIMIT",
    "Fallback",
    "check_agentic",
    "check_offer",
    "fallback_filter",
    "fallback_tools",
    "split_fixed",
    "warn_fallback",
]

logger = logging.getLogger("toolret")

#: What the model gets when selection fails: every tool, only ``always_include``, or these names.
Fallback = Literal["all", "always_include"] | Sequence[str]
T = TypeVar("T")

#: Most tools one model call is sent, whatever happens (OpenAI's limit is 128 tools per request).
DEFAULT_TOOL_LIMIT = 128


def check_offer(fallback: object, tool_limit: object) -> None:
    """A :class:`~toolret.errors.ConfigError` (a ``ValueError``) for a fallback or limit that is not one."""
    if isinstance(fallback, str) and fallback not in ("all", "always_include"):
        raise ConfigError(f"fallback must be 'all', 'always_include' or a list of tool names, not {fallback!r}")
    if isinstance(tool_limit, bool) or not isinstance(tool_limit, int) or tool_limit < 1:
        raise ConfigError(f"tool_limit must be a positive integer, not {tool_limit!r}")


def check_agentic(names: Sequence[object], search_tool: str, max_tools: int, seed_k: int, search_k: int) -> None:
    """An agent that searches its own tools: a tool of ``names`` already called ``search_tool`` could not be
    told from the search tool (rename it), and the bound set needs ``max_tools`` and ``search_k`` of at
    least 1, ``seed_k`` (tools found for each new user message) at least 0; a :class:`ValueError` otherwise."""
    if search_tool in names:
        raise ValueError(f"a tool is already named {search_tool!r}; pass search_tool_name= to rename the search tool")
    if max_tools < 1 or seed_k < 0 or search_k < 1:
        raise ValueError("max_tools and search_k must be at least 1, seed_k at least 0")


def split_fixed(
    names: Sequence[str], always_include: Sequence[str], search_tool: str | None, owner: str
) -> tuple[list[str], list[str]]:
    """The fixed names (``always_include`` sorted, the search tool last) and the candidates, in order.

    An ``always_include`` name the agent does not have is a :class:`~toolret.errors.ConfigError`
    naming it (as LangChain's ``LLMToolSelectorMiddleware`` raises): a misspelt name would otherwise
    quietly take a tool the developer meant to offer on every call away from the model.
    """
    wanted = {*always_include, *([search_tool] if search_tool else [])}
    fixed = sorted((n for n in dict.fromkeys(names) if n in wanted), key=lambda n: (n == search_tool, n))
    missing = sorted(set(always_include) - set(fixed))
    if missing:
        have = sorted(names)
        shown = ", ".join(have[:20]) + (f" and {len(have) - 20} more" if len(have) > 20 else "")
        raise ConfigError(f"{owner}: always_include names tools the agent does not have: {missing}; its tools: {shown}")
    return fixed, [n for n in names if n not in wanted]


def fallback_filter(
    fallback: Fallback, always_include: Sequence[str], search_tool: str | None
) -> Callable[[str], bool] | None:
    """Which tool names a failed selection offers: None for ``"all"`` (every tool, the fixed ones
    first), else a test of a name (``always_include``'s or the given names, and the search tool)."""
    if fallback == "all":
        return None
    keep = set(always_include) if fallback == "always_include" else set(fallback)
    if search_tool:
        keep.add(search_tool)
    return keep.__contains__


def fallback_tools(
    tools: Sequence[T],
    fallback: Fallback,
    always_include: Sequence[str],
    search_tool: str | None,
    name_of: Callable[[T], str | None],
) -> list[T]:
    """The framework's ``tools`` a failed selection offers (:func:`fallback_filter`), in order; ``"all"``
    puts the fixed ones first. ``name_of`` names a framework tool (None: not one, e.g. a provider's
    tool dict, which always passes).

    >>> fallback_tools(["get_weather", "ask_user", "search_tools"], "all", ["ask_user"], "search_tools", str)
    ['ask_user', 'search_tools', 'get_weather']
    """
    keep = fallback_filter(fallback, always_include, search_tool)
    if keep is None:
        fixed = {*always_include, *([search_tool] if search_tool else [])}
        first = [t for t in tools if (name := name_of(t)) is not None and name in fixed]
        return [*first, *(t for t in tools if t not in first)]
    return [t for t in tools if (name := name_of(t)) is None or keep(name)]


def warn_fallback(owner: str, exc: BaseException, fallback: Fallback) -> None:
    """Say, naming the failure and the fallback, that selection failed and the fallback is offered."""
    shown = fallback if isinstance(fallback, str) else ", ".join(fallback)
    logger.warning(
        "%s: tool selection failed (%s: %s); offering the fallback tools (%s)", owner, type(exc).__name__, exc, shown
    )
