"""The condensed card type and its schema check: what the agent reads about a tool, and whether an
example call fits the tool's real parameters.

Shared by the offline card (:mod:`toolret.cards.offline`) and the LLM card writer
(:mod:`toolret.cards.card`); neither imports the other.

Example:
    >>> from toolret.documents.tool_doc import ToolDoc, ToolParam
    >>> doc = ToolDoc(name="get_weather", description="Weather now for a city.",
    ...               parameters=[ToolParam(name="city", type="string", required=True)])
    >>> card = CondensedCard(description="Weather now.", example=ExampleCall(name="get_weather", arguments={"city": 3}))
    >>> card_problems(card, doc)
    ["argument 'city' should be string, got int"]
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolret.documents.tool_doc import ToolDoc

__all__ = ["CondensedCard", "ExampleCall", "card_problems", "tokens", "type_ok"]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
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
        return "\n".join(
            p
            for p in (
                self.description,
                f"Usage: {self.usage}" if usage and self.usage else "",
                f"Example: {call}" if example else "",
            )
            if p
        )


def type_ok(value: Any, type_name: str) -> bool:
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
        elif not type_ok(value, params[arg].type):
            problems.append(f"argument {arg!r} should be {params[arg].type}, got {type(value).__name__}")
    missing = [p.name for p in doc.required_params if p.name not in card.example.arguments]
    if missing:
        problems.append(f"example lacks required argument(s) {', '.join(missing)}")
    return problems
