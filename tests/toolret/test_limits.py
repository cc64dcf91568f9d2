"""Resource limits: max tools per registry, max document size, max query length (docs/security.md).

Each limit is a RetrievalConfig field with a documented default; crossing it is a clear error
that names the limit, raised before the expensive work (embedding) and without reading a
runaway generator to its end.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from toolret import (
    InvalidToolError,
    KnowledgeBaseError,
    RetrievalConfig,
    ToolDoc,
    ToolKnowledgeBase,
)
from toolret.documents.guards import DEFAULT_MAX_DOC_CHARS, DEFAULT_MAX_TOOLS


def _tool(i: int) -> dict:
    return {"name": f"tool_{i}", "description": f"does thing number {i}"}


def test_defaults_are_the_documented_ones() -> None:
    cfg = RetrievalConfig()
    assert (cfg.max_tools, cfg.max_doc_chars, cfg.max_query_chars) == (DEFAULT_MAX_TOOLS, DEFAULT_MAX_DOC_CHARS, 8_000)
    assert (DEFAULT_MAX_TOOLS, DEFAULT_MAX_DOC_CHARS) == (1_000_000, 500_000)


def test_too_many_tools_is_refused_before_embedding_and_nothing_is_added(embedder) -> None:
    kb = ToolKnowledgeBase(embedder=embedder, config=RetrievalConfig(max_tools=5))
    before = embedder.texts_embedded
    with pytest.raises(KnowledgeBaseError, match=r"max_tools=5.*RetrievalConfig\.max_tools"):
        kb.add([_tool(i) for i in range(6)])
    assert len(kb) == 0 and embedder.texts_embedded == before
    kb.add([_tool(i) for i in range(4)])
    with pytest.raises(KnowledgeBaseError, match="would make 6"):
        kb.add([_tool(10), _tool(11)])
    kb.add([_tool(0), _tool(10)])  # replacing an existing id does not count twice
    assert len(kb) == 5
    with pytest.raises(KnowledgeBaseError, match="max_tools=5"):
        kb.sync([_tool(i) for i in range(20, 26)])
    assert sorted(kb.ids) == sorted([*(f"tool_{i}" for i in range(4)), "tool_10"])


def test_a_runaway_generator_is_not_read_to_its_end(embedder) -> None:
    consumed = itertools.count()

    def endless() -> Iterator[dict]:
        for i in itertools.count():
            next(consumed)
            yield _tool(i)

    kb = ToolKnowledgeBase(embedder=embedder, config=RetrievalConfig(max_tools=100))
    with pytest.raises(KnowledgeBaseError, match="more than 100 tools were given"):
        kb.add(endless())
    assert next(consumed) == 101, "reading stops at the first tool past the limit"


def test_oversized_tool_document_names_the_tool_and_its_largest_field(embedder) -> None:
    params = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "x" * 900} for i in range(700)},
    }
    kb = ToolKnowledgeBase(embedder=embedder)
    with pytest.raises(InvalidToolError) as info:
        kb.add([{"name": "bloated", "description": "d", "parameters": params}])
    assert info.value.tool == "bloated" and info.value.field in ("parameters", "input_schema")
    assert "max_doc_chars" in info.value.problem
    small = ToolKnowledgeBase(embedder=embedder, config=RetrievalConfig(max_doc_chars=2_000))
    with pytest.raises(InvalidToolError, match="limit 2000"):
        small.add([ToolDoc(name="wordy", description="y" * 3_000)])
    assert len(small) == 0


def test_query_length_limit_is_configurable_and_named_in_the_trace(embedder) -> None:
    kb = ToolKnowledgeBase.from_tools([_tool(1)], embedder=embedder)
    long = "find tool one please " * 400  # 8,400 characters of words
    result = kb.search(long, k=1)
    assert result.ids == ["tool_1"] and "max_query_chars=8000" in result.trace[0].note
    assert kb.search("q " * 4_000, k=1).trace[0].stage != "query_text"  # within the limit: as it is
    small = kb.search("tool one " * 20, k=1, config=RetrievalConfig(max_query_chars=100))
    assert small.trace[0].stage == "query_text" and "RetrievalConfig.max_query_chars=100" in small.trace[0].note


def test_an_openai_dict_with_a_216kb_description_is_cut_and_the_rest_indexed(embedder, caplog) -> None:
    huge = {"type": "function", "function": {"name": "get_manual", "description": "The manual. " * 18_000}}
    small = {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city."}}
    kb = ToolKnowledgeBase(embedder=embedder)
    with caplog.at_level("WARNING", logger="toolret"):
        assert kb.add([huge, small]) == ["get_manual", "get_weather"]
    assert len(kb.get("get_manual").description) <= 10_000
    assert "tool 'get_manual' cannot be indexed as it is" in caplog.text and "cut to the first" in caplog.text


def _search_docs(description: str) -> dict:
    query = {"type": "string", "description": description}
    return {
        "type": "function",
        "function": {
            "name": "search_docs",
            "description": "Search the documentation.",
            "parameters": {"type": "object", "properties": {"query": query}, "required": ["query"]},
        },
    }


def test_an_over_long_parameter_description_is_cut_and_the_rest_indexed(embedder, caplog) -> None:
    # issue 41 replay: a parameter's description follows the description's rule. At 216 KB it was kept
    # whole, without a word (and sent whole to the model); at 660 KB (two copies: the parameter and the
    # schema) kb.add stopped the whole list on max_doc_chars.
    small = {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city."}}
    kb = ToolKnowledgeBase(embedder=embedder)
    with caplog.at_level("WARNING", logger="toolret"):
        assert kb.add([_search_docs("The query. " * 60_000), small]) == ["search_docs", "get_weather"]
    doc = kb.get("search_docs")
    assert len(doc.parameters[0].description) <= 10_000 and doc.parameters[0].description.startswith("The query.")
    assert len(doc.parameters_schema()["properties"]["query"]["description"]) <= 10_000  # what the model is sent
    assert caplog.text.count("tool 'search_docs' cannot be indexed as it is") == 1  # one warning for both copies
    assert "parameter 'query' description is 660,000 characters" in caplog.text


def test_strict_text_limits_refuse_an_over_long_parameter_description(embedder) -> None:
    from toolret.documents.tool_doc import strict_text_limits

    kb = ToolKnowledgeBase(embedder=embedder)
    with strict_text_limits(), pytest.raises(InvalidToolError) as info:
        kb.add([_search_docs("q" * 216_000)])
    assert (
        info.value.tool == "search_docs" and "query" in info.value.field and "216,000 characters" in info.value.problem
    )
    assert len(kb) == 0
