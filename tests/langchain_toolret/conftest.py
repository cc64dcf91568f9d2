"""Shared fixtures: a small but realistic set of LangChain tools, and an index over them."""

from __future__ import annotations

from typing import Annotated

import pytest
from langchain_core.tools import tool


@tool
def get_weather(city: str, unit: Annotated[str, "celsius or fahrenheit"] = "celsius") -> str:
    """Current weather and temperature forecast for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return f"18 degrees {unit} and sunny in {city}"


@tool
def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money from one currency to another at today's exchange rate."""
    return f"{amount * 160:.0f} {to_currency}"


@tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send an e-mail message to a recipient."""
    return f"e-mail sent to {to}"


@tool
def search_web(query: str) -> str:
    """Search the web and return the top result snippets."""
    return f"results for {query}"


@tool
def create_calendar_event(title: str, date: str, time: str) -> str:
    """Create a meeting or appointment in the user's calendar."""
    return f"event {title!r} on {date} at {time}"


@tool
def translate_text(text: str, target_language: str) -> str:
    """Translate text into another language."""
    return f"[{target_language}] {text}"


@tool
def get_stock_price(ticker: str) -> str:
    """Latest stock market price for a company ticker symbol."""
    return f"{ticker}: 123.45 USD"


@tool
def book_flight(origin: str, destination: str, date: str) -> str:
    """Book a plane ticket between two airports on a date."""
    return f"flight {origin}->{destination} on {date} booked"


@tool
def calculate_mortgage(principal: float, annual_rate: float, years: int) -> str:
    """Monthly payment of a home loan (mortgage) from principal, interest rate and term."""
    return "1234.56 per month"


@tool
def read_file(path: str) -> str:
    """Read a text file from disk and return its content."""
    return f"content of {path}"


@tool
def set_reminder(message: str, when: str) -> str:
    """Set a reminder that notifies the user at a given time."""
    return f"reminder set for {when}"


@tool
def ask_user(question: str) -> str:
    """Ask the human user a clarifying question and wait for the answer."""
    return "the user says: yes"


TOOLS = [
    get_weather,
    convert_currency,
    send_email,
    search_web,
    create_calendar_event,
    translate_text,
    get_stock_price,
    book_flight,
    calculate_mortgage,
    read_file,
    set_reminder,
    ask_user,
]


@pytest.fixture(scope="session")
def tools():
    return list(TOOLS)


@pytest.fixture(scope="session")
def tool_index(embedder):
    """An index over TOOLS built once per session with the real packaged embedding model."""
    from langchain_toolret.index import ToolIndex

    return ToolIndex.from_tools(TOOLS, embedder=embedder)


def make_unbindable_tool():
    """A tool ``bind_tools`` cannot convert: its ``args_schema`` has a dangling ``$ref``."""
    from langchain_core.tools import StructuredTool

    def check(thing: str) -> str:
        return f"{thing} checked"

    return StructuredTool.from_function(
        check,
        name="check_thing",
        description="Check a thing for the user and report its status.",
        args_schema={"type": "object", "properties": {"thing": {"$ref": "#/$defs/Thing"}}, "required": ["thing"]},
    )


@pytest.fixture(scope="session")
def unbindable():
    return make_unbindable_tool()


@pytest.fixture(scope="session")
def unbindable_index(embedder, unbindable):
    """TOOLS plus the unbindable tool (indexed by name and description, with a warning)."""
    from langchain_toolret.index import ToolIndex

    return ToolIndex.from_tools([*TOOLS, unbindable], embedder=embedder)
