"""A framework's model within the engine's deadline and error contract (toolret.llm.bounded)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from pydantic import BaseModel

from toolret.llm import LLMError, MalformedOutputError
from toolret.llm.bounded import BoundedLLM, as_schema, await_within, call_within, llm_failure


class City(BaseModel):
    name: str


def _failure(exc: BaseException) -> BaseException:
    return llm_failure(exc, "demo")


def test_a_call_past_its_deadline_is_a_timeout_error():
    with pytest.raises(TimeoutError, match="demo: no answer within 0.05s"):
        call_within(lambda: time.sleep(2), 0.05, "demo", _failure)


def test_errors_become_the_engines():
    def boom() -> None:
        raise ConnectionError("refused")

    with pytest.raises(LLMError, match="demo: ConnectionError: refused"):
        call_within(boom, 1.0, "demo", _failure)
    assert isinstance(llm_failure(json.JSONDecodeError("bad", "x", 0), "demo"), MalformedOutputError)
    assert isinstance(llm_failure(ValueError("no tool call"), "demo", malformed=(ValueError,)), MalformedOutputError)
    timeout = TimeoutError("slow")
    assert llm_failure(timeout, "demo") is timeout


def test_output_is_validated_against_the_schema_with_the_raw_answer_kept():
    assert as_schema({"name": "Paris"}, City) == City(name="Paris")
    with pytest.raises(MalformedOutputError) as raised:
        as_schema({"town": "Paris"}, City, raw='{"town": "Paris"}')
    assert raised.value.raw == '{"town": "Paris"}'
    with pytest.raises(MalformedOutputError, match="no structured output"):
        as_schema(None, City)


async def test_an_async_call_is_cancelled_at_its_deadline():
    with pytest.raises(TimeoutError, match="no answer within"):
        await await_within(asyncio.sleep(2), 0.05, "demo", _failure)
    assert await await_within(asyncio.sleep(0, result=City(name="Oslo")), 1.0, "demo", _failure) == City(name="Oslo")


class _Framework(BoundedLLM):
    """A stand-in framework model: answers after ``delay`` seconds, or raises ``error``."""

    name = "framework:demo"
    malformed = (ValueError,)

    def __init__(self, answer: object = None, delay: float = 0.0, error: BaseException | None = None) -> None:
        self.answer, self.delay, self.error = answer, delay, error

    def _call(self, messages, schema):
        time.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self.answer

    async def _acall_impl(self):
        await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self.answer

    def _acall(self, messages, schema):
        return self._acall_impl()


async def test_a_wrapper_over_bounded_llm_keeps_the_engines_contract_on_both_paths():
    assert _Framework({"name": "Oslo"}).generate([], City, timeout=1) == City(name="Oslo")
    assert await _Framework({"name": "Oslo"}).agenerate([], City, timeout=1) == City(name="Oslo")
    with pytest.raises(TimeoutError, match="framework:demo"):
        _Framework(delay=2).generate([], City, timeout=0.05)
    with pytest.raises(TimeoutError):
        await _Framework(delay=2).agenerate([], City, timeout=0.05)
    with pytest.raises(MalformedOutputError):  # the framework's own "could not parse"
        await _Framework(error=ValueError("no JSON")).agenerate([], City, timeout=1)
    with pytest.raises(LLMError, match="framework:demo: ConnectionError"):
        _Framework(error=ConnectionError("refused")).generate([], City, timeout=1)
    with pytest.raises(MalformedOutputError):
        _Framework({"town": "Oslo"}).generate([], City, timeout=1)
    assert repr(_Framework()) == "_Framework('framework:demo')"
