"""From a conversation to a retrieval query, and to the identity of the current user turn.

Selecting tools from the last human message alone fails on follow-ups: "and in Fahrenheit?"
names no tool. The query is the latest user message, and when that message is short the
earlier user messages are added as context (most recent first), so the follow-up is read
together with the request it continues. A *turn* is everything after one user message; its
key is that message's id, which is how a selection is pinned for the whole tool loop.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> chat = [HumanMessage("What's the weather in Paris today?", id="h1"),
    ...         AIMessage("18 degrees and sunny."),
    ...         HumanMessage("and in Fahrenheit?", id="h2")]
    >>> conversation_query(chat)
    "and in Fahrenheit? (context: What's the weather in Paris today?)"
    >>> turn_key(chat)
    'h2'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

__all__ = ["conversation_query", "current_turn", "earlier_turns", "turn_key"]


def _human_indexes(messages: Sequence[BaseMessage]) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m, HumanMessage) and m.text.strip()]


def conversation_query(
    messages: Sequence[BaseMessage], *, short_words: int = 5, context_turns: int = 2, max_chars: int = 2000
) -> str | None:
    """The retrieval query for the latest user message; None when there is no user text.

    A latest message of fewer than ``short_words`` words gets up to ``context_turns``
    earlier user messages appended as context. The query is cut to ``max_chars``.
    """
    humans = _human_indexes(messages)
    if not humans:
        return None
    latest = " ".join(messages[humans[-1]].text.split())
    if len(latest.split()) < short_words and context_turns > 0 and len(humans) > 1:
        earlier = [" ".join(messages[i].text.split()) for i in reversed(humans[:-1])][:context_turns]
        latest = f"{latest} (context: {' | '.join(earlier)})"
    return latest[:max_chars]


def earlier_turns(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The conversation before the latest user message: the chat history an LLM query planner
    reads to resolve references in it ("book a table *there*")."""
    humans = _human_indexes(messages)
    return list(messages[: humans[-1]]) if humans else []


def turn_key(messages: Sequence[BaseMessage]) -> str | None:
    """An identifier of the current user turn: the latest user message's id (or content hash)."""
    humans = _human_indexes(messages)
    if not humans:
        return None
    message = messages[humans[-1]]
    if message.id:
        return message.id
    digest = hashlib.sha256(message.text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{humans[-1]}:{digest}"


def current_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages after the latest user message (the agent's work on this turn)."""
    humans = _human_indexes(messages)
    return list(messages[humans[-1] + 1 :]) if humans else list(messages)


def tool_results(messages: Sequence[BaseMessage], tool_name: str) -> list[ToolMessage]:
    """The results of calls to ``tool_name`` among ``messages``, oldest first."""
    return [m for m in messages if isinstance(m, ToolMessage) and m.name == tool_name]


def called_tools(messages: Sequence[BaseMessage]) -> list[str]:
    """Names of the tools the assistant called among ``messages``, oldest first."""
    return [c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
