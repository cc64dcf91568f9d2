"""k="auto" returns nothing for a request no tool serves (the calibrated floor), and only then."""

from __future__ import annotations

import warnings

import pytest

from toolret import RetrievalConfig, ToolKnowledgeBase
from toolret.index.embedding import SHIPPED_EMBEDDER_NAME, resolve_embedder
from toolret.index.framework_embedding import AsymmetricEmbedder
from toolret.index.onnx_embedding import ONNX_EMBEDDER_NAME
from toolret.search.relevance_floor import CALIBRATED, FloorSettings

TOOLS = [
    {"name": "get_weather", "description": "Current weather and forecast for a city."},
    {"name": "convert_currency", "description": "Convert an amount of money into another currency."},
    {"name": "send_email", "description": "Send an email message to a recipient."},
    {"name": "book_flight", "description": "Book a flight between two airports on a date."},
    {"name": "create_calendar_event", "description": "Create an event in the user's calendar."},
]


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
    """
    return f"Sunny in {city}"


def convert_currency(amount: float, to: str) -> str:
    """Convert an amount of money into another currency."""
    return f"{amount} {to}"


def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    return "sent"


def book_flight(origin: str, destination: str, date: str) -> str:
    """Book a flight between two airports on a date."""
    return "booked"


#: The README's four tools (the OpenAI tool-search example's), as a new user indexes them.
README_TOOLS = [get_weather, convert_currency, send_email, book_flight]


@pytest.fixture(scope="module", params=[SHIPPED_EMBEDDER_NAME, ONNX_EMBEDDER_NAME])
def kb(request):
    kb = ToolKnowledgeBase(embedder=resolve_embedder(request.param))  # the packaged models, each calibrated
    kb.add(TOOLS)
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def default_kb():
    kb = ToolKnowledgeBase(embedder=resolve_embedder(SHIPPED_EMBEDDER_NAME))
    kb.add(TOOLS)
    yield kb
    kb.close()


def _assert_emptied(kb, request_text):
    result = kb.search(request_text, k="auto")
    assert result.ids == []
    step = next(s for s in result.trace if s.stage == "floor")
    assert step.note.endswith("no tool fits the request, none returned")
    assert not any(t["name"] in step.note for t in TOOLS)  # the numbers, never a tool's name


@pytest.mark.parametrize("request_text", ["hi there!", "who wrote Pride and Prejudice?"])
def test_chit_chat_and_general_questions_get_no_tools(kb, request_text):
    _assert_emptied(kb, request_text)


@pytest.mark.parametrize(
    "request_text", ["thanks, that's all", "what is the capital of France?", "good morning!", "tell me a joke"]
)
def test_the_default_model_empties_more_small_talk(default_kb, request_text):
    # The stock model's floor is weaker: at the in-scope bound its chit-chat margin is wider
    # (docs/decisions/2026-11-27-auto-floor-natural-requests.md).
    _assert_emptied(default_kb, request_text)


@pytest.mark.parametrize("model", [SHIPPED_EMBEDDER_NAME, ONNX_EMBEDDER_NAME])
@pytest.mark.parametrize(
    ("request_text", "tool"),
    [
        ("is it raining in Paris?", "get_weather"),  # issue 41: the README's own request was emptied
        ("Is it raining in Paris?", "get_weather"),
        ("will I need an umbrella in London tomorrow?", "get_weather"),
        ("how many euros is 100 dollars?", "convert_currency"),
        ("email Bob that I'm running late", "send_email"),
        ("get me on a plane to Tokyo next Monday", "book_flight"),
    ],
)
def test_a_request_a_tool_clearly_serves_is_never_emptied(model, request_text, tool):
    kb = ToolKnowledgeBase.from_tools(README_TOOLS, embedder=resolve_embedder(model))
    assert kb.search(request_text, k=1).ids == [tool]
    result = kb.search(request_text, k="auto")
    assert result.ids[:1] == [tool], next(s for s in result.trace if s.stage == "floor").note


@pytest.mark.parametrize("opening", ["what is", "what's", "what’s"])
def test_a_contraction_is_no_word_the_registry_knows(kb, opening):
    # issue 41: "what's" left a stray "s" that "the user's calendar" also holds, so the request's
    # words counted as known and a general question got the CPU-usage tool.
    with_possessive = ToolKnowledgeBase(embedder=kb.embedder)
    with_possessive.add(
        [*TOOLS, {"name": "get_cpu_usage", "description": "Report the CPU usage of the user's machine."}]
    )
    result = with_possessive.search(f"{opening} the capital of France?", k="auto")
    assert "unknown words 100%" in next(s for s in result.trace if s.stage == "floor").note
    if kb.embedder.name == SHIPPED_EMBEDDER_NAME:
        assert result.ids == []
    with_possessive.close()


@pytest.mark.parametrize(
    ("request_text", "tool"),
    [
        ("is it going to rain in Paris tomorrow?", "get_weather"),
        ("how much is 100 dollars in yen?", "convert_currency"),
        ("mail the report to alice", "send_email"),
        ("I need a plane ticket from Boston to Denver on friday", "book_flight"),
    ],
)
def test_requests_a_tool_serves_keep_their_tools(kb, request_text, tool):
    assert kb.search(request_text, k="auto").ids[:1] == [tool]


def test_a_fixed_k_and_a_floor_switched_off_never_return_nothing(kb):
    assert len(kb.search("hi there!", k=2).ids) == 2
    off = RetrievalConfig.preset("fast").with_(auto_floor=None)
    assert kb.search("hi there!", k="auto", config=off).ids != []


def test_a_model_without_a_calibrated_floor_keeps_the_set_and_says_so(embedder):
    own = AsymmetricEmbedder(embedder.embed, embedder.embed, name="my-model")  # any model toolret has not calibrated
    assert own.name not in CALIBRATED
    kb = ToolKnowledgeBase.from_tools(TOOLS, embedder=own)
    with pytest.warns(UserWarning, match="no relevance floor for the embedding model 'my-model'"):
        result = kb.search("hi there!", k="auto")
    step = next(s for s in result.trace if s.stage == "floor")
    assert result.ids and step.path == "skipped" and "no calibrated floor for 'my-model'" in step.note


def test_a_framework_embedder_without_a_floor_warns_at_run_time(embedder, caplog):
    # issue 41: a LangChain Embeddings as the embedder silently had no floor under k="auto".
    from tests.toolret.index.test_framework_embedding import PackagedEmbeddings

    lc = PackagedEmbeddings(embedder)
    lc.model_name = "issue41-uncalibrated"  # a model of the user's: no calibrated floor
    kb = ToolKnowledgeBase.from_tools(TOOLS, embedder=lc)
    name = kb.embedder.name
    with pytest.warns(UserWarning, match="no relevance floor") as caught, caplog.at_level("WARNING", "toolret"):
        assert kb.search("hi there!", k="auto").ids  # kept: there is no floor to empty it
    message = str(caught[0].message)
    assert name in message and "calibrated per embedding model" in message and "auto_k={'floor': None}" in message
    assert any(name in r.getMessage() and "no relevance floor" in r.getMessage() for r in caplog.records)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per model, not on every search
        kb.search("hello", k="auto")
        kb.search("hi there!", k="auto", config=RetrievalConfig.preset("fast").with_(auto_floor=None))


def test_the_rule():
    floor = FloorSettings(margin=0.2, oov_share=0.9, weak_similarity=0.3)
    assert floor.empties(best=0.2, null=0.5, oov=0.0)  # reads like chit-chat
    assert floor.empties(best=0.25, null=0.3, oov=1.0)  # unknown words and a weak best tool
    assert not floor.empties(best=0.35, null=0.3, oov=1.0)
