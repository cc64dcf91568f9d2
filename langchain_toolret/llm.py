"""A LangChain chat model as toolret's :class:`~toolret.llm.LLM`, for the engine's LLM steps.

The user's configured chat model (keys, base URL, callbacks) answers through
``with_structured_output``; the engine calls it through :func:`toolret.llm.structured_call`.

Example:
    >>> from pydantic import BaseModel
    >>> from toolret.llm import ChatMessage
    >>> from langchain_toolret.testing import ScriptedChatModel
    >>> class City(BaseModel):
    ...     name: str
    >>> llm = ChatModelLLM(ScriptedChatModel.structured([{"name": "Paris"}]))
    >>> llm.generate([ChatMessage(role="user", content="Capital of France?")], City, timeout=5)
    City(name='Paris')
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel

from toolret.llm import ChatMessage, LLMError, MalformedOutputError
from toolret.llm.bounded import BoundedLLM, as_schema

__all__ = ["ChatModelLLM", "as_toolret_llm", "resolve_chat_model"]

T = TypeVar("T", bound=BaseModel)

_ROLES = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}


def _to_langchain(messages: Sequence[ChatMessage]) -> list[BaseMessage]:
    return [_ROLES[m.role](content=m.content) for m in messages]


def _raw_text(raw: Any) -> str | None:
    """What the model actually said, for the retry feedback: tool-call arguments or text."""
    if not isinstance(raw, AIMessage):
        return None if raw is None else str(raw)
    if raw.tool_calls:
        return json.dumps(raw.tool_calls[0].get("args", {}), ensure_ascii=False, default=str)
    return raw.text or None


class ChatModelLLM(BoundedLLM):
    """Wrap a LangChain ``BaseChatModel`` so toolret's LLM steps can use it; the deadline and the errors
    are the engine's (:class:`toolret.llm.bounded.BoundedLLM`); ``method`` goes to ``with_structured_output``.
    """

    def __init__(self, chat_model: BaseChatModel, *, method: str | None = None, name: str | None = None) -> None:
        if not isinstance(chat_model, BaseChatModel):
            raise TypeError(f"ChatModelLLM wraps a LangChain BaseChatModel, not {type(chat_model).__name__}")
        self.chat_model = chat_model
        self.method = method
        model_name = getattr(chat_model, "model_name", None) or getattr(chat_model, "model", None)
        self.name = name or f"langchain:{model_name or chat_model._llm_type}"
        self._runnables: dict[type[BaseModel], tuple[Runnable[Any, Any], bool]] = {}
        self._lock = threading.Lock()

    def _structured(self, schema: type[BaseModel]) -> tuple[Runnable[Any, Any], bool]:
        """``with_structured_output(schema)``, with the raw answer when the model offers it."""
        with self._lock:
            if schema not in self._runnables:
                kwargs: dict[str, Any] = {"method": self.method} if self.method else {}
                try:
                    entry = (self.chat_model.with_structured_output(schema, include_raw=True, **kwargs), True)
                except (TypeError, ValueError):
                    entry = (self.chat_model.with_structured_output(schema, **kwargs), False)
                except NotImplementedError as exc:
                    raise LLMError(
                        f"{self.name}: the chat model has no structured output "
                        "(with_structured_output is not implemented)"
                    ) from exc
                self._runnables[schema] = entry
            return self._runnables[schema]

    def _result(self, out: Any, schema: type[T]) -> T:
        raw = None
        if self._structured(schema)[1] and isinstance(out, dict) and "parsed" in out:
            raw, error, out = out.get("raw"), out.get("parsing_error"), out.get("parsed")
            if error is not None:
                raise MalformedOutputError(str(error)[:500], _raw_text(raw))
        return as_schema(out, schema, _raw_text(raw))

    def _call(self, messages: list[ChatMessage], schema: type[T]) -> Any:
        return self._structured(schema)[0].invoke(_to_langchain(messages), config={"tags": ["toolret"]})

    def _acall(self, messages: list[ChatMessage], schema: type[T]) -> Awaitable[Any]:
        return self._structured(schema)[0].ainvoke(_to_langchain(messages), config={"tags": ["toolret"]})


def as_toolret_llm(llm: Any) -> Any:
    """A LangChain chat model wrapped in :class:`ChatModelLLM`; a toolret LLM (or None) as is."""
    if isinstance(llm, BaseChatModel):
        return ChatModelLLM(llm)
    return llm


def resolve_chat_model(model: Any) -> Any:
    """``model=`` as LangChain's ``LLMToolSelectorMiddleware`` takes it: a ``"provider:model"``
    string goes through LangChain's own ``init_chat_model`` (the provider package must be
    installed, as there); a chat model, a toolret LLM or None is returned as it is."""
    if isinstance(model, str):
        from langchain.chat_models import init_chat_model

        return init_chat_model(model)
    return model
