"""A scripted chat model for offline examples and tests of agents that use toolret.

Unlike ``GenericFakeChatModel`` it can ``bind_tools`` (as a provider does, ``convert_to_openai_tool``)
and records the tool definitions every call received, so a test sees which tools the model was offered.

Example:
    >>> from langchain_core.tools import tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> model = ScriptedChatModel(replies=[tool_call("add", a=1, b=2), "3"])
    >>> model.bind_tools([add]).invoke("1 + 2?").tool_calls[0]["name"]
    'add'
    >>> model.calls[0].tool_names
    ['add']
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

__all__ = ["ModelCall", "Reply", "ScriptedChatModel", "tool_call"]

_ids = itertools.count(1)


def tool_call(name: str, **args: Any) -> AIMessage:
    """An assistant message that calls tool ``name`` with ``args``."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{next(_ids)}"}])


@dataclass
class ModelCall:
    """One call the model received: the conversation and the tool definitions bound to it."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]] = field(default_factory=list)

    @property
    def tool_names(self) -> list[str]:
        return [t.get("function", t).get("name", "") for t in self.tools]


#: A scripted answer: a message, its text, an exception to raise, or a function of the call
#: (``lambda call: ...``) returning a message or text — e.g. to call a tool that was bound.
Reply = AIMessage | str | BaseException | Callable[[ModelCall], "AIMessage | str"]


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from ``replies`` in order, then ``default`` (a text, or a function of
    the call: a scripted policy), and records every :class:`ModelCall`; ``structured(answers)`` builds one
    for ``with_structured_output``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    replies: list[Any] = Field(default_factory=list)
    default: Any = "Done."
    calls: list[ModelCall] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def structured(cls, answers: Sequence[dict[str, Any] | str | BaseException]) -> ScriptedChatModel:
        """A model for ``with_structured_output``: each dict is returned as the structured
        answer (as a call of the schema's tool), a string is answered as plain text (no
        structured output), an exception is raised."""

        def as_reply(answer: dict[str, Any] | str | BaseException) -> Reply:
            if not isinstance(answer, dict):
                return answer

            def reply(call: ModelCall) -> AIMessage:
                name = call.tool_names[0] if call.tools else "output"
                return AIMessage(content="", tool_calls=[{"name": name, "args": answer, "id": f"call_{next(_ids)}"}])

            return reply

        return cls(replies=[as_reply(a) for a in answers])

    @property
    def _llm_type(self) -> str:
        return "toolret-scripted"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Runnable[Any, AIMessage]:
        definitions = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=definitions, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        call = ModelCall(messages=list(messages), tools=list(kwargs.get("tools") or []))
        with self._lock:
            index = len(self.calls)
            self.calls.append(call)
        reply: Any = self.replies[index] if index < len(self.replies) else self.default
        if isinstance(reply, BaseException) or (isinstance(reply, type) and issubclass(reply, BaseException)):
            raise reply
        if callable(reply):
            reply = reply(call)
        message = AIMessage(content=reply) if isinstance(reply, str) else reply
        return ChatResult(generations=[ChatGeneration(message=message)])
