"""One rule for long and noisy queries: search the informative part, say so, never refuse on length."""

from __future__ import annotations

import base64
import os

import pytest

from toolret import RetrievalConfig, ToolKnowledgeBase
from toolret.retrieval.pipeline import checked_query
from toolret.retrieval.query_text import informative_query

_B64 = base64.b64encode(os.urandom(3_000)).decode()  # a pasted attachment
_HEX = os.urandom(64).hex()


def test_a_short_plain_query_is_kept_exactly() -> None:
    text = informative_query("  weather in  Paris ", 8_000)
    assert text.text == "weather in  Paris" and not text.shortened and text.trace() == []


def test_base64_hex_and_punctuation_runs_are_dropped_and_counted() -> None:
    query = f"decode this attachment {_B64} and hash {_HEX} ==================== please"
    text = informative_query(query, 8_000)
    assert text.text == "decode this attachment and hash please"
    assert "dropped 3 blob(s)" in text.note and text.trace()[0].stage == "query_text"


def test_data_uri_is_dropped() -> None:
    text = informative_query(f"describe this image data:image/png;base64,{_B64[:50]} in words", 8_000)
    assert text.text == "describe this image in words"


def test_long_identifiers_are_not_blobs() -> None:
    name = "get_current_weather_forecast_for_a_city_and_country_with_hourly_detail"
    assert len(name) >= 64 and informative_query(f"call {name}", 8_000).text == f"call {name}"


def test_an_over_long_text_keeps_its_head_and_its_last_sentence() -> None:
    document = "".join(f"The quarterly report covers revenue and costs of unit {i}. " for i in range(500))
    query = f"{document}Which tool converts this report to PDF?"
    text = informative_query(query, 2_000)
    assert len(text.text) <= 2_000
    assert text.text.startswith("The quarterly report") and text.text.endswith(
        "Which tool converts this report to PDF?"
    )
    assert "and the last sentence" in text.note and f"from {len(query)} to" in text.note


def test_a_pasted_text_that_repeats_itself_is_read_once() -> None:
    query = "The quarterly report covers revenue and costs. " * 500 + "Which tool converts this report to PDF?"
    text = informative_query(query, 2_000)
    assert text.text == "The quarterly report covers revenue and costs. Which tool converts this report to PDF?"
    assert "dropped 499 repeated sentence(s)" in text.note


def test_a_blob_only_query_keeps_its_head() -> None:
    text = informative_query(_B64, 8_000)
    assert text.text and _B64.startswith(text.text) and "only a blob" in text.note


@pytest.mark.parametrize(
    "query",
    [
        "東京の明日の天気を教えてください" * 800,
        "Какая погода в Москве? " * 500,
        "مرحبا كيف الطقس " * 700,
        "weather \ud800 in Paris",
    ],
)
def test_non_english_and_broken_text_is_never_an_error(query: str) -> None:
    text = checked_query(query, 5, RetrievalConfig())
    assert 0 < len(text.text) <= 8_000


def test_knowledge_base_searches_an_18k_request_and_traces_the_cut(embedder) -> None:
    kb = ToolKnowledgeBase.from_tools(
        [
            {"name": "convert_pdf", "description": "Convert a document to PDF."},
            {"name": "get_weather", "description": "Current weather for a city."},
        ],
        embedder=embedder,
    )
    request = "Please convert the attached contract to PDF. " + _B64 * 4 + " " + "Clause text. " * 200
    assert len(request) > 18_000
    result = kb.search(request, k=1)
    assert result.ids == ["convert_pdf"]
    assert result.trace[0].stage == "query_text" and "dropped" in result.trace[0].note
