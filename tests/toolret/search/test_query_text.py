"""One rule for long and noisy queries: search the informative part, say so, never refuse on length."""

from __future__ import annotations

import base64
import os

import pytest

from toolret import RetrievalConfig, ToolKnowledgeBase
from toolret.search.query_text import informative_query
from toolret.search.search import checked_query

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
    text = checked_query(query, RetrievalConfig())
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


_ASK = "restart the checkout service in prod"
_OPS_TOOLS = [
    {"name": "restart_service", "description": "Restart a running service in an environment (prod, staging)."},
    {"name": "get_logs", "description": "Fetch recent log lines of a service."},
    {"name": "scale_service", "description": "Change the number of replicas of a service."},
    {"name": "rollback_deployment", "description": "Roll a service back to its previous release."},
    {"name": "create_incident", "description": "Open an incident ticket for an outage."},
    {"name": "get_order", "description": "Look up an order by id."},
    {"name": "refund_payment", "description": "Refund a payment for an order."},
    {"name": "checkout_cart", "description": "Check out a shopping cart and place the order."},
    {"name": "flush_cache", "description": "Flush the cache of a service."},
    {"name": "get_weather", "description": "Current weather for a city."},
]


def _log_lines(chars: int) -> list[str]:
    """Checkout-service log lines without a sentence break, ``chars`` characters in all."""
    lines: list[str] = []
    while sum(map(len, lines)) < chars:
        i = len(lines)
        lines.append(
            f"2024-11-24T10:{i % 60:02d}:{(7 * i) % 60:02d}Z ERROR checkout-api pod=checkout-7f9c "
            f"order_id={1000 + 37 * i} payment gateway timeout after {100 + 53 * i}ms cart={i % 97} retrying"
        )
    return lines


@pytest.mark.parametrize(
    "where",
    ["after the log", "before the log", "in the middle of the log", "on the log's last line"],
)
def test_a_request_pasted_with_20k_characters_of_log_is_what_is_searched(make_kb, where: str) -> None:
    lines = _log_lines(20_000)
    request = {
        "after the log": "\n".join([*lines, _ASK]),
        "before the log": "\n".join([_ASK, *lines]),
        "in the middle of the log": "\n".join([*lines[:80], _ASK, *lines[80:]]),
        "on the log's last line": " ".join([*lines, _ASK]),
    }[where]
    assert len(request) > 20_000
    result = make_kb(_OPS_TOOLS).search(request, k=5)
    assert "restart_service" in result.ids, result.ids
    assert _ASK in result.query and len(result.query) < 100
    step = result.trace[0]
    assert step.stage == "query_text" and "log-like line(s)" in step.note, step.note


@pytest.mark.parametrize(
    "paste",
    [
        "Traceback (most recent call last):\n"
        + "".join(
            f'  File "/app/mod{i}.py", line {i + 3}, in handler_{i}\n    out = client.call(p, timeout={i})\n'
            for i in range(80)
        ),
        "\n".join(
            [
                "[",
                *(f'  {{"id": {i}, "sku": "SKU-{i}", "name": "blue shirt", "qty": {i % 5}}},' for i in range(120)),
                "]",
            ]
        ),
        "NAME READY STATUS RESTARTS AGE\n"
        + "".join(f"checkout-7f9c{i:03d} 0/1 CrashLoopBackOff {i % 50} {i % 9}h\n" for i in range(150)),
    ],
    ids=["traceback", "json", "kubectl"],
)
def test_a_log_trace_or_data_paste_is_dropped_and_said_even_within_the_limit(paste: str) -> None:
    assert 1_000 < len(paste) < 8_000
    text = informative_query(f"{paste}\n{_ASK}", 8_000)
    assert text.text.endswith(_ASK) and len(text.text) < 80
    assert "log-like line(s)" in text.note and f"from {len(paste) + len(_ASK) + 1} to" in text.note


def test_sentences_with_numbers_are_not_a_log() -> None:
    numbers = ", ".join(str(i % 97) for i in range(600))
    query = f"You are given two sets of data, the first set is [{numbers}]. Can you create two histograms from them?"
    assert informative_query(query, 8_000).text == query  # one written line, within the limit: as it is


def test_a_text_that_is_only_a_log_keeps_its_head_and_last_line() -> None:
    lines = _log_lines(20_000)
    text = informative_query("\n".join(lines), 8_000)
    assert text.text.startswith(lines[0]) and text.text.endswith(lines[-1]) and len(text.text) <= 8_000
    assert "log-like" not in text.note and "kept the first" in text.note
