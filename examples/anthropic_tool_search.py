"""Anthropic Messages with a custom tool search answered by toolret (``tool_reference`` blocks).

Every tool is sent deferred (``defer_loading: true``: no context until loaded) beside one search
tool; when the model calls it, toolret picks the tools and the ``tool_result`` loads them with
``tool_reference`` blocks; the model calls one, the loop runs it.

No network: the model is a scripted stand-in (``ScriptedMessages``) returning the ``anthropic``
SDK's own ``Message`` objects; pass ``anthropic.Anthropic()`` as ``client`` to run it against the
API. Run: ``python examples/anthropic_tool_search.py``.
"""

from __future__ import annotations

from typing import Any

from anthropic.types import Message, TextBlock, ToolUseBlock, Usage

from toolret import ToolKnowledgeBase
from toolret.providers import AnthropicToolSearch


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return f"Sunny, 21 C in {city}"


def convert_currency(amount: float, to: str) -> str:
    """Convert an amount of money into another currency."""
    return f"{amount * 0.92:.2f} {to}"


def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return "sent"


def _message(n: int, content: list[Any], stop: str) -> Message:
    return Message(
        id=f"msg_{n}",
        type="message",
        role="assistant",
        model="claude-sonnet-4-5",
        content=content,
        stop_reason=stop,  # type: ignore[arg-type]
        usage=Usage(input_tokens=10, output_tokens=10),
    )


SCRIPT = [
    _message(
        1,
        [ToolUseBlock(type="tool_use", id="tu_search", name="tool_search", input={"query": "weather in a city"})],
        "tool_use",
    ),
    _message(
        2, [ToolUseBlock(type="tool_use", id="tu_weather", name="get_weather", input={"city": "Paris"})], "tool_use"
    ),
    _message(3, [TextBlock(type="text", text="It is sunny in Paris (21 C).")], "end_turn"),
]


class ScriptedMessages:
    """Stands in for ``client.messages``: what the model decides is scripted, the objects are real SDK types."""

    def __init__(self, script: list[Message]) -> None:
        self._script = iter(script)

    def create(self, *, model: str, max_tokens: int, tools: list[dict[str, Any]], messages: list[Any]) -> Message:
        return next(self._script)


class ScriptedClient:
    def __init__(self, script: list[Message]) -> None:
        self.messages = ScriptedMessages(script)


def run(client: Any, kb: ToolKnowledgeBase, question: str, model: str = "claude-sonnet-4-5") -> tuple[str, list[Any]]:
    """The agent loop: answer each tool_use (a search loads tools, a tool call runs), stop at the answer."""
    search = AnthropicToolSearch(kb, k=3)
    messages: list[Any] = [{"role": "user", "content": question}]
    while True:
        reply = client.messages.create(model=model, max_tokens=1024, tools=search.tools(), messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return "".join(b.text for b in reply.content if b.type == "text"), messages
        messages.append({"role": "user", "content": [search.answer(b) for b in reply.content if b.type == "tool_use"]})


def main() -> None:
    kb = ToolKnowledgeBase.from_tools([get_weather, convert_currency, send_email])
    answer, messages = run(ScriptedClient(SCRIPT), kb, "What's the weather in Paris?")
    print("loaded by tool search:", [b["tool_name"] for b in messages[2]["content"][0]["content"]])
    print("tool output:", messages[4]["content"][0]["content"])
    print("answer:", answer)


if __name__ == "__main__":
    main()
