"""A LlamaIndex ``LLM`` as toolret's :class:`toolret.llm.LLM`, for the LLM steps of a search.

Each step asks for a pydantic model through ``structured_predict`` / ``astructured_predict``
(function calling where the model supports it, a JSON output parser otherwise); the deadline and
the error contract are the engine's (:class:`toolret.llm.bounded.BoundedLLM`). Message text goes to the model
verbatim: no template variables are given, so braces in tool descriptions are data.

Example::

    from llama_index.llms.openai import OpenAI
    kb = ToolKnowledgeBase(llm=LlamaIndexLLM(OpenAI(model="gpt-4o-mini")), config="full")
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from llama_index.core.base.llms.types import ChatMessage as LIChatMessage
from llama_index.core.base.llms.types import MessageRole
from llama_index.core.llms import LLM as LlamaIndexBaseLLM
from llama_index.core.prompts import ChatPromptTemplate
from pydantic import BaseModel

from toolret.errors import ConfigError
from toolret.llm import ChatMessage
from toolret.llm.bounded import BoundedLLM

__all__ = ["LlamaIndexLLM"]

T = TypeVar("T", bound=BaseModel)

_ROLES = {"system": MessageRole.SYSTEM, "user": MessageRole.USER, "assistant": MessageRole.ASSISTANT}


class LlamaIndexLLM(BoundedLLM):
    """Wrap a LlamaIndex ``LLM`` so toolret's LLM steps can use it.

    ``name`` defaults to ``llamaindex:<class>:<model>`` and appears in the search trace.
    """

    # LlamaIndex's programs report unparsable or missing output as ValueError/TypeError
    # ("Could not extract json string", "expected at least one tool call", ...).
    malformed = (ValueError, TypeError)

    def __init__(self, llm: LlamaIndexBaseLLM, *, name: str | None = None) -> None:
        if not isinstance(llm, LlamaIndexBaseLLM):
            raise ConfigError(f"LlamaIndexLLM wraps a llama_index.core.llms.LLM, got {type(llm).__name__}")
        self.llm = llm
        model = getattr(llm.metadata, "model_name", "") or ""
        known = model and model != "unknown"  # LLMMetadata's placeholder
        self.name = name or f"llamaindex:{llm.class_name()}" + (f":{model}" if known else "")

    @staticmethod
    def _prompt(messages: list[ChatMessage]) -> ChatPromptTemplate:
        converted = [LIChatMessage(role=_ROLES[m.role], content=m.content) for m in messages]
        return ChatPromptTemplate(message_templates=converted)

    def _call(self, messages: list[ChatMessage], schema: type[T]) -> Any:
        return self.llm.structured_predict(schema, self._prompt(messages))

    def _acall(self, messages: list[ChatMessage], schema: type[T]) -> Awaitable[Any]:
        return self.llm.astructured_predict(schema, self._prompt(messages))
