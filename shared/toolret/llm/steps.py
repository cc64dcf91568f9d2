"""How a search's LLM steps treat their model: retries, a malformed answer, the deployment's instructions.

The planner, the reranker and the coverage judge each ask the model for structured output
(:func:`~toolret.llm.protocol.structured_call`). By default an answer that stays malformed
after the step's retries sends the step down its offline path (trace: ``fallback``), so the
search goes on. A deployment migrating from LangChain's ``LLMToolSelectorMiddleware`` expects
its ``max_retries`` / ``on_parsing_failure`` / ``system_prompt`` to govern the selection model;
:class:`LLMSteps` (``RetrievalConfig.llm_steps``) is where they land.

Example:
    >>> steps = LLMSteps(retries=3, on_malformed="raise")
    >>> steps.retries_or(1), LLMSteps().retries_or(1)
    (3, 1)
    >>> steps.reraise(MalformedOutputError("not JSON", raw="hello"))
    Traceback (most recent call last):
    ...
    toolret.llm.protocol.MalformedOutputError: output did not match the schema: not JSON
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolret.llm.protocol import ChatMessage, MalformedOutputError

__all__ = ["MAX_INSTRUCTIONS_CHARS", "LLMSteps"]

#: Longest ``selection_instructions`` (a system prompt, not a document).
MAX_INSTRUCTIONS_CHARS = 4_000


class LLMSteps(BaseModel):
    """Settings every LLM step of a search shares (``RetrievalConfig.llm_steps``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    retries: int | None = Field(
        default=None,
        ge=0,
        description="Retries of a step whose answer does not match its schema (the answer and the error are fed "
        "back each time); None: each step's own (planner 2, reranker 1, coverage judge 1).",
    )
    on_malformed: Literal["offline", "raise"] = Field(
        default="offline",
        description="A step whose answer is still malformed after its retries: 'offline' runs its offline path "
        "(trace: fallback); 'raise' raises MalformedOutputError (the last answer as .raw) out of the search.",
    )
    selection_instructions: str = Field(
        default="",
        max_length=MAX_INSTRUCTIONS_CHARS,
        description="The deployment's own instructions for the step that selects the tools (the LLM rerank), "
        "added to its system prompt.",
    )

    def retries_or(self, default: int) -> int:
        """The retries a step makes: :attr:`retries` when set, else the step's ``default``."""
        return default if self.retries is None else self.retries

    def reraise(self, exc: BaseException) -> None:
        """Raise ``exc`` again when it is a malformed answer and :attr:`on_malformed` is ``"raise"``."""
        if self.on_malformed == "raise" and isinstance(exc, MalformedOutputError):
            raise exc

    def instructed(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """``messages`` with :attr:`selection_instructions` added to the system message (first)."""
        if not self.selection_instructions.strip() or not messages or messages[0].role != "system":
            return messages
        system = f"{messages[0].content}\n\nThe application's own instructions:\n{self.selection_instructions.strip()}"
        return [ChatMessage(role="system", content=system), *messages[1:]]
