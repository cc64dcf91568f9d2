"""LangChain selector options in the engine's llm_steps (toolret.llm.selector_options)."""

from __future__ import annotations

import pytest

from toolret import ConfigError, RetrievalConfig
from toolret.llm.selector_options import check_parsing_failure, with_selector_options
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
