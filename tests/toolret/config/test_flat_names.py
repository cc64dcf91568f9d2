"""The flat names of RetrievalConfig 0.1 reach their groups, and removed knobs are never silently dropped."""

from __future__ import annotations

import pytest

from toolret import ConfigError, RetrievalConfig
from toolret.config.flat_names import FLAT_NAMES, REMOVED, route_flat_names


def test_every_flat_name_routes_to_a_setting_its_group_has():
    cfg = RetrievalConfig()
    for flat, (group, name) in FLAT_NAMES.items():
        assert name in type(getattr(cfg, group)).model_fields, flat


def test_a_flat_name_sets_the_grouped_setting_in_the_constructor_with_and_model_copy():
    built = RetrievalConfig(lexical_weight=0.4, auto_ratio=None, reflect_rounds=1, fusion="learned")
    assert (built.fusion.lexical_weight, built.auto_k.ratio, built.reflection.rounds) == (0.4, None, 1)
    assert built.fusion.method == "learned" and built.fusion.cosine_weight == RetrievalConfig().fusion.cosine_weight
    changed = RetrievalConfig.preset("balanced").with_(rerank_top_n=7, history_neighbors=3)
    assert (changed.rerank.top_n, changed.memory.history_neighbors) == (7, 3)
    assert changed.memory.history_weight == RetrievalConfig.preset("balanced").memory.history_weight  # kept
    copied = RetrievalConfig().model_copy(update={"cosine_weight": 1.0})
    assert copied.fusion.cosine_weight == 1.0 and not hasattr(copied, "cosine_weight")


def test_model_copy_checks_its_update_as_with_does():
    with pytest.raises(ConfigError, match="'cosine_wieght'.*did you mean 'cosine_weight'"):
        RetrievalConfig().model_copy(update={"cosine_wieght": 1.0})
    with pytest.raises(ConfigError, match="lexical_weight"):
        RetrievalConfig().model_copy(update={"lexical_weight": 2.0})  # above 1: validated, not stored


def test_a_flat_name_and_its_group_merge():
    cfg = RetrievalConfig(fusion={"hubness_weight": 0.0}, lexical_weight=0.3)
    assert (cfg.fusion.hubness_weight, cfg.fusion.lexical_weight) == (0.0, 0.3)


@pytest.mark.parametrize(("knob", "bad"), [("normalization", "minmax"), ("bias", 0.5), ("whole_query_budget", False)])
def test_a_removed_knob_set_to_what_it_no_longer_does_is_an_error_naming_it(knob, bad):
    with pytest.raises(ConfigError, match=f"^RetrievalConfig.{knob} was removed"):
        RetrievalConfig(**{knob: bad})
    with pytest.raises(ConfigError, match=f"^RetrievalConfig.{knob} was removed"):
        RetrievalConfig().with_(**{knob: bad})


def test_a_removed_knob_at_the_value_that_remains_is_dropped():
    old_dump = {"normalization": "zscore", "bias": 0.0, "lexical_floor": 0.3, "lexical_normalization": "bound"}
    assert RetrievalConfig(**old_dump) == RetrievalConfig()
    assert set(REMOVED) == {"bias", "whole_query_budget", "normalization", "lexical_normalization", "lexical_floor"}
    assert not set(REMOVED) & set(RetrievalConfig.model_fields)


def test_the_top_level_holds_at_most_30_settings_and_the_groups_hold_the_fitted_numbers():
    fields = RetrievalConfig.model_fields
    assert len(fields) <= 30
    assert not set(FLAT_NAMES) & set(fields)
    assert route_flat_names({"fusion": "heuristic"}) == {"fusion": {"method": "heuristic"}}
