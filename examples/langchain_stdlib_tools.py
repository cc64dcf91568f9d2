"""Shared by the LangChain/LangGraph examples: a 650-tool LangChain registry, and the model.

``stdlib_langchain_tools()`` turns toolret's standard-library registry (``math.factorial``,
``os.path.join``, ``json.dumps``…) into LangChain ``StructuredTool``s, so the examples run an
agent with a realistically large tool set offline. Only side-effect-free modules really run;
the others (``os``, ``shutil``…) answer with what they *would* have done, so pointing an
example at a real model cannot delete a file.

``chat_model(name, scripted)`` returns the scripted offline model, or — with ``--model`` or
``$TOOLRET_EXAMPLE_MODEL`` — a real one through ``langchain.chat_models.init_chat_model``
(``"openai:gpt-4o-mini"`` needs ``pip install langchain-openai`` and ``$OPENAI_API_KEY``;
``$OPENAI_BASE_URL`` points it at any OpenAI-compatible server: vLLM, Ollama, LM Studio…).
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import StructuredTool

from toolret.documents.tool_doc import ToolDoc
from toolret.sources.stdlib_registry import stdlib_tools

#: Modules whose functions compute without touching the machine; everything else is a dry run.
SAFE_PREFIXES = (
    "math.", "cmath.", "statistics.", "random.", "string.", "textwrap.", "re.", "difflib.", "unicodedata.",
    "json.", "html.", "base64.", "binascii.", "hashlib.", "datetime.", "calendar.", "uuid.", "urllib.parse.",
    "ipaddress.", "fnmatch.", "bisect.", "heapq.", "colorsys.", "keyword.", "os.path.",
)  # fmt: skip


def _resolve(dotted: str) -> Callable[..., Any] | None:
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj if callable(obj) else None
    return None


def _runner(doc: ToolDoc) -> Callable[..., str]:
    fn = _resolve(doc.name)
    order = [p.name for p in doc.parameters]
    safe = fn is not None and doc.name.startswith(SAFE_PREFIXES)

    def run(**kwargs: Any) -> str:
        args = []
        for name in order:  # many builtins take positional-only arguments
            if name not in kwargs:
                break
            args.append(kwargs[name])
        if not safe:
            shown = ", ".join(repr(a) for a in args)
            return f"(dry run) would call {doc.name}({shown})"
        try:
            return repr(fn(*args))  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - the model should read the error
            return f"error: {type(exc).__name__}: {exc}"

    return run


def stdlib_langchain_tools() -> list[StructuredTool]:
    """About 650 LangChain tools, one per documented standard-library function."""
    tools = []
    for doc in stdlib_tools():
        schema = doc.input_schema or {"type": "object", "properties": {}}
        tools.append(
            StructuredTool(
                name=doc.name.replace(".", "_"),
                description=doc.description or doc.name,
                args_schema={"title": doc.name.replace(".", "_"), **schema},
                func=_runner(doc),
            )
        )
    return tools


def model_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        default=os.environ.get("TOOLRET_EXAMPLE_MODEL"),
        help="a real chat model for init_chat_model, e.g. openai:gpt-4o-mini (default: $TOOLRET_EXAMPLE_MODEL, "
        "else an offline scripted model)",
    )


def chat_model(name: str | None, scripted: BaseChatModel) -> BaseChatModel:
    """The real model ``name`` when given, else the scripted one."""
    if not name:
        return scripted
    from langchain.chat_models import init_chat_model

    options: dict[str, Any] = {}
    if os.environ.get("OPENAI_BASE_URL") and name.startswith("openai:"):
        options["base_url"] = os.environ["OPENAI_BASE_URL"]
    return init_chat_model(name, temperature=0, **options)
