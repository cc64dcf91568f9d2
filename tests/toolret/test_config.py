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
