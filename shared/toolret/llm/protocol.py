"""The one small interface every LLM step of toolret goes through.

An LLM step (query planning, profile expansion, reranking) asks a model for structured output
and must never hang or crash a search: a slow, down or confused model degrades that step to
its offline path. So the engine talks to models through :class:`LLM` — ``generate`` /
``agenerate`` a pydantic model from chat messages under a timeout — and always via
:func:`structured_call` / :func:`astructured_call`, which bound the time, retry malformed
output with the validation error fed back to the model, and turn every failure into one
:class:`LLMError`.

Implementations: :class:`toolret.llm.openai_client.OpenAICompatibleLLM` (OpenAI, vLLM, Ollama,
LM Studio, llama-cpp-python's server…) and :class:`toolret.llm.testing.ScriptedLLM`, a
deterministic test double for testing code that uses toolret without a model.

Example:
    >>> from toolret.llm.testing import ScriptedLLM
    >>> class Answer(BaseModel):
    ...     city: str
    >>> llm = ScriptedLLM(['not json', '{"city": "Paris"}'])
    >>> structured_call(llm, [ChatMessage(role="user", content="Capital of France?")], Answer, timeout=1.0)
    Answer(city='Paris')
    >>> len(llm.calls), "did not match the schema" in llm.calls[1][-1].content
    (2, True)
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator, Sequence
from typing import Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from toolret.errors import ToolRetError

__all__ = [
    "LLM",
    "ChatMessage",
    "LLMError",
    "MalformedOutputError",
    "astructured_call",
    "parse_structured",
    "structured_call",
]

logger = logging.getLogger("toolret")

T = TypeVar("T", bound=BaseModel)

#: How much of a bad answer is echoed back to the model when asking it to fix its output.
_ECHO_CHARS = 2000


class ChatMessage(BaseModel):
    """One chat turn sent to a model."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class LLMError(ToolRetError):
    """An LLM step failed: timeout, transport error, or output that stayed malformed after retries."""


class MalformedOutputError(LLMError):
    """The model answered, but not with JSON matching the schema; ``raw`` is what it said."""

    def __init__(self, problem: str, raw: str | None = None, *, message: str | None = None) -> None:
        self.problem = problem
        self.raw = raw
        super().__init__(message or f"output did not match the schema: {problem}")


@runtime_checkable
class LLM(Protocol):
    """A chat model that returns structured output.

    ``generate`` must honour ``timeout`` (seconds) by raising :class:`TimeoutError` or
    :class:`LLMError`, and report output that does not fit ``schema`` by raising
    :class:`MalformedOutputError` (or pydantic's ``ValidationError``) so that callers can retry.
    """

    name: str

    def generate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T: ...

    async def agenerate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T: ...


_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "<root>"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def parse_structured(raw: str | None, schema: type[T]) -> T:
    """Validate a model's raw text answer into ``schema``.

    Small models often wrap JSON in a Markdown fence or add a sentence around it; the fence
    is stripped and, failing that, the outermost ``{...}`` is tried before giving up.

    >>> class Pair(BaseModel):
    ...     a: int
    >>> parse_structured('```json\\n{"a": 1}\\n```', Pair)
    Pair(a=1)
    """
    if raw is None or not raw.strip():
        raise MalformedOutputError("the answer was empty", raw)
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end and (start > 0 or end < len(text) - 1):
            try:
                return schema.model_validate_json(text[start : end + 1])
            except ValidationError:
                pass
        raise MalformedOutputError(_describe(exc), raw) from exc


def _feedback(raw: str | None, problem: str) -> list[ChatMessage]:
    fix = f"Your output did not match the schema: {problem}\nAnswer again with only one JSON object that matches it."
    echo = [ChatMessage(role="assistant", content=raw[:_ECHO_CHARS])] if raw else []
    return [*echo, ChatMessage(role="user", content=fix)]


def _malformed(exc: BaseException) -> MalformedOutputError | None:
    if isinstance(exc, MalformedOutputError):
        return exc
    if isinstance(exc, ValidationError):
        return MalformedOutputError(_describe(exc))
    if isinstance(exc, json.JSONDecodeError):
        return MalformedOutputError(str(exc))
    return None


def _as_llm_error(exc: BaseException, name: str, timeout: float) -> LLMError:
    if isinstance(exc, LLMError):
        return exc
    import asyncio  # here, not at the top: a search without an LLM never loads asyncio (cold start)

    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return LLMError(f"{name}: no answer within {timeout:g}s")
    return LLMError(f"{name}: {type(exc).__name__}: {exc}")


class _Attempts:
    """The retry loop shared by the sync and async calls: deadline, feedback, final error."""

    def __init__(self, llm: LLM, messages: Sequence[ChatMessage], schema: type[BaseModel], timeout: float) -> None:
        self.name = getattr(llm, "name", type(llm).__name__)
        self.messages, self.schema, self.timeout = list(messages), schema, timeout
        self.deadline = time.monotonic() + timeout
        self.convo = list(messages)
        self.problem = "no attempt made"
        self.raw: str | None = None

    def turns(self, retries: int) -> Iterator[tuple[list[ChatMessage], float]]:
        for attempt in range(retries + 1):
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise LLMError(
                    f"{self.name}: no valid answer within {self.timeout:g}s ({attempt} attempt(s)): {self.problem}"
                )
            yield self.convo, remaining
        raise MalformedOutputError(
            self.problem,
            self.raw,
            message=f"{self.name}: output did not match {self.schema.__name__} after {retries + 1} attempt(s): "
            f"{self.problem}",
        )

    def failed(self, exc: Exception) -> None:
        """Prepare the next attempt after malformed output; raise :class:`LLMError` for anything else."""
        bad = _malformed(exc)
        if bad is None:
            raise _as_llm_error(exc, self.name, self.timeout) from exc
        self.problem, self.raw = bad.problem, bad.raw
        logger.debug("%s: malformed output: %s", self.name, bad.problem)
        self.convo = [*self.messages, *_feedback(bad.raw, bad.problem)]


def structured_call(
    llm: LLM, messages: Sequence[ChatMessage], schema: type[T], *, timeout: float = 10.0, retries: int = 2
) -> T:
    """Ask ``llm`` for a ``schema`` instance; retry malformed output, raise :class:`LLMError` otherwise
    (:class:`MalformedOutputError`, with the last answer as ``raw``, when every attempt was malformed).

    ``timeout`` bounds the whole call, retries included, so a search's latency stays bounded.
    A malformed answer is retried at most ``retries`` times, each time with the bad answer and
    the validation error appended to ``messages``; timeouts and transport errors are not retried.
    """
    run = _Attempts(llm, messages, schema, timeout)
    for convo, remaining in run.turns(retries):
        try:
            return llm.generate(convo, schema, timeout=remaining)
        except Exception as exc:  # noqa: BLE001
            run.failed(exc)
    raise AssertionError("unreachable")  # pragma: no cover - turns() raises when attempts run out


async def astructured_call(
    llm: LLM, messages: Sequence[ChatMessage], schema: type[T], *, timeout: float = 10.0, retries: int = 2
) -> T:
    """Async twin of :func:`structured_call`; the timeout is enforced with :func:`asyncio.wait_for`."""
    import asyncio

    run = _Attempts(llm, messages, schema, timeout)
    for convo, remaining in run.turns(retries):
        try:
            return await asyncio.wait_for(llm.agenerate(convo, schema, timeout=remaining), remaining)
        except Exception as exc:  # noqa: BLE001
            run.failed(exc)
    raise AssertionError("unreachable")  # pragma: no cover - turns() raises when attempts run out
