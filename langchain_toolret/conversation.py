"""From a LangChain conversation to retrieval queries, and to the identity of the current user turn.

The latest user message is the query (:func:`conversation_query`) and its selection is the turn's;
earlier user messages are context only for a follow-up, by the engine's rule
(:mod:`toolret.search.follow_up`; :func:`refers_back` is re-exported). Which turns are the
user's, the turns before and after the latest one and a turn's key (the user message's id, which
pins a selection for the whole tool loop) are the engine's reading of any message shape
(:mod:`toolret.search.conversation`), re-exported here under the adapter's names.

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

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from toolret.search.conversation import after_latest as current_turn
from toolret.search.conversation import before_latest as earlier_turns
from toolret.search.conversation import follow_up_query, turn_key
from toolret.search.conversation import latest_request as conversation_query
from toolret.search.follow_up import refers_back

__all__ = ["conversation_query", "current_turn", "earlier_turns", "follow_up_query", "refers_back", "turn_key"]


def tool_results(messages: Sequence[BaseMessage], tool_name: str) -> list[ToolMessage]:
    """The results of calls to ``tool_name`` among ``messages``, oldest first."""
    return [m for m in messages if isinstance(m, ToolMessage) and m.name == tool_name]


def called_tools(messages: Sequence[BaseMessage]) -> list[str]:
    """Names of the tools the assistant called among ``messages``, oldest first."""
    return [c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
