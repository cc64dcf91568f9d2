"""Fixtures: a registry of real LlamaIndex tools (hand-written ones plus standard-library
distractors), indexed once per session with the real packaged embedding model."""

from __future__ import annotations

import pytest
from llama_index.core.tools import FunctionTool

from llamaindex_toolret import ToolObjectIndex, doc_to_tool
from toolret.sources.stdlib_registry import stdlib_tools

#: Standard-library modules whose functions join the registry as distractors.
DISTRACTOR_MODULES = {"math", "statistics", "random", "json", "textwrap", "calendar", "hashlib", "base64", "uuid"}


def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather conditions (temperature, sky) for a city.

    Args:
        city: City name, e.g. "Paris".
        unit: Temperature unit, celsius or fahrenheit.
    """
    return f"18 degrees and sunny in {city}"


def get_forecast(city: str, days: int = 3) -> str:
    """Weather forecast for the next days in a city.

    Args:
        city: City name.
        days: Number of days to forecast.
    """
    return f"rain expected in {city} for {days} days"


def convert_currency(amount: float, source: str, target: str) -> str:
    """Convert an amount of money from one currency to another at today's exchange rate.

    Args:
        amount: The amount to convert.
        source: ISO code of the currency to convert from, e.g. "USD".
        target: ISO code of the currency to convert to, e.g. "EUR".
    """
    return f"{amount * 0.9:.2f} {target}"


def send_email(to: str, subject: str, body: str) -> str:
    """Send an e-mail message to a recipient.

    Args:
        to: Recipient e-mail address.
        subject: Subject line.
        body: Message text.
    """
    return f"e-mail sent to {to}"


def search_flights(origin: str, destination: str, date: str) -> str:
    """Find flights between two airports on a given date.

    Args:
        origin: Departure airport or city.
        destination: Arrival airport or city.
        date: Travel date, YYYY-MM-DD.
    """
    return f"3 flights from {origin} to {destination} on {date}"


def book_hotel(city: str, nights: int) -> str:
    """Book a hotel room in a city for a number of nights.

    Args:
        city: City where the hotel is.
        nights: Number of nights to stay.
    """
    return f"booked {nights} nights in {city}"


def get_stock_price(ticker: str) -> str:
    """Latest trading price of a company's stock on the stock market.

    Args:
        ticker: Stock ticker symbol, e.g. "AAPL".
    """
    return f"{ticker}: 187.20"


def translate_text(text: str, language: str) -> str:
    """Translate a piece of text into another language.

    Args:
        text: The text to translate.
        language: Target language, e.g. "German".
    """
    return f"[{language}] {text}"


AGENT_FUNCTIONS = [
    get_weather,
    get_forecast,
    convert_currency,
    send_email,
    search_flights,
    book_hotel,
    get_stock_price,
    translate_text,
]


def agent_tools() -> list[FunctionTool]:
    """Fresh FunctionTools for the hand-written functions (each test may build its own)."""
    return [FunctionTool.from_defaults(fn=fn) for fn in AGENT_FUNCTIONS]


def distractor_tools() -> list[FunctionTool]:
    """Standard-library functions as LlamaIndex tools (metadata only; names use '_' for '.')."""
    docs = [d for d in stdlib_tools() if d.name.rsplit(".", 1)[0] in DISTRACTOR_MODULES]
    return [doc_to_tool(d.model_copy(update={"id": d.id.replace(".", "_")})) for d in docs]


@pytest.fixture(scope="session")
def registry(embedder) -> list[FunctionTool]:
    """About 170 tools: the hand-written ones first, then the distractors."""
    return agent_tools() + distractor_tools()


@pytest.fixture(scope="session")
def shared_index(registry) -> ToolObjectIndex:
    """The registry indexed once (in memory). Tests must not insert into it."""
    return ToolObjectIndex.from_objects(registry)


class Thing:
    """An argument type pydantic cannot render as JSON schema."""


def check_thing(thing: Thing) -> str:
    """Check a thing for the user and report its status."""
    return "checked"


def unbindable_tool() -> FunctionTool:
    """A tool no LLM can be handed: ``metadata.to_openai_tool()`` raises on its ``fn_schema``."""
    from pydantic import BaseModel, ConfigDict

    class CheckArgs(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        thing: Thing

    return FunctionTool.from_defaults(fn=check_thing, fn_schema=CheckArgs)
