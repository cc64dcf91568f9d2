"""The OpenAI-compatible chat-completions client: OpenAI, vLLM, Ollama, LM Studio, llama-cpp-python."""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any, TypeVar

from pydantic import BaseModel

from toolret.errors import MissingDependencyError
from toolret.llm.protocol import ChatMessage, LLMError, parse_structured

__all__ = ["OpenAICompatibleLLM"]

logger = logging.getLogger("toolret")

T = TypeVar("T", bound=BaseModel)


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
