"""One API contract: k is checked once (validate_k), and an LLM given to an adapter means ``full``."""

from __future__ import annotations

import pytest

from toolret import QueryError, RetrievalConfig, ToolDoc, ToolKnowledgeBase
from toolret.config import K, validate_k


@pytest.mark.parametrize("bad", [0, -1, 2.5, "5", "all", True, None])
def test_validate_k_rejects_anything_but_a_positive_int_or_auto(bad):
    with pytest.raises(QueryError, match="k must be a positive integer or 'auto'"):
        validate_k(bad)


def test_validate_k_accepts_counts_and_auto_and_caps_at_max_k():
    assert validate_k(1) == 1 and validate_k("auto") == "auto"
    with pytest.raises(QueryError, match="exceeds max_k=3"):
        validate_k(4, RetrievalConfig(max_k=3))
    assert isinstance(QueryError("x"), ValueError)  # adapters that caught ValueError keep working


def test_the_knowledge_base_uses_the_same_check(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([ToolDoc(name="get_weather", description="Weather for a city.")])
    for bad in (0, "many"):
        with pytest.raises(QueryError) as raised:
            kb.search("weather", k=bad)
        with pytest.raises(QueryError) as direct:
            validate_k(bad)
        assert str(raised.value) == str(direct.value)
    kb.close()


def test_an_llm_means_full_unless_a_config_is_given():
    llm = object()
    assert RetrievalConfig.for_llm(None, llm) == "full"
    assert RetrievalConfig.for_llm(None, None) is None
    assert RetrievalConfig.for_llm("balanced", llm) == "balanced"
    cfg = RetrievalConfig.preset("fast")
    assert RetrievalConfig.for_llm(cfg, llm) is cfg


def test_k_alias_and_validate_k_are_the_public_ones():
    import toolret

    assert toolret.K is K and toolret.validate_k is validate_k


# ------------------------------------------------------------------ config.with_(**changes)
def test_with_changes_fields_and_keeps_the_rest():
    base = RetrievalConfig.preset("balanced")
    changed = base.with_(lexical_weight=0.5, candidates_per_field=80)
    assert (changed.fusion.lexical_weight, changed.candidates_per_field) == (0.5, 80)
    assert changed.planner == base.planner and changed.name == "balanced"
    assert base.fusion.lexical_weight == 0.25  # frozen: the original is unchanged


def test_with_names_an_unknown_field_and_the_nearest_valid_one():
    from toolret import ConfigError

    with pytest.raises(ConfigError, match=r"'lexical_wieght'.*did you mean 'lexical_weight'"):
        RetrievalConfig().with_(lexical_wieght=0.5)
    with pytest.raises(ConfigError, match=r"field_weights.descriptoin.*did you mean 'description'"):
        RetrievalConfig().with_(field_weights={"descriptoin": 0.4})


def test_with_validates_values_as_the_constructor_does():
    from toolret import ConfigError

    with pytest.raises(ConfigError, match="lexical_weight"):
        RetrievalConfig().with_(lexical_weight=3.0)
    with pytest.raises(ConfigError, match="field_weights.description"):
        RetrievalConfig().with_(field_weights={"description": -1})
    with pytest.raises(ConfigError, match="fields"):
        RetrievalConfig().with_(fields=("descripton",))


def test_with_merges_a_partial_nested_mapping():
    cfg = RetrievalConfig.preset("fast").with_(field_weights={"description": 0.4}, penalty={"scale": 0.1})
    assert cfg.field_weights.description == 0.4
    assert cfg.field_weights.parameters == RetrievalConfig().field_weights.parameters
    assert cfg.penalty.scale == 0.1 and cfg.penalty.alpha == RetrievalConfig().penalty.alpha


@pytest.mark.parametrize("spelling", ["auto", "AUTO", "Auto", " auto "])
def test_auto_is_one_word_in_any_case_as_on_the_command_line(spelling, embedder):
    assert validate_k(spelling) == "auto"
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([ToolDoc(name="get_weather", description="Current weather for a city.")])
    assert kb.search("weather in Paris", k=spelling).ids == ["get_weather"]
