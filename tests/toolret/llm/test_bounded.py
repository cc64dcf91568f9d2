"""A framework's model within the engine's deadline and error contract (toolret.llm.bounded)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from pydantic import BaseModel

from toolret.llm import LLMError, MalformedOutputError
from toolret.llm.bounded import as_schema, await_within, call_within, llm_failure


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
