"""The one small interface every LLM step of toolret goes through.

An LLM step (query planning, profile expansion, reranking) asks a model for structured output
and must never hang or crash a search: a slow, down or confused model degrades that step to
its offline path. So the engine talks to models through :class:`LLM` — ``generate`` /
``agenerate`` a pydantic model from chat messages under a timeout — and always via
:func:`structured_call` / :func:`astructured_call`, which bound the time, retry malformed
output with the validation error fed back to the model, and turn every failure into one
:class:`LLMError`.

Implementations: :class:`OpenAICompatibleLLM` (OpenAI, vLLM, Ollama, LM Studio,
llama-cpp-python's server…) and :class:`ScriptedLLM`, a deterministic test double for
testing code that uses toolret without a model.

Example:
    >>> class Answer(BaseModel):
    ...     city: str
    >>> llm = ScriptedLLM(['not json', '{"city": "Paris"}'])
    >>> structured_call(llm, [ChatMessage(role="user", content="Capital of France?")], Answer, timeout=1.0)
    Answer(city='Paris')
    >>> len(llm.calls), "did not match the schema" in llm.calls[1][-1].content
    (2, True)
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from toolret.errors import MissingDependencyError, ToolRetError

__all__ = [
    "LLM",
    "ChatMessage",
    "LLMError",
    "MalformedOutputError",
    "OpenAICompatibleLLM",
    "ScriptedLLM",
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

    def __init__(self, problem: str, raw: str | None = None) -> None:
        self.problem = problem
        self.raw = raw
        super().__init__(f"output did not match the schema: {problem}")


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

    def turns(self, retries: int) -> Iterator[tuple[list[ChatMessage], float]]:
        for attempt in range(retries + 1):
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise LLMError(f"{self.name}: no valid answer within {self.timeout:g}s ({attempt} attempt(s)): "
                               f"{self.problem}")
            yield self.convo, remaining
        raise LLMError(f"{self.name}: output did not match {self.schema.__name__} after {retries + 1} attempt(s): "
                       f"{self.problem}")

    def failed(self, exc: Exception) -> None:
        """Prepare the next attempt after malformed output; raise :class:`LLMError` for anything else."""
        bad = _malformed(exc)
        if bad is None:
            raise _as_llm_error(exc, self.name, self.timeout) from exc
        self.problem = bad.problem
        logger.debug("%s: malformed output: %s", self.name, bad.problem)
        self.convo = [*self.messages, *_feedback(bad.raw, bad.problem)]


def structured_call(
    llm: LLM, messages: Sequence[ChatMessage], schema: type[T], *, timeout: float = 10.0, retries: int = 2
) -> T:
    """Ask ``llm`` for a ``schema`` instance; retry malformed output, raise :class:`LLMError` otherwise.

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
    run = _Attempts(llm, messages, schema, timeout)
    for convo, remaining in run.turns(retries):
        try:
            return await asyncio.wait_for(llm.agenerate(convo, schema, timeout=remaining), remaining)
        except Exception as exc:  # noqa: BLE001
            run.failed(exc)
    raise AssertionError("unreachable")  # pragma: no cover - turns() raises when attempts run out


ScriptItem = str | BaseException | type[BaseException] | Callable[[list[ChatMessage]], str]


class ScriptedLLM:
    """A deterministic model for tests: answers with the next scripted item, records every call.

    Each item is a raw answer (parsed into the schema like a real model's), an exception (raised),
    or a function of the messages returning the raw answer. ``delay_s`` simulates a slow model
    that honours its timeout: a call with ``timeout < delay_s`` raises :class:`TimeoutError`.

    >>> class Yes(BaseModel):
    ...     ok: bool
    >>> ScriptedLLM(['{"ok": true}']).generate([], Yes, timeout=1.0)
    Yes(ok=True)
    """

    def __init__(self, responses: Sequence[ScriptItem], *, delay_s: float = 0.0, name: str = "scripted") -> None:
        self.responses: list[ScriptItem] = list(responses)
        self.delay_s = delay_s
        self.name = name
        self.calls: list[list[ChatMessage]] = []

    def _start(self, messages: list[ChatMessage], timeout: float) -> tuple[int, float]:
        """Record the call; return its index and how long to wait (raise after it if timing out)."""
        self.calls.append(list(messages))
        return len(self.calls) - 1, min(self.delay_s, max(timeout, 0.0))

    def _answer(self, index: int, messages: list[ChatMessage], schema: type[T], timeout: float) -> T:
        if self.delay_s > timeout:
            raise TimeoutError(f"{self.name}: simulated delay {self.delay_s:g}s exceeds timeout {timeout:g}s")
        if index >= len(self.responses):
            raise LLMError(f"{self.name}: script exhausted at call {index + 1} ({len(self.responses)} scripted)")
        item = self.responses[index]
        if isinstance(item, BaseException) or (isinstance(item, type) and issubclass(item, BaseException)):
            raise item
        raw = item if isinstance(item, str) else item(messages)
        return parse_structured(raw, schema)

    def generate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T:
        index, wait = self._start(messages, timeout)
        if wait:
            time.sleep(wait)
        return self._answer(index, messages, schema, timeout)

    async def agenerate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T:
        index, wait = self._start(messages, timeout)
        if wait:
            await asyncio.sleep(wait)
        return self._answer(index, messages, schema, timeout)


def _schema_name(schema: type[BaseModel]) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", schema.__name__)[:64] or "output"


class OpenAICompatibleLLM:
    """Any server speaking OpenAI's chat-completions API: OpenAI, vLLM, Ollama, LM Studio…

    Asks for ``json_schema`` structured output; a server that rejects it (HTTP 400 or 422, or
    any error naming ``response_format``: llama-cpp-python's server answers 500) is asked once
    more with ``json_object``, the schema both in the format's ``schema`` field (constrained
    decoding on llama-cpp-python's server) and spelled out in a system message, and that
    choice is remembered. ``api_key`` defaults to ``$OPENAI_API_KEY``, else a placeholder that
    local servers accept. The ``openai`` package is imported on first use.

    Example (no request is sent until ``generate``)::

        llm = OpenAICompatibleLLM("qwen2.5:3b", base_url="http://localhost:11434/v1")
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        client: Any = None,
        async_client: Any = None,
        max_retries: int = 1,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.name = f"openai-compatible:{model}"
        self._client = client
        self._async_client = async_client
        self.json_schema_supported = True

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM(model={self.model!r}, base_url={self.base_url!r})"

    @staticmethod
    def _openai() -> Any:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a core dependency
            raise MissingDependencyError("openai", purpose="OpenAI-compatible LLM steps") from exc
        return openai

    def _sync(self) -> Any:
        if self._client is None:
            openai = self._openai()
            self._client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=self.max_retries)
        return self._client

    def _async(self) -> Any:
        if self._async_client is None:
            self._async_client = self._openai().AsyncOpenAI(
                base_url=self.base_url, api_key=self.api_key, max_retries=self.max_retries
            )
        return self._async_client

    def _request(self, messages: list[ChatMessage], schema: type[BaseModel], timeout: float) -> dict[str, Any]:
        sent = [m.model_dump() for m in messages]
        if self.json_schema_supported:
            fmt: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(schema), "schema": schema.model_json_schema(), "strict": False},
            }
        else:
            # "schema" beside json_object is llama-cpp-python's (and Anyscale's) way to ask for
            # schema-constrained decoding; servers without it ignore the extra key.
            fmt = {"type": "json_object", "schema": schema.model_json_schema()}
            spec = json.dumps(schema.model_json_schema(), separators=(",", ":"))
            note = f"Reply with one JSON object matching this JSON schema: {spec}"
            # Many chat templates accept a system message only in first position.
            if sent and sent[0]["role"] == "system":
                sent[0] = {"role": "system", "content": f"{sent[0]['content']}\n\n{note}"}
            else:
                sent.insert(0, {"role": "system", "content": note})
        return {
            "model": self.model,
            "messages": sent,
            "response_format": fmt,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": timeout,
        }

    def _error(self, exc: Exception, timeout: float) -> LLMError:
        openai = self._openai()
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(f"{self.name}: no answer within {timeout:g}s")
        return LLMError(f"{self.name}: {type(exc).__name__}: {exc}")

    @staticmethod
    def _content(response: Any) -> str | None:
        choices = getattr(response, "choices", None)
        if not choices:
            return None
        return choices[0].message.content

    def _downgrade(self, exc: Exception) -> None:
        """Switch to ``json_object`` after the server refused ``json_schema``; re-raise anything else."""
        openai = self._openai()
        refused = isinstance(exc, (openai.BadRequestError, openai.UnprocessableEntityError)) or (
            "response_format" in str(exc)
        )
        if not self.json_schema_supported or not refused:
            raise exc
        logger.info("%s rejected json_schema output; using json_object", self.name)
        self.json_schema_supported = False

    def generate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T:
        openai, client = self._openai(), self._sync()
        try:
            try:
                response = client.chat.completions.create(**self._request(messages, schema, timeout))
            except openai.APIStatusError as exc:
                self._downgrade(exc)
                response = client.chat.completions.create(**self._request(messages, schema, timeout))
        except openai.OpenAIError as exc:
            raise self._error(exc, timeout) from exc
        return parse_structured(self._content(response), schema)

    async def agenerate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T:
        openai, client = self._openai(), self._async()
        try:
            try:
                response = await client.chat.completions.create(**self._request(messages, schema, timeout))
            except openai.APIStatusError as exc:
                self._downgrade(exc)
                response = await client.chat.completions.create(**self._request(messages, schema, timeout))
        except openai.OpenAIError as exc:
            raise self._error(exc, timeout) from exc
        return parse_structured(self._content(response), schema)
