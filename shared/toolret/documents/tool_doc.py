"""Tool documents: every tool standardized into the MFTR fields.

A :class:`ToolDoc` is what toolret indexes and scores, whatever the tool came from
(OpenAI function specs, Python callables, benchmark records, ...). The fields follow the
multi-field tool retrieval (MFTR) schema: ``description``, ``parameters``, ``response``,
``examples``. Empty fields stay empty: nothing is invented at this stage.

Example:
    >>> doc = ToolDoc(
    ...     name="get_weather",
    ...     description="Current weather for a city.",
    ...     parameters=[ToolParam(name="location", type="string", required=True,
    ...                           description="City name")],
    ... )
    >>> doc.field_text("parameters")
    'location (string, required): City name'
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from toolret.documents.schema_text import readable_response
from toolret.documents.text import humanize_name
from toolret.errors import InvalidToolError

__all__ = [
    "EXPANSION_FIELDS",
    "FIELDS",
    "INDEX_FIELDS",
    "MAX_FIELD_CHARS",
    "MAX_INDEXED_TEXT",
    "FieldName",
    "ToolDoc",
    "ToolExpansion",
    "ToolParam",
    "cut_long_texts",
    "strict_text_limits",
]

logger = logging.getLogger("toolret")

FieldName = Literal["description", "parameters", "response", "examples", "profile", "questions", "topics"]
#: The MFTR fields of a tool's own documentation, in the order MFTR lists them.
FIELDS: tuple[FieldName, ...] = ("description", "parameters", "response", "examples")
#: Fields toolret derives from the documentation (:mod:`toolret.index.expansion`), each indexed on its own.
EXPANSION_FIELDS: tuple[FieldName, ...] = ("profile", "questions", "topics")
#: Every field with its own lexical and dense index.
INDEX_FIELDS: tuple[FieldName, ...] = FIELDS + EXPANSION_FIELDS

#: Largest text a single field may hold; longer input is a mistake, not documentation.
MAX_FIELD_CHARS = 100_000
#: Characters of a longer description or response that are indexed (the head is what retrieval reads).
MAX_INDEXED_TEXT = 10_000

_STRICT_TEXT: ContextVar[bool] = ContextVar("toolret_strict_text", default=False)


@contextmanager
def strict_text_limits() -> Iterator[None]:
    """Inside the block a text over :data:`MAX_FIELD_CHARS` is an :class:`InvalidToolError` naming the
    tool, instead of being cut with a warning (``toolret index --strict``: a registry whose owner wants
    every text indexed whole, or nothing)."""
    token = _STRICT_TEXT.set(True)
    try:
        yield
    finally:
        _STRICT_TEXT.reset(token)


def _over_long(value: str, tool: str, field: str) -> str:
    """One rule for every source (OpenAI dicts, MCP lists, OpenAPI, records, callables, framework tools):
    a text over :data:`MAX_FIELD_CHARS` is cut to its first :data:`MAX_INDEXED_TEXT` characters with a
    warning naming the tool, so one pasted manual never stops a whole registry from being indexed."""
    problem = f"its {field} is {len(value):,} characters long (limit {MAX_FIELD_CHARS:,})"
    if _STRICT_TEXT.get():
        raise ValueError(f"{problem}; shorten it (without --strict it is cut to {MAX_INDEXED_TEXT:,} characters)")
    logger.warning(
        "tool %r cannot be indexed as it is (%s); indexed with its %s cut to the first %d characters",
        tool[:200],
        problem,
        field,
        MAX_INDEXED_TEXT,
    )
    return value[:MAX_INDEXED_TEXT]


def cut_long_texts(doc: ToolDoc) -> ToolDoc:
    """``doc`` with every parameter text over :data:`MAX_FIELD_CHARS` cut by the rule of its description
    and response (:func:`_over_long`): a parameter's description, and any string of ``input_schema``
    (what the model is sent). A text the schema and a parameter share is warned about once. Under
    :func:`strict_text_limits` the first one is an :class:`InvalidToolError` naming the tool and where."""
    done: dict[str, str] = {}

    def cut(text: str, where: str) -> str:
        if len(text) <= MAX_FIELD_CHARS:
            return text
        if text not in done:
            try:
                done[text] = _over_long(text, doc.name, where)
            except ValueError as exc:
                raise InvalidToolError(doc.name[:200], where, str(exc)) from None
        return done[text]

    def walk(value: Any, path: str) -> Any:
        if isinstance(value, str):
            return cut(value, path)
        if isinstance(value, dict):
            return {key: walk(item, f"{path}.{key}") for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item, f"{path}[{i}]") for i, item in enumerate(value)]
        return value

    params = [
        p.model_copy(update={"description": cut(p.description, f"parameter {p.name!r} description")})
        if len(p.description) > MAX_FIELD_CHARS
        else p
        for p in doc.parameters
    ]
    schema = walk(doc.input_schema, "input_schema") if doc.input_schema else doc.input_schema
    return doc.model_copy(update={"parameters": params, "input_schema": schema}) if done else doc


class ToolParam(BaseModel):
    """One argument of a tool, as the model that calls the tool sees it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="Argument name as the tool expects it.")
    type: str = Field(default="any", description="JSON-schema type name, or 'any' when unknown.")
    required: bool = False
    description: str = ""
    enum: list[Any] | None = None
    default: Any = None

    @field_validator("name")
    @classmethod
    def _strip_name(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("parameter name is empty")
        return value

    @field_validator("default")
    @classmethod
    def _finite_default(cls, value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value

    def text(self) -> str:
        """The parameter as one line: ``location (string, required): City name``."""
        flags = [self.type, "required" if self.required else "optional"]
        if self.enum:
            flags.append("one of: " + ", ".join(str(v) for v in self.enum[:20]))
        line = f"{self.name} ({', '.join(flags)})"
        return f"{line}: {self.description}" if self.description else line


class ToolExpansion(BaseModel):
    """What toolret derived from a tool's documentation: never the documentation itself.

    ``function`` (under 20 words), ``tags`` (lowercase keywords), ``when_to_use`` and
    ``limitations`` form the *profile*; ``hypothetical_questions`` are requests the tool answers
    (indexed as field ``questions``), ``key_topics`` what tells it apart from similar tools
    (field ``topics``). ``inferred_response`` / ``inferred_examples`` stand in for a missing
    ``response`` / ``examples`` and are indexed there, marked by ``sources``. ``sources`` says
    where each value came from: ``offline:<rule>`` or ``llm:<model>:<prompt id>``.
    ``card`` is the condensed agent-facing description (:mod:`toolret.cards.card`), not indexed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    function: str = ""
    tags: list[str] = Field(default_factory=list)
    when_to_use: str = ""
    limitations: str = ""
    hypothetical_questions: list[str] = Field(default_factory=list)
    key_topics: list[str] = Field(default_factory=list)
    inferred_response: str = ""
    inferred_examples: list[str] = Field(default_factory=list)
    card: dict[str, Any] | None = None
    sources: dict[str, str] = Field(default_factory=dict)

    def profile_text(self) -> str:
        parts = [self.function, ", ".join(self.tags), self.when_to_use, self.limitations]
        return "\n".join(p for p in parts if p)


class ToolDoc(BaseModel):
    """A tool standardized into MFTR fields, plus provenance metadata.

    ``id`` is unique within a knowledge base and defaults to ``name``. ``input_schema`` keeps
    the original JSON schema of the arguments when one was given, so adapters can hand the
    exact definition to a model. ``content_hash`` changes whenever anything indexed changes,
    which is how ``sync`` knows what to re-embed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = ""
    name: str
    description: str = ""
    parameters: list[ToolParam] = Field(default_factory=list)
    response: str = ""
    examples: list[str] = Field(default_factory=list)
    input_schema: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    expansion: ToolExpansion = Field(default_factory=ToolExpansion)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _as_invalid_tool(data, exc) from None

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> ToolDoc:
        if isinstance(obj, dict):
            return cls(**obj)
        return super().model_validate(obj, *args, **kwargs)

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("tool name is empty")
        if len(value) > 1_000:
            raise ValueError(f"tool name is {len(value)} characters long (limit 1000)")
        return value

    @field_validator("description", "response")
    @classmethod
    def _check_text(cls, value: str, info: ValidationInfo) -> str:
        if len(value) > MAX_FIELD_CHARS:
            value = _over_long(value, str(info.data.get("name", "<unnamed>")), str(info.field_name))
        return value.strip()

    @field_validator("examples")
    @classmethod
    def _check_examples(cls, value: list[str]) -> list[str]:
        return [v.strip() for v in value if v and v.strip()]

    @field_validator("parameters")
    @classmethod
    def _check_unique_params(cls, value: list[ToolParam]) -> list[ToolParam]:
        # A field validator (not the model validator) so the error's field is "parameters".
        seen: set[str] = set()
        for param in value:
            if param.name in seen:
                raise ValueError(f"parameter {param.name!r} is defined twice")
            seen.add(param.name)
        return value

    @model_validator(mode="after")
    def _fill_id(self) -> ToolDoc:
        if not self.id:
            object.__setattr__(self, "id", self.name)
        return self

    # ----------------------------------------------------------------- derived views
    @property
    def content_hash(self) -> str:
        """SHA-256 of everything that is indexed or returned, metadata included."""
        payload = self.model_dump(mode="json")
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def source_hash(self) -> str:
        """SHA-256 of the tool as given (its expansion left out): the key of the expansion cache."""
        payload = self.model_dump(mode="json", exclude={"expansion"})
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def required_params(self) -> list[ToolParam]:
        return [p for p in self.parameters if p.required]

    def field_text(self, field: FieldName) -> str:
        """The text indexed for one field; ``""`` when the tool has nothing for it.

        The description field leads with the tool's name split into words, because the
        name is often the most precise statement of what the tool does. ``response`` and
        ``examples`` fall back to the expansion's inferred versions when the tool has none.
        """
        if field == "description":
            words = humanize_name(self.name)
            if self.description:
                return f"{words}: {self.description}" if words else self.description
            return words
        if field == "parameters":
            return "\n".join(p.text() for p in self.parameters)
        if field == "response":
            return readable_response(self.response or self.expansion.inferred_response)
        if field == "examples":
            return "\n".join(self.examples or self.expansion.inferred_examples)
        if field == "profile":
            return self.expansion.profile_text()
        if field == "questions":
            return "\n".join(self.expansion.hypothetical_questions)
        if field == "topics":
            return "\n".join(self.expansion.key_topics)
        raise KeyError(f"unknown field {field!r}; expected one of {INDEX_FIELDS}")

    def parameters_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments: the original one, else built from :attr:`parameters`."""
        if self.input_schema:
            return self.input_schema
        props: dict[str, Any] = {}
        for p in self.parameters:
            prop: dict[str, Any] = {} if p.type == "any" else {"type": p.type.split("|") if "|" in p.type else p.type}
            if p.description:
                prop["description"] = p.description
            if p.enum:
                prop["enum"] = p.enum
            props[p.name] = prop
        schema: dict[str, Any] = {"type": "object", "properties": props}
        required = [p.name for p in self.parameters if p.required]
        if required:
            schema["required"] = required
        return schema

    def definition(self) -> dict[str, Any]:
        """The tool as an OpenAI tool definition (what ``tools=`` takes), rebuilt from what is stored.

        >>> ToolDoc(name="ping", description="Check a host.").definition()["function"]["name"]
        'ping'
        """
        function = {"name": self.name, "description": self.description, "parameters": self.parameters_schema()}
        return {"type": "function", "function": function}

    def card(self) -> str:
        """A compact multi-field card, for people and for rerankers."""
        parts = [f"{self.name}: {self.description}".strip()]
        for field in ("parameters", "response", "examples"):
            text = self.field_text(field)
            if text:
                parts.append(f"[{field}]\n{text}")
        return "\n".join(parts)


def _as_invalid_tool(data: dict[str, Any], exc: ValidationError) -> InvalidToolError:
    """Turn pydantic's error into one that names the tool and the field."""
    raw_name = data.get("name")
    tool = raw_name if isinstance(raw_name, str) and raw_name.strip() else str(data.get("id") or "<unnamed>")
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first.get("loc", ())) or "tool"
    return InvalidToolError(tool, loc, first.get("msg", str(exc)))
