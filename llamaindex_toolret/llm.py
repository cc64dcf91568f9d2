"""A LlamaIndex ``LLM`` as toolret's :class:`toolret.llm.LLM`, for the LLM steps of a search.

Users of LlamaIndex already hold a configured model (``OpenAI``, ``Ollama``, ``Anthropic``,
a ``CustomLLM``...). :class:`LlamaIndexLLM` lets the ``full`` preset plan, rerank and reflect
with it: each step asks for a pydantic model through LlamaIndex's own
``structured_predict`` / ``astructured_predict`` (function calling where the model supports
it, a JSON output parser otherwise).

Contract with the engine (see :mod:`toolret.llm`): the call is bounded by ``timeout``
(:class:`TimeoutError`); output that does not fit the schema raises
:class:`~toolret.llm.MalformedOutputError` so :func:`~toolret.llm.structured_call` can retry
with feedback; anything else the model or its client raises becomes
:class:`~toolret.llm.LLMError`. Message text goes to the model verbatim: LlamaIndex's prompt
formatter substitutes only the variables it is given, and none are given, so braces in tool
descriptions are data, never template slots.

Example::

    from llama_index.llms.openai import OpenAI
    kb = ToolKnowledgeBase(llm=LlamaIndexLLM(OpenAI(model="gpt-4o-mini")), config="full")
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, TypeVar

from llama_index.core.base.llms.types import ChatMessage as LIChatMessage
from llama_index.core.base.llms.types import MessageRole
from llama_index.core.llms import LLM as LlamaIndexBaseLLM
from llama_index.core.prompts import ChatPromptTemplate
from pydantic import BaseModel, ValidationError

from toolret.errors import ConfigError
from toolret.llm import ChatMessage, LLMError, MalformedOutputError

__all__ = ["LlamaIndexLLM"]

T = TypeVar("T", bound=BaseModel)

_ROLES = {"system": MessageRole.SYSTEM, "user": MessageRole.USER, "assistant": MessageRole.ASSISTANT}


class LlamaIndexLLM:
    """Wrap a LlamaIndex ``LLM`` so toolret's LLM steps can use it.

    ``name`` defaults to ``llamaindex:<class>:<model>`` and appears in the search trace.
    """

    def __init__(self, llm: LlamaIndexBaseLLM, *, name: str | None = None) -> None:
        if not isinstance(llm, LlamaIndexBaseLLM):
            raise ConfigError(f"LlamaIndexLLM wraps a llama_index.core.llms.LLM, got {type(llm).__name__}")
        self.llm = llm
        model = getattr(llm.metadata, "model_name", "") or ""
        known = model and model != "unknown"  # LLMMetadata's placeholder
        self.name = name or f"llamaindex:{llm.class_name()}" + (f":{model}" if known else "")

    def __repr__(self) -> str:
        return f"LlamaIndexLLM({self.name!r})"

    @staticmethod
    def _prompt(messages: list[ChatMessage]) -> ChatPromptTemplate:
        converted = [LIChatMessage(role=_ROLES[m.role], content=m.content) for m in messages]
        return ChatPromptTemplate(message_templates=converted)

    def _failure(self, exc: BaseException) -> Exception:
        if isinstance(exc, (LLMError, TimeoutError, asyncio.TimeoutError)):
            return exc
        if isinstance(exc, ValidationError):
            return MalformedOutputError(str(exc.errors(include_url=False)[:3]))
        # LlamaIndex's programs report unparsable or missing output as ValueError/TypeError
        # ("Could not extract json string", "expected at least one tool call", ...).
        if isinstance(exc, (ValueError, TypeError, json.JSONDecodeError)):
            return MalformedOutputError(f"{type(exc).__name__}: {exc}")
        return LLMError(f"{self.name}: {type(exc).__name__}: {exc}")

    def _checked(self, output: Any, schema: type[T]) -> T:
        if isinstance(output, schema):
            return output
        if isinstance(output, BaseModel):  # a structurally equal model from another class
            return schema.model_validate(output.model_dump())
        raise MalformedOutputError(f"expected a {schema.__name__}, got {type(output).__name__}")

    def generate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T:
        """Run ``structured_predict`` in a worker thread and give up after ``timeout`` seconds.

        A sync LlamaIndex call cannot be cancelled; on timeout it is abandoned (its thread is
        a daemon and its answer is dropped) and :class:`TimeoutError` is raised.
        """
        prompt = self._prompt(messages)
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["out"] = self.llm.structured_predict(schema, prompt)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                box["err"] = exc

        worker = threading.Thread(target=work, name="toolret-llamaindex-llm", daemon=True)
        worker.start()
        worker.join(max(timeout, 0.0))
        if worker.is_alive():
            raise TimeoutError(f"{self.name}: no answer within {timeout:g}s")
        if "err" in box:
            raise self._failure(box["err"]) from box["err"]
        return self._checked(box["out"], schema)

    async def agenerate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T:
        """``astructured_predict`` under :func:`asyncio.wait_for` (cancelled on timeout)."""
        prompt = self._prompt(messages)
        try:
            output = await asyncio.wait_for(self.llm.astructured_predict(schema, prompt), max(timeout, 0.0))
        except asyncio.TimeoutError:
            raise TimeoutError(f"{self.name}: no answer within {timeout:g}s") from None
        except Exception as exc:
            raise self._failure(exc) from exc
        return self._checked(output, schema)
