"""The offline condensed card: a tool's card without a model.

Kept apart from :mod:`toolret.cards.card` (the LLM card writer) so that indexing can give every
tool an offline card without importing any LLM machinery; the card type is
:mod:`toolret.cards.card_type`.

Example:
    >>> from toolret.documents.tool_doc import ToolDoc, ToolParam
    >>> doc = ToolDoc(name="get_weather", description="Weather now for a city. Backed by METAR.",
    ...               parameters=[ToolParam(name="city", type="string", required=True)])
    >>> offline_card(doc).usage
    'call get_weather with city (string).'
"""

from __future__ import annotations

from typing import Any

from toolret.cards.card_type import CondensedCard, ExampleCall, type_ok
from toolret.documents.text import first_sentence, humanize_name
from toolret.documents.tool_doc import ToolDoc

__all__ = ["offline_card"]


def _placeholder(param: Any) -> Any:
    if param.enum and type_ok(param.enum[0], param.type):
        return param.enum[0]
    if param.default is not None and type_ok(param.default, param.type):
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
