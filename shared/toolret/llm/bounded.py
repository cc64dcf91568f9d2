"""A framework's model as an :class:`~toolret.llm.protocol.LLM`: the deadline and the error contract, once.

The adapters wrap the model a user already configured (a LangChain chat model, a LlamaIndex
``LLM``) so the engine's LLM steps can use it. Such a model has no per-call deadline, answers in
its framework's shapes and fails with its framework's exceptions; the engine's contract
(:mod:`toolret.llm.protocol`) is a pydantic model within ``timeout`` seconds, else
:class:`TimeoutError`, :class:`~toolret.llm.protocol.MalformedOutputError` (retried with
feedback) or :class:`~toolret.llm.protocol.LLMError`. Both wrappers
(``langchain_toolret.llm.ChatModelLLM``, ``llamaindex_toolret.llm.LlamaIndexLLM``) keep to it
through these helpers:

* :func:`call_within` runs a blocking call in a daemon thread and gives up after ``timeout``
  (the call cannot be cancelled; its late answer is dropped);
* :func:`await_within` cancels an async call after ``timeout``;
* :func:`as_schema` validates what the model returned against the step's schema;
* :func:`llm_failure` turns anything else into the engine's errors;
* :class:`BoundedLLM` is a wrapper's base: ``generate``/``agenerate`` through the four, given the
  framework's blocking and awaitable calls.

Example:
    >>> class City(BaseModel):
    ...     name: str
    >>> as_schema({"name": "Paris"}, City)
    City(name='Paris')
    >>> call_within(lambda: City(name="Oslo"), 1.0, "demo", lambda exc: llm_failure(exc, "demo"))
    City(name='Oslo')
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from toolret.llm.protocol import LLMError, MalformedOutputError

__all__ = ["BoundedLLM", "as_schema", "await_within", "call_within", "llm_failure"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


def call_within(
    work: Callable[[], T], timeout: float, name: str, failure: Callable[[BaseException], BaseException]
) -> T:
    """``work()`` in a daemon thread; :class:`TimeoutError` after ``timeout`` seconds, ``failure(exc)`` on error."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["out"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name=f"toolret-llm-{name}"[:60], daemon=True)
    worker.start()
    worker.join(max(timeout, 0.0))
    if worker.is_alive():
        raise TimeoutError(f"{name}: no answer within {timeout:g}s")
    if "error" in box:
        raise failure(box["error"]) from box["error"]
    out: T = box["out"]
    return out


async def await_within(
    call: Awaitable[T], timeout: float, name: str, failure: Callable[[BaseException], BaseException]
) -> T:
    """``await call``, cancelled with :class:`TimeoutError` after ``timeout`` seconds; ``failure(exc)`` on error."""
    try:
        return await asyncio.wait_for(call, max(timeout, 0.0))
    except asyncio.TimeoutError:
        raise TimeoutError(f"{name}: no answer within {timeout:g}s") from None
    except Exception as exc:
        raise failure(exc) from exc


def as_schema(output: Any, schema: type[M], raw: str | None = None) -> M:
    """``output`` as ``schema`` (an equal model of another class, or a dict, is validated);
    :class:`MalformedOutputError` carrying the model's ``raw`` answer when it does not fit."""
    if output is None:
        raise MalformedOutputError("the model returned no structured output", raw)
    if isinstance(output, schema):
        return output
    try:
        return schema.model_validate(output.model_dump() if isinstance(output, BaseModel) else output)
    except ValidationError as exc:
        raise MalformedOutputError(str(exc.errors(include_url=False)[:3]), raw or str(output)[:2000]) from exc


def llm_failure(exc: BaseException, name: str, *, malformed: tuple[type[BaseException], ...] = ()) -> BaseException:
    """``exc`` as the engine's error: a timeout or an :class:`LLMError` as it is; a validation error,
    bad JSON or one of ``malformed`` (how a framework reports unparsable output) as
    :class:`MalformedOutputError`; anything else as :class:`LLMError` naming the model."""
    if isinstance(exc, (LLMError, TimeoutError, asyncio.TimeoutError)):
        return exc
    if isinstance(exc, ValidationError):
        return MalformedOutputError(str(exc.errors(include_url=False)[:3]))
    if isinstance(exc, (json.JSONDecodeError, *malformed)):
        return MalformedOutputError(f"{type(exc).__name__}: {exc}")
    return LLMError(f"{name}: {type(exc).__name__}: {exc}")


class BoundedLLM:
    """Base of a framework model's wrapper: :meth:`generate` and :meth:`agenerate` keep the engine's
    contract (:mod:`toolret.llm.protocol`) around the framework's own calls.

    A subclass sets :attr:`name` (it appears in the search trace and in errors), :attr:`malformed` (the
    exceptions its framework raises for unparsable output) and implements :meth:`_call` (blocking) and
    :meth:`_acall` (awaitable); :meth:`_result` turns the framework's answer into the schema.
    """

    name: str = "llm"
    #: How the framework reports output it could not parse (a :class:`MalformedOutputError`, retried).
    malformed: tuple[type[BaseException], ...] = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def _call(self, messages: list[Any], schema: type[M]) -> Any:
        raise NotImplementedError

    def _acall(self, messages: list[Any], schema: type[M]) -> Awaitable[Any]:
        raise NotImplementedError

    def _result(self, output: Any, schema: type[M]) -> M:
        return as_schema(output, schema)

    def _failure(self, exc: BaseException) -> BaseException:
        return llm_failure(exc, self.name, malformed=self.malformed)

    def generate(self, messages: list[Any], schema: type[M], *, timeout: float) -> M:
        """The framework's blocking call within ``timeout`` seconds (it cannot be cancelled: on timeout
        it is abandoned, its answer dropped, and :class:`TimeoutError` raised)."""
        out = call_within(lambda: self._call(messages, schema), timeout, self.name, self._failure)
        return self._result(out, schema)

    async def agenerate(self, messages: list[Any], schema: type[M], *, timeout: float) -> M:
        """The framework's async call, cancelled after ``timeout`` seconds."""
        out = await await_within(self._acall(messages, schema), timeout, self.name, self._failure)
        return self._result(out, schema)
