"""Hard negatives mined by the engine are near misses, never a right answer in disguise."""

from __future__ import annotations

import json

import pytest

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import ToolRetError
from toolret.index.embedding import CallableEmbedder
from toolret.training.negatives import mine_hard_negatives
from toolret.training.pairs import pairs_from_bundles


def _tools() -> dict[str, ToolDoc]:
    return {
        t.id: t
        for t in [
            ToolDoc(id="weather", name="get_weather", description="Current weather conditions for a city."),
            ToolDoc(id="weather-v2", name="get_weather", description="Current weather for a city, version 2."),
            ToolDoc(id="weather-copy", name="weather_now", description="Current weather conditions for a city."),
            ToolDoc(id="forecast", name="get_forecast", description="Weather forecast for the coming days."),
            ToolDoc(id="umbrella", name="umbrella_advice", description="Says whether to take an umbrella today."),
            ToolDoc(id="mail", name="send_mail", description="Send an e-mail to a contact."),
            ToolDoc(id="invoice", name="create_invoice", description="Create an invoice for a customer."),
        ]
    }


def test_relevant_tools_their_namesakes_and_copies_are_never_negatives() -> None:
    tools = _tools()
    pairs = pairs_from_bundles("r", tools, [("what is the weather in Oslo right now", ["weather", "umbrella"])])
    mined = mine_hard_negatives(pairs, {"r": tools}, per_pair=4)
    for pair in mined:
        ids = [n.tool_id for n in pair.negatives]
        assert len(ids) == 3
        assert not {"weather", "umbrella", "weather-v2", "weather-copy"} & set(ids)
        # The engine's near miss comes first: a forecast is closer to the request than an invoice.
        assert ids[0] == "forecast"
        assert all(n.document for n in pair.negatives)


def test_the_cache_is_reused_so_folds_mine_once(tmp_path) -> None:
    tools = _tools()
    pairs = pairs_from_bundles("r", tools, [("send a note to Ana", ["mail"])])
    cache = tmp_path / "negatives.json"
    first = mine_hard_negatives(pairs, {"r": tools}, per_pair=2, cache=cache)
    assert set(json.loads(cache.read_text())["r"]) == {"send a note to Ana"}

    def broken(texts: list[str]):
        raise AssertionError("the cache should have answered")

    again = mine_hard_negatives(
        pairs, {"r": tools}, per_pair=2, cache=cache, embedder=CallableEmbedder(broken, name="x")
    )
    assert again == first


def test_a_hard_negative_count_below_zero_is_refused() -> None:
    from toolret.training.trainer import TrainConfig

    with pytest.raises((ValueError, ToolRetError)):
        TrainConfig(hard_negatives=-1)
