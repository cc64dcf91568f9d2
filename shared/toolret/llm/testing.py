"""Test doubles for toolret's LLM steps: a scripted model, and fault injection.

:class:`ScriptedLLM` answers with scripted items and records every call, for testing code that
uses toolret without a model.

Fault injection proves that a flaky model never breaks retrieval.
A model in production times out, drops the connection, answers nothing, answers half a JSON
object, answers valid JSON that means nothing, invents tool names, or answers megabytes.
:class:`FaultInjectingLLM` does each of these on purpose, for the steps you choose, and passes
every other call to a real model (or a scripted one), so a test can check that each step falls
back and says so in the search trace (or, at indexing time, in the expansion report).

A step is recognised by the output schema it asks for (:data:`STEP_SCHEMAS`): query planning
(``plan``), reranking (``rerank``), the reflection coverage judge (``reflect``), document
expansion (``expand``), its faithfulness judge (``judge``) and condensed cards (``card``).
A new LLM step registers its schema's class name there.

Example:
    >>> from toolret import ToolKnowledgeBase
    >>> from toolret.config import RetrievalConfig
    >>> kb = ToolKnowledgeBase.from_tools([{"name": "get_weather", "description": "Weather for a city"},
    ...                                    {"name": "send_email", "description": "Send an e-mail"}])
    >>> kb.llm = FaultInjectingLLM(fault="malformed")            # every step gets broken JSON
    >>> cfg = RetrievalConfig.preset("full").with_(llm_timeout=1.0)
    >>> result = kb.search("weather in Paris", k=1, config=cfg)
    >>> result.ids, {s.stage: s.path for s in result.trace}["plan"]
    (['get_weather'], 'fallback')
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from toolret.llm.protocol import LLM, ChatMessage, LLMError, parse_structured

__all__ = ["FAULTS", "STEP_SCHEMAS", "Fault", "FaultInjectingLLM", "ScriptedLLM", "fault_answer", "step_of"]

T = TypeVar("T", bound=BaseModel)

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
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, type):
            raise item()
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


Fault = Literal["timeout", "error", "empty", "malformed", "nonsense", "hallucinated", "huge"]
#: Every fault, in the order of the fault-injection matrix (docs/security.md).
FAULTS: tuple[Fault, ...] = ("timeout", "error", "empty", "malformed", "nonsense", "hallucinated", "huge")

#: Output schema class name -> the LLM step that asks for it.
STEP_SCHEMAS: dict[str, str] = {
    "LLMPlan": "plan",
    "ListwiseRanking": "rerank",
    "PointwiseScores": "rerank",
    "CoverageJudgment": "reflect",
    "ExpansionOutput": "expand",
    "FaithfulnessVerdict": "judge",
    "CondensedCard": "card",
}

_NONSENSE = ["colorless green ideas sleep furiously", "☃ purple monkey dishwasher", "lorem ipsum dolor", "?!"]


def step_of(schema: type[BaseModel]) -> str:
    """The step name of an output schema (its class name when it is not a known step)."""
    return STEP_SCHEMAS.get(schema.__name__, schema.__name__)


def _fill(node: dict[str, Any], defs: dict[str, Any], fault: Fault, depth: int = 0) -> Any:
    """A value matching the JSON schema ``node`` whose content is junk of the kind ``fault`` asks for."""
    if "$ref" in node:
        node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in node.get(key, []) if o.get("type") != "null"]
        if options:
            return _fill(options[0], defs, fault, depth)
    kind = node.get("type")
    many = (20 if depth < 2 else 2) if fault == "huge" else 3  # huge: megabytes, not gigabytes
    if kind == "object" or "properties" in node:
        out = {name: _fill(sub, defs, fault, depth + 1) for name, sub in node.get("properties", {}).items()}
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and depth < 4:
            keys = [f"hallucinated_tool_{i}" if fault == "hallucinated" else str(9000 + i) for i in range(many)]
            out.update({key: _fill(extra, defs, fault, depth + 1) for key in keys})
        return out
    if kind == "array":
        return [_fill(node.get("items", {}), defs, fault, depth + 1) for _ in range(many if depth < 4 else 1)]
    if kind == "integer":
        return 9999
    if kind == "number":
        return 1e300 if fault == "huge" else -7.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if fault == "hallucinated":
        return f"hallucinated_tool_{depth}"
    if fault == "huge":
        return "x" * 50_000
    return _NONSENSE[depth % len(_NONSENSE)]


def fault_answer(fault: Fault, schema: type[BaseModel]) -> str:
    """The raw answer a model with ``fault`` gives for ``schema`` (timeouts and errors raise instead)."""
    import json

    if fault == "empty":
        return ""
    if fault == "malformed":
        first = next(iter(schema.model_json_schema().get("properties", {"x": 0})), "x")
        return '{"' + first + '": ["unterminated, '
    js = schema.model_json_schema()
    return json.dumps(_fill(js, js.get("$defs", {}), fault), ensure_ascii=False)


class FaultInjectingLLM:
    """An :class:`~toolret.llm.protocol.LLM` that breaks the steps you name and passes the rest through.

    ``faults`` maps a step (``"plan"``, ``"rerank"``, ``"reflect"``, ``"expand"``, ``"judge"``,
    ``"card"``) to a :data:`Fault`; ``fault`` applies to every step not in ``faults``. Calls
    without a fault go to ``inner`` (an error when there is none). ``timeout`` waits out the
    caller's timeout, then raises :class:`TimeoutError`, as a slow server behind a client with a
    timeout does; ``error`` raises :class:`ConnectionError`; the others answer text that goes
    through the same parsing as a real model's. ``calls`` records ``(step, fault or "ok",
    timeout)`` for every call, so a test can also check the time each step was allowed.
    """

    def __init__(
        self,
        inner: LLM | None = None,
        *,
        faults: Mapping[str, Fault] | None = None,
        fault: Fault | None = None,
        name: str = "fault-injecting",
    ) -> None:
        unknown = {f for f in [*(faults or {}).values(), fault] if f is not None and f not in FAULTS}
        if unknown:
            raise ValueError(f"unknown fault(s) {sorted(unknown)}; choose from {FAULTS}")
        self.inner, self.faults, self.default, self.name = inner, dict(faults or {}), fault, name
        self.calls: list[tuple[str, str, float]] = []

    def _fault(self, schema: type[BaseModel], timeout: float) -> Fault | None:
        step = step_of(schema)
        fault = self.faults.get(step, self.default)
        self.calls.append((step, fault or "ok", timeout))
        return fault

    def _raw(self, fault: Fault, schema: type[BaseModel], timeout: float) -> str:
        if fault == "error":
            raise ConnectionError(f"{self.name}: injected connection reset")
        if fault == "timeout":
            raise TimeoutError(f"{self.name}: injected: no answer within {timeout:g}s")
        return fault_answer(fault, schema)

    def generate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T:
        fault = self._fault(schema, timeout)
        if fault is None:
            if self.inner is None:
                raise LLMError(f"{self.name}: no fault for {step_of(schema)!r} and no inner model")
            return self.inner.generate(messages, schema, timeout=timeout)
        if fault == "timeout":
            time.sleep(max(0.0, timeout))
        return parse_structured(self._raw(fault, schema, timeout), schema)

    async def agenerate(self, messages: list[ChatMessage], schema: type[T], *, timeout: float) -> T:
        fault = self._fault(schema, timeout)
        if fault is None:
            if self.inner is None:
                raise LLMError(f"{self.name}: no fault for {step_of(schema)!r} and no inner model")
            return await self.inner.agenerate(messages, schema, timeout=timeout)
        if fault == "timeout":
            await asyncio.sleep(max(0.0, timeout))
        return parse_structured(self._raw(fault, schema, timeout), schema)
