"""Earlier chat turns handed to a search, in whatever shape the caller's framework keeps them.

A follow-up request ("now book a table there") only makes sense with the conversation before
it. ``ToolKnowledgeBase.search(..., conversation=...)`` accepts the turns as toolret
:class:`~toolret.llm.protocol.ChatMessage` objects, ``{"role": ..., "content": ...}`` mappings,
``(role, content)`` pairs, LangChain messages (``.type`` ``human``/``ai``/``system``) or
LlamaIndex chat messages (``.role``), so adapters pass their conversation through unchanged.
The LLM planner reads them, as delimited data, to resolve references; tool-call and tool-result
turns carry no request text and are skipped. Anything else is a :class:`~toolret.errors.QueryError`
naming the turn at fault, not a failure deep inside a prompt builder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolret.documents.guards import clean_query
from toolret.errors import QueryError
from toolret.llm.protocol import ChatMessage

__all__ = [
    "CONTEXT_TURNS",
    "MAX_TURNS",
    "after_latest",
    "as_chat_history",
    "before_latest",
    "context_query",
    "earlier_than",
    "follow_up_query",
    "latest_request",
    "turn_key",
    "user_turns",
]

#: Framework role names mapped to the three roles the LLM protocol knows.
_ROLE_OF = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "system": "system",
    "developer": "system",
}
#: Roles whose turns are tool plumbing, not conversation: skipped.
_SKIPPED_ROLES = {"tool", "function", "chatbot_tool", "remove"}
#: Most turns kept (the most recent ones); the planner prompt clips further.
MAX_TURNS = 50
#: Earlier user turns a follow-up's context query carries (most recent first).
CONTEXT_TURNS = 2


def _content_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # LangChain content blocks: keep the text parts
        parts = [
            b if isinstance(b, str) else b.get("text", "")
            for b in content
            if isinstance(b, str) or (isinstance(b, Mapping) and b.get("type") == "text")
        ]
        return "\n".join(p for p in parts if isinstance(p, str))
    if content is None:
        return ""
    raise QueryError(f"{where}: content must be text, not {type(content).__name__}")


def _role_and_content(turn: Any, where: str) -> tuple[str, Any]:
    if isinstance(turn, ChatMessage):
        return turn.role, turn.content
    if isinstance(turn, Mapping):
        if "role" not in turn or "content" not in turn:
            raise QueryError(f"{where}: a mapping needs 'role' and 'content' keys")
        return turn["role"], turn["content"]
    if isinstance(turn, tuple) and len(turn) == 2:
        return turn
    role = getattr(turn, "role", None) or getattr(turn, "type", None)
    if role is None or not hasattr(turn, "content"):
        raise QueryError(
            f"{where}: expected a ChatMessage, a role/content mapping or pair, or a chat "
            f"message object, not {type(turn).__name__}"
        )
    return getattr(role, "value", role), turn.content


def as_chat_history(turns: Iterable[Any] | None) -> list[ChatMessage]:
    """The conversation before the query as :class:`ChatMessage` turns, oldest first.

    >>> as_chat_history([("user", "Find Italian places in Lyon"), {"role": "ai", "content": "Found 3."}])
    [ChatMessage(role='user', content='Find Italian places in Lyon'), ChatMessage(role='assistant', content='Found 3.')]
    """
    if turns is None:
        return []
    if isinstance(turns, (str, bytes, Mapping)):
        raise QueryError(f"history must be a sequence of chat turns, not a single {type(turns).__name__}")
    out: list[ChatMessage] = []
    for i, turn in enumerate(turns):
        where = f"history[{i}]"
        role, content = _role_and_content(turn, where)
        role = str(role).lower()
        if role in _SKIPPED_ROLES:
            continue
        if role not in _ROLE_OF:
            raise QueryError(f"{where}: unknown role {role!r}; use user, assistant or system")
        text = clean_query(_content_text(content, where)).strip()
        if text:
            out.append(ChatMessage(role=_ROLE_OF[role], content=text))  # type: ignore[arg-type]
    return out[-MAX_TURNS:]


def context_query(query: str, history: Iterable[ChatMessage], *, turns: int = CONTEXT_TURNS) -> str | None:
    """``query`` with up to ``turns`` earlier user messages of ``history`` appended as context, most
    recent first: what a follow-up is searched with (:mod:`toolret.search.follow_up`). None when
    there is no earlier user message.

    >>> context_query("and in Rome?", [ChatMessage(role="user", content="weather in Oslo"),
    ...                                ChatMessage(role="assistant", content="Rain.")])
    'and in Rome? (context: weather in Oslo)'
    """
    earlier = [" ".join(m.content.split()) for m in reversed(list(history)) if m.role == "user"][:turns]
    earlier = [text for text in earlier if text]
    if not earlier or turns < 1:
        return None
    return f"{' '.join(query.split())} (context: {' | '.join(earlier)})"


def _user_text(turn: Any) -> str | None:
    """The text of ``turn`` when it is the user's (None for any other turn, or one no shape fits)."""
    try:
        role, content = _role_and_content(turn, "turn")
        return _content_text(content, "turn") if _ROLE_OF.get(str(role).lower()) == "user" else None
    except QueryError:
        return None


def user_turns(turns: Sequence[Any]) -> list[tuple[int, str]]:
    """``(position, text)`` of each user turn with text, oldest first, whatever the framework's
    message shape (the adapters find "the latest user message" of a conversation with it).

    >>> user_turns([("user", "weather in Oslo"), ("assistant", "Rain."), ("user", "  ")])
    [(0, 'weather in Oslo')]
    """
    out = [(i, text) for i, turn in enumerate(turns) if (text := _user_text(turn)) is not None]
    return [(i, text) for i, text in out if text.strip()]


def earlier_than(turns: Sequence[Any], query: str) -> list[Any]:
    """The chat before ``query``: an agent that stores the request in its memory before it
    retrieves (LlamaIndex's) has the query itself as its latest user turn, which is cut off.

    >>> earlier_than([("user", "weather in Oslo"), ("assistant", "Rain."), ("user", "and Rome?")], "and Rome?")
    [('user', 'weather in Oslo'), ('assistant', 'Rain.')]
    """
    found = user_turns(turns)
    if found and found[-1][1].strip() == query.strip():
        return list(turns[: found[-1][0]])
    return list(turns)


def latest_request(turns: Sequence[Any]) -> str | None:
    """The current turn's request: the latest user message, whitespace collapsed (None when there is none).

    Its length is not cut here: every entry point hands it to the search, whose one rule
    (:mod:`toolret.search.query_text`) searches the informative part of a long request.

    >>> latest_request([("user", "weather in  Oslo"), ("assistant", "Rain."), ("user", "and Rome?")])
    'and Rome?'
    """
    found = user_turns(turns)
    return " ".join(found[-1][1].split()) if found else None


def before_latest(turns: Sequence[Any]) -> list[Any]:
    """The conversation before the latest user message: the chat history an LLM query planner
    reads to resolve references in it ("book a table *there*")."""
    found = user_turns(turns)
    return list(turns[: found[-1][0]]) if found else []


def after_latest(turns: Sequence[Any]) -> list[Any]:
    """The turns after the latest user message (the agent's work on this turn; all of them when none is the user's)."""
    found = user_turns(turns)
    return list(turns[found[-1][0] + 1 :]) if found else list(turns)


def follow_up_query(turns: Sequence[Any], *, context_turns: int = CONTEXT_TURNS) -> str | None:
    """The latest user message with up to ``context_turns`` earlier user messages appended as
    context (most recent first; :func:`context_query`); None when there is no earlier user message."""
    query = latest_request(turns)
    if query is None:
        return None
    return context_query(query, as_chat_history(before_latest(turns)), turns=context_turns)


def turn_key(turns: Sequence[Any]) -> str | None:
    """An identifier of the current user turn: the latest user message's ``id`` (an attribute or a
    mapping key), else its position and a hash of its text; a selection pinned to it lasts the
    turn's whole tool loop. None when there is no user message.

    >>> turn_key([{"role": "user", "content": "weather in Oslo", "id": "h1"}])
    'h1'
    """
    found = user_turns(turns)
    if not found:
        return None
    position, text = found[-1]
    turn = turns[position]
    key = turn.get("id") if isinstance(turn, Mapping) else getattr(turn, "id", None)
    if isinstance(key, str) and key:
        return key
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{position}:{digest}"
