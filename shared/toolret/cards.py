"""Condensed tool cards: what the agent reads about a tool, in fewer tokens (EasyTool).

Retrieval needs rich documents; the agent that calls the tool needs a short, exact one. A
:class:`CondensedCard` holds a concise description (purpose, built-in functions, when to use),
a usage line and one example call. :class:`LLMCardWriter` asks a model for it (prompt
``CARD_V1``); :func:`offline_card` derives one without a model. Every card is checked by
:func:`card_problems` against the tool's real schema — the example must call this tool, use only
its parameter names, give every required one, with values of the declared JSON types — and an
invalid LLM card is retried once with the problems fed back, then replaced by the offline card.

Adapters hand the agent :func:`agent_description` (opt-in) instead of the raw description.
Token counts here are ``ceil(characters / 4)``: tokenizer-free, good enough to compare.

Example:
    >>> from toolret.documents import ToolDoc, ToolParam
    >>> doc = ToolDoc(name="get_weather", description="Weather now for a city. Backed by METAR.",
    ...               parameters=[ToolParam(name="city", type="string", required=True)])
    >>> card = offline_card(doc)
    >>> card.example.arguments, card_problems(card, doc)
    ({'city': '<city>'}, [])
    >>> print(card.text())
    Weather now for a city.
    Usage: call get_weather with city (string).
    Example: get_weather({"city": "<city>"})
    >>> agent_description(doc.model_copy(update={"expansion": doc.expansion.model_copy(
    ...     update={"card": card.model_dump()})}))
    'Weather now for a city.'
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolret.documents import ToolDoc
from toolret.expansion import ExpansionCache, first_sentence
from toolret.llm import LLM, ChatMessage, astructured_call
from toolret.prompts import CARD_V1, render
from toolret.text import humanize_name

__all__ = ["CondensedCard", "ExampleCall", "LLMCardWriter", "agent_description", "card_problems",
           "offline_card", "tokens"]

logger = logging.getLogger("toolret")

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list, tuple), "object": (dict,), "null": (type(None),),
}


def tokens(text: str) -> int:
    """Tokenizer-free token estimate: ``ceil(len(text) / 4)``."""
    return math.ceil(len(text) / 4)


class ExampleCall(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class CondensedCard(BaseModel):
    """A short agent-facing description of one tool, with one example call."""

    model_config = ConfigDict(extra="ignore")

    description: str
    usage: str = ""
    example: ExampleCall
    source: str = "offline"

    def text(self, *, usage: bool = True, example: bool = True) -> str:
        call = f"{self.example.name}({json.dumps(self.example.arguments, ensure_ascii=False)})"
        return "\n".join(p for p in (self.description, f"Usage: {self.usage}" if usage and self.usage else "",
                                     f"Example: {call}" if example else "") if p)


def _type_ok(value: Any, type_name: str) -> bool:
    names = [t.strip() for t in type_name.replace("|", ",").split(",") if t.strip()]
    if not names or "any" in names or any(n not in _JSON_TYPES for n in names):
        return True  # unknown or free type: nothing to check
    if isinstance(value, bool):
        return "boolean" in names
    return any(isinstance(value, _JSON_TYPES[n]) for n in names)


def card_problems(card: CondensedCard, doc: ToolDoc) -> list[str]:
    """What is wrong with ``card`` for ``doc``: empty list when the example fits the real schema."""
    problems: list[str] = []
    if not card.description.strip():
        problems.append("description is empty")
    if card.example.name != doc.name:
        problems.append(f"example calls {card.example.name!r}, not {doc.name!r}")
    params = {p.name: p for p in doc.parameters}
    for arg, value in card.example.arguments.items():
        if arg not in params:
            problems.append(f"example uses unknown argument {arg!r}")
        elif not _type_ok(value, params[arg].type):
            problems.append(f"argument {arg!r} should be {params[arg].type}, got {type(value).__name__}")
    missing = [p.name for p in doc.required_params if p.name not in card.example.arguments]
    if missing:
        problems.append(f"example lacks required argument(s) {', '.join(missing)}")
    return problems


def _placeholder(param: Any) -> Any:
    if param.enum and _type_ok(param.enum[0], param.type):
        return param.enum[0]
    if param.default is not None and _type_ok(param.default, param.type):
        return param.default  # a schema's default can contradict its own type: then it is not used
    return {"integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}.get(param.type, f"<{param.name}>")


def offline_card(doc: ToolDoc) -> CondensedCard:
    """A card without a model: the first sentence, the required arguments, a typed example call."""
    description = first_sentence(doc.description, max_words=40) or humanize_name(doc.name)
    required = doc.required_params
    if required:
        usage = f"call {doc.name} with " + ", ".join(f"{p.name} ({p.type})" for p in required) + "."
    else:
        usage = f"call {doc.name}" + (" (all arguments optional)." if doc.parameters else " with no arguments.")
    example = ExampleCall(name=doc.name, arguments={p.name: _placeholder(p) for p in required})
    return CondensedCard(description=description, usage=usage, example=example, source="offline")


def agent_description(doc: ToolDoc, *, condensed: bool = True, example: bool | None = None) -> str:
    """The text an agent gets for ``doc``: its card when ``condensed`` and it has one, else the description.

    An LLM card gives description, usage and example call; an offline card only its description
    (the first sentence): its usage line and example restate the parameter schema the agent
    already gets, so they would cost tokens without adding anything. ``example`` overrides that.
    """
    if condensed and doc.expansion.card:
        try:
            card = CondensedCard.model_validate(doc.expansion.card)
        except ValueError:
            logger.warning("stored card of %r is invalid; using the raw description", doc.name)
            return doc.description
        from_llm = card.source != "offline"
        return card.text(usage=from_llm, example=from_llm if example is None else example)
    return doc.description


class LLMCardWriter:
    """Write condensed cards with an LLM; validated against the schema, cached like expansions."""

    def __init__(self, llm: LLM, *, cache: ExpansionCache | None = None, concurrency: int = 4,
                 timeout: float = 60.0, retries: int = 1) -> None:
        self.llm, self.cache = llm, cache or ExpansionCache()
        self.concurrency, self.timeout, self.retries = max(1, concurrency), timeout, retries
        self.model = str(getattr(llm, "name", type(llm).__name__))
        self.calls = 0

    def write(self, docs: Sequence[ToolDoc]) -> list[ToolDoc]:
        """Copies of ``docs`` with ``expansion.card`` set (an LLM card if valid, else the offline card)."""
        return asyncio.run(self.awrite(docs))

    async def awrite(self, docs: Sequence[ToolDoc]) -> list[ToolDoc]:
        sem = asyncio.Semaphore(self.concurrency)

        async def one(doc: ToolDoc) -> ToolDoc:
            async with sem:
                card = await self._card(doc)
            return doc.model_copy(update={"expansion": doc.expansion.model_copy(update={"card": card.model_dump()})})

        return list(await asyncio.gather(*(one(d) for d in docs)))

    async def _card(self, doc: ToolDoc) -> CondensedCard:
        key = ExpansionCache.key(doc, self.model, CARD_V1.id)
        cached = self.cache.get(key)
        if cached is not None:
            return CondensedCard.model_validate(cached)
        messages = render(CARD_V1, tool=doc.card())
        card: CondensedCard | None = None
        for _attempt in range(2):
            try:
                self.calls += 1
                out = await astructured_call(self.llm, messages, CondensedCard, timeout=self.timeout,
                                             retries=self.retries)
            except Exception as exc:  # noqa: BLE001 - a failed card falls back to the offline one
                logger.warning("card for %r failed: %s", doc.name, exc)
                break
            problems = card_problems(out, doc)
            if not problems:
                card = out.model_copy(update={"source": f"llm:{self.model}:{CARD_V1.id}"})
                break
            messages = [*messages, ChatMessage(role="assistant", content=out.model_dump_json()),
                        ChatMessage(role="user", content="That card does not fit the tool's schema: "
                                    + "; ".join(problems) + ". Answer again with the JSON object only.")]
        card = card or offline_card(doc)
        self.cache.put(key, card.model_dump())
        return card
