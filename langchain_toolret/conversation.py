"""From a LangChain conversation to retrieval queries, and to the identity of the current user turn.

The latest user message is the query (:func:`conversation_query`) and its selection is the turn's;
earlier user messages are context only for a follow-up, by the engine's rule
(:mod:`toolret.retrieval.follow_up`; :func:`refers_back` is re-exported). Which turns are the
user's is the engine's reading of any message shape (:func:`toolret.retrieval.conversation.user_turns`).
A turn's key (the user message's id) pins a selection for the whole tool loop.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> chat = [HumanMessage("What's the weather in Paris today?", id="h1"),
    ...         AIMessage("18 degrees and sunny."),
    ...         HumanMessage("and in Fahrenheit?", id="h2")]
    >>> conversation_query(chat), refers_back("and in Fahrenheit?"), refers_back("is it raining in Oslo?")
    ('and in Fahrenheit?', True, False)
    >>> follow_up_query(chat)
    "and in Fahrenheit? (context: What's the weather in Paris today?)"
    >>> turn_key(chat)
    'h2'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from toolret.retrieval.conversation import CONTEXT_TURNS, as_chat_history, context_query, user_turns
from toolret.retrieval.follow_up import refers_back

__all__ = ["conversation_query", "current_turn", "earlier_turns", "follow_up_query", "refers_back", "turn_key"]


def _human_indexes(messages: Sequence[BaseMessage]) -> list[int]:
    return [i for i, _ in user_turns(messages)]


def conversation_query(messages: Sequence[BaseMessage]) -> str | None:
    """The retrieval query of the current turn: the latest user message (None when there is none).

    Its length is not cut here: every entry point hands it to the engine, whose one rule
    (:mod:`toolret.retrieval.query_text`) searches the informative part of a long request.
    """
    turns = user_turns(messages)
    return " ".join(turns[-1][1].split()) if turns else None


def follow_up_query(messages: Sequence[BaseMessage], *, context_turns: int = CONTEXT_TURNS) -> str | None:
    """The latest user message with up to ``context_turns`` earlier user messages appended as
    context (most recent first; the engine's :func:`~toolret.retrieval.conversation.context_query`);
    None when there is no earlier user message."""
    query = conversation_query(messages)
    if query is None:
        return None
    return context_query(query, as_chat_history(earlier_turns(messages)), turns=context_turns)


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
