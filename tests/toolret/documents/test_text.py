"""Identifier splitting and tokenization."""

from __future__ import annotations

import time

import numpy as np
import pytest

from toolret.documents.text import humanize_name, joined_compounds, split_identifier, tokenize
from toolret.index.lexical import LexicalIndex, analyze, analyze_query


def test_names_split_into_words():
    assert split_identifier("GetRecord") == ["get", "record"]
    assert split_identifier("get_record") == ["get", "record"]
    assert split_identifier("math.factorial") == ["math", "factorial"]
    assert split_identifier("GET /movie/{movie_id}/credits") == ["get", "movie", "movie", "id", "credits"]
    assert humanize_name("parseHTTPResponse") == "parse http response"
    assert split_identifier("ABCDef_XMLHttpRequest2Go") == ["abc", "def", "xml", "http", "request2", "go"]


def test_tokenize_drops_stopwords_and_splits_identifiers():
    assert tokenize("Please get the CurrentWeather for me") == ["current", "weather"]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("what's the weather", ["weather"]),  # issue 41: no stray "s" from "what's"
        ("the user’s calendar", ["user", "calendar"]),  # typographic apostrophe, possessive
        (
            "I don't want it, they'll see; we're late, I've gone, I'd go, I'm here",
            ["want", "see", "late", "gone", "go", "here"],
        ),
        ("users' files", ["users", "files"]),
        ("O'Brien's rock'n'roll", ["o", "brien", "rock", "n", "roll"]),  # only the clitic goes
    ],
)
def test_english_clitics_are_not_words(text, tokens):
    assert tokenize(text) == tokens


def test_a_query_and_a_description_tokenise_apostrophes_alike():
    description = analyze("Report the CPU usage of the user's machine.")
    assert "s" not in description and "s" not in analyze_query("what's the capital of France?")
    assert analyze_query("what’s the user’s CPU usage?") == analyze("what's the user's CPU usage?")


def test_analyze_stems_so_inflections_match():
    assert analyze("forecasts") == analyze("forecast")


def test_lexical_index_scores_matching_document_higher_and_empty_docs_zero():
    index = LexicalIndex.build(["weather forecast for a city", "", "currency converter"])
    scores = index.scores("city weather forecasts")
    assert scores[0] > 0 and scores[1] == 0 and scores[2] == 0


def test_upper_bound_is_sum_of_best_per_word_scores():
    index = LexicalIndex.build(["weather forecast", "city guide", "weather in the city"])
    per_word = [float(index.scores(w).max()) for w in ("weather", "city")]
    assert abs(index.upper_bound("weather city") - sum(per_word)) < 1e-5
    assert float(index.scores("weather city").max()) <= index.upper_bound("weather city") + 1e-6
    assert index.upper_bound("unknown words only") == 0.0


def test_hyphenated_letter_digit_names_are_joined_and_nothing_else_is():
    assert joined_compounds("SHA-256, GPT-2 and UTF-8 over x-api-key") == ["sha256", "gpt2", "utf8"]
    assert joined_compounds("an e-mail at a real-time rate on 2024-01-05, call 555-1234") == []
    assert joined_compounds("BLIP-2-large") == ["blip2large"]
    # Underscores and doubled hyphens end a compound; leading and trailing hyphens are dropped.
    assert joined_compounds("x_SHA-256 a--b-2 -gpt-4- --") == ["sha256", "b2", "gpt4"]


@pytest.mark.parametrize(
    "text",
    ["a" * 100_000 + "-", "a" * 100_000 + " -", "aB1-" * 25_000 + "!", "A" * 100_000, "HTTP" * 25_000 + "Server"],
)
def test_tokenizing_is_linear_in_a_pasted_blob(text: str) -> None:
    # Patterns here backtracked quadratically: hyphen-joined words (5 s at 20,000 characters) and
    # a capital run before "Xy" (3 s), minutes at this size. Requests paste documents (issue 15's
    # 18,000-character MCP request) and tool descriptions are untrusted text.
    start = time.perf_counter()
    analyze_query(text)
    assert time.perf_counter() - start < 2.0


def test_queries_get_the_joined_name_and_tool_texts_do_not():
    assert analyze_query("compute the SHA-256 digest") == ["comput", "sha", "256", "digest", "sha256"]
    assert analyze("compute the SHA-256 digest") == ["comput", "sha", "256", "digest"]  # the index side is unchanged
    assert analyze_query("no hyphen here") == analyze("no hyphen here")


def test_a_request_writing_sha_256_meets_a_tool_named_sha256():
    index = LexicalIndex.build(
        ["hashlib sha256: return a new sha256 hash object", "hashlib sha1: a new sha1 hash object"]
    )
    scores = index.scores("make a SHA-256 hash")
    assert scores[0] > scores[1]
    assert np.isclose(index.upper_bound("make a SHA-256 hash"), index.upper_bound(analyze_query("make a SHA-256 hash")))
