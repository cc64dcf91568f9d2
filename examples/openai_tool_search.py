"""OpenAI Responses with client-executed tool search, answered by toolret.

The request carries one tool, ``tool_search`` (``execution="client"``); the model asks for what it
needs, toolret picks the tools and loads them into the conversation (``tool_search_output``), the
model calls one, the loop runs it. ``tools=`` never changes, so the prompt prefix stays cached.

No network: the model is a scripted stand-in (``ScriptedResponses``) that returns the
``openai`` SDK's own ``Response`` objects; pass ``openai.OpenAI()`` as ``client`` to run it against
the API. Run: ``python examples/openai_tool_search.py``.
"""

from __future__ import annotations

import itertools
from typing import Any

from openai.types.responses import (
    Response,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseToolSearchCall,
)

from toolret import ToolKnowledgeBase
from toolret.providers import OpenAIToolSearch


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


def book_flight(origin: str, destination: str, date: str) -> str:
    """Book a flight between two airports on a date."""
    return "booked"


class ScriptedResponses:
    """Stands in for ``client.responses``: what the model decides is scripted, the items are real SDK types."""

    def __init__(self, turns: list[list[Any]]) -> None:
        self._turns = iter(turns)
        self._ids = itertools.count(1)

    def create(self, *, model: str, input: list[Any], tools: list[dict[str, Any]], **_: Any) -> Response:
        return Response(
            id=f"resp_{next(self._ids)}",
            created_at=0,
            model=model,
            object="response",
            output=next(self._turns),
            parallel_tool_calls=True,
            tool_choice="auto",
            tools=tools,
        )


class ScriptedClient:
    def __init__(self, turns: list[list[Any]]) -> None:
        self.responses = ScriptedResponses(turns)


SCRIPT = [
    [
        ResponseToolSearchCall(
            id="ts_1",
            call_id="call_search",
            arguments={"query": "current weather in a city"},
            execution="client",
            status="completed",
            type="tool_search_call",
        )
    ],
    [
        ResponseFunctionToolCall(
            type="function_call", call_id="call_weather", name="get_weather", arguments='{"city": "Paris"}'
        )
    ],
    [
        ResponseOutputMessage(
            id="msg_1",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text="It is sunny in Paris (21 C).", annotations=[])],
        )
    ],
]


def run(client: Any, kb: ToolKnowledgeBase, question: str, model: str = "gpt-5") -> tuple[str, list[Any]]:
    """The agent loop: search when the model asks, run what it calls, stop at its answer."""
    search = OpenAIToolSearch(kb, k=3)
    items: list[Any] = [{"role": "user", "content": question}]
    while True:
        response = client.responses.create(model=model, input=items, tools=[search.tool()])
        items += response.output
        calls = [i for i in response.output if i.type in ("tool_search_call", "function_call")]
        if not calls:
            return response.output_text, items
        for call in calls:
            items.append(search.output(call, history=items) if call.type == "tool_search_call" else search.run(call))


def main() -> None:
    kb = ToolKnowledgeBase.from_tools([get_weather, convert_currency, send_email, book_flight])
    answer, items = run(ScriptedClient(SCRIPT), kb, "What's the weather in Paris?")
    loaded = [
        t["name"] for i in items if isinstance(i, dict) and i.get("type") == "tool_search_output" for t in i["tools"]
    ]
    print("loaded by tool search:", loaded)
    print(
        "tool output:",
        next(i["output"] for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"),
    )
    print("answer:", answer)


if __name__ == "__main__":
    main()
