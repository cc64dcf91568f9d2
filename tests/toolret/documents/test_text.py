"""Identifier splitting and tokenization."""

from __future__ import annotations

from toolret.documents.text import humanize_name, split_identifier, tokenize
from toolret.index.lexical import LexicalIndex, analyze


def test_names_split_into_words():
    assert split_identifier("GetRecord") == ["get", "record"]
    assert split_identifier("get_record") == ["get", "record"]
    assert split_identifier("math.factorial") == ["math", "factorial"]
    assert split_identifier("GET /movie/{movie_id}/credits") == ["get", "movie", "movie", "id", "credits"]
    assert humanize_name("parseHTTPResponse") == "parse http response"


def test_tokenize_drops_stopwords_and_splits_identifiers():
    assert tokenize("Please get the CurrentWeather for me") == ["current", "weather"]


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
