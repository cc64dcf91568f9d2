"""LangChain selector options in the engine's llm_steps (toolret.agents.selector_options)."""

from __future__ import annotations

import pytest

from toolret import ConfigError, RetrievalConfig
from toolret.agents.selector_options import check_parsing_failure, with_selector_options
from toolret.llm.testing import ScriptedLLM


def test_the_options_land_in_llm_steps_of_the_full_preset_with_an_llm():
    cfg = with_selector_options(None, None, ScriptedLLM([]), system_prompt="Prefer read-only tools.", max_retries=0)
    assert isinstance(cfg, RetrievalConfig) and cfg.name == "full"
    assert cfg.llm_steps.selection_instructions == "Prefer read-only tools." and cfg.llm_steps.retries == 0
    raising = with_selector_options("fast", None, ScriptedLLM([]), on_parsing_failure="error")
    assert isinstance(raising, RetrievalConfig) and raising.llm_steps.on_malformed == "raise"
    assert with_selector_options("fast", None, None) == "fast"  # nothing given: the config as it is


def test_options_without_an_llm_say_they_have_no_effect():
    with pytest.warns(UserWarning, match="max_retries= only govern an LLM selection step"):
        with_selector_options(None, None, None, max_retries=2)


@pytest.mark.parametrize("bad", [-1, True, 1.5])
def test_max_retries_must_be_a_count(bad):
    with pytest.raises(ConfigError, match="max_retries must be an integer >= 0"):
        with_selector_options(None, None, ScriptedLLM([]), max_retries=bad)


def test_a_parsing_failure_policy_is_one_of_langchains():
    for good in (None, "error", "none", "all", ["a", "b"], lambda raw: ["a"]):
        check_parsing_failure(good)
    for bad in ("some", [1, 2], 3):
        with pytest.raises(ConfigError, match="on_parsing_failure must be"):
            check_parsing_failure(bad)


def test_max_tools_is_k_under_langchains_name():
    from toolret import QueryError
    from toolret.agents.selector_options import UNSET, selector_k

    assert selector_k(None) == 5 and selector_k(3) == 3 and selector_k(None, 4) == 4 and selector_k(4, 4) == 4
    assert selector_k(None, None) == "auto"  # LangChain's "no fixed cap"
    assert selector_k("AUTO", UNSET) == "auto"
    with pytest.raises(QueryError, match="not both"):
        selector_k(3, 4)


def test_model_and_llm_are_one_setting():
    from toolret.agents.selector_options import check_one_model

    check_one_model("openai:gpt-4o-mini", None)
    with pytest.raises(ConfigError, match="model= or llm="):
        check_one_model("openai:gpt-4o-mini", ScriptedLLM([]))


def test_a_malformed_answer_offers_what_on_parsing_failure_says():
    from toolret.agents.selector_options import parsing_fallback
    from toolret.llm.protocol import MalformedOutputError

    bad = MalformedOutputError("not JSON", "get_weather, send_email")
    assert parsing_fallback(None, bad, ["ask_user"]) is None
    assert parsing_fallback("all", RuntimeError("down"), ["ask_user"]) is None  # not a parsing failure
    assert parsing_fallback("none", bad, ["ask_user"]) == "always_include"
    assert parsing_fallback("all", bad, ["ask_user"]) == "all"
    assert parsing_fallback(["get_weather"], bad, ["ask_user"]) == ["ask_user", "get_weather"]
    assert parsing_fallback(lambda raw: raw.split(", "), bad, []) == ["get_weather", "send_email"]
    with pytest.raises(MalformedOutputError):
        parsing_fallback("error", bad, [])
