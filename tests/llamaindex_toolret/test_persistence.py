"""persist / from_persist_dir: the knowledge base and the tool mapping survive a restart."""

from __future__ import annotations

import json

import pytest
from llama_index.core.objects import SimpleToolNodeMapping
from llama_index.core.tools import FunctionTool

from llamaindex_toolret import ToolObjectIndex, tool_to_doc
from llamaindex_toolret.mapping import MANIFEST_FILE
from tests.llamaindex_toolret.conftest import agent_tools
from toolret import KnowledgeBaseError, ToolKnowledgeBase, ToolNotFoundError

QUERIES = ["weather in Paris", "convert 5 euros to yen", "mail bob the minutes", "shares of Tesla"]


def ranked(index: ToolObjectIndex, k: int = 3) -> list[list[str]]:
    retriever = index.as_retriever(similarity_top_k=k, keep_used=0)
    return [[t.metadata.name for t in retriever.retrieve(q)] for q in QUERIES]


def test_round_trip_reattaches_live_tools_without_re_embedding(tmp_path, embedder):
    tools = agent_tools()
    index = ToolObjectIndex.from_objects(tools)
    before = ranked(index)
    index.persist(tmp_path / "store")
    manifest = json.loads((tmp_path / "store" / MANIFEST_FILE).read_text())
    assert sorted(manifest["tools"]) == sorted(t.metadata.name for t in tools)

    fresh = agent_tools()  # a new process builds new tool objects
    embedded = embedder.texts_embedded
    loaded = ToolObjectIndex.from_persist_dir(tmp_path / "store", objects=fresh)
    assert embedder.texts_embedded == embedded
    assert ranked(loaded) == before
    assert loaded.as_retriever().retrieve("get_weather")[0] is fresh[0]


def test_stock_mapping_argument_supplies_the_tools(tmp_path):
    ToolObjectIndex.from_objects(agent_tools()).persist(str(tmp_path))
    mapping = SimpleToolNodeMapping.from_objects(agent_tools())
    loaded = ToolObjectIndex.from_persist_dir(str(tmp_path), mapping)
    assert loaded.as_retriever(similarity_top_k=1).retrieve("book a room in Lyon")[0].metadata.name == "book_hotel"


def test_missing_live_tool_is_a_clear_error(tmp_path):
    ToolObjectIndex.from_objects(agent_tools()).persist(tmp_path)
    partial = [t for t in agent_tools() if t.metadata.name not in ("send_email", "book_hotel")]
    with pytest.raises(ToolNotFoundError) as err:
        ToolObjectIndex.from_persist_dir(tmp_path, objects=partial)
    assert "'book_hotel'" in str(err.value) and "'send_email'" in str(err.value) and "objects=" in str(err.value)
    with pytest.raises(ToolNotFoundError, match="objects=tools"):
        ToolObjectIndex.from_persist_dir(tmp_path)


def test_sync_drops_tools_that_are_gone_and_indexes_changed_ones(tmp_path):
    ToolObjectIndex.from_objects(agent_tools()).persist(tmp_path)

    def get_weather(city: str) -> str:
        """Air quality index and pollen count for a city."""
        return "good"

    kept = [t for t in agent_tools() if t.metadata.name not in ("send_email", "get_weather")]
    loaded = ToolObjectIndex.from_persist_dir(
        tmp_path, objects=[*kept, FunctionTool.from_defaults(fn=get_weather)], sync=True
    )
    assert "send_email" not in loaded.knowledge_base
    retriever = loaded.as_retriever(similarity_top_k=1)
    assert retriever.retrieve("pollen levels in Munich")[0].metadata.name == "get_weather"
    assert retriever.retrieve("get_weather")[0].metadata.description.endswith("pollen count for a city.")


def test_index_built_at_a_path_saves_in_place_and_re_persisting_embeds_only_changes(tmp_path, embedder):
    index = ToolObjectIndex.from_objects(agent_tools(), path=tmp_path)
    index.persist(tmp_path)
    assert (tmp_path / "toolret.json").exists() and (tmp_path / MANIFEST_FILE).exists()

    memory_index = ToolObjectIndex.from_objects(agent_tools())
    memory_index.persist(tmp_path / "copy")

    def order_pizza(size: str) -> str:
        """Order a pizza for delivery."""
        return "ordered"

    embedded = embedder.texts_embedded
    ToolKnowledgeBase().add([tool_to_doc(order_pizza)])
    one_tool = embedder.texts_embedded - embedded  # what embedding order_pizza alone costs
    memory_index.insert_object(order_pizza)
    embedded = embedder.texts_embedded
    memory_index.persist(tmp_path / "copy")
    assert embedder.texts_embedded - embedded == one_tool  # the other tools are already there
    tools = [*agent_tools(), FunctionTool.from_defaults(fn=order_pizza)]
    loaded = ToolObjectIndex.from_persist_dir(tmp_path / "copy", objects=tools)
    assert loaded.as_retriever(similarity_top_k=1).retrieve("I want a pizza")[0].metadata.name == "order_pizza"


def test_unreadable_manifest_is_a_knowledge_base_error(tmp_path):
    ToolObjectIndex.from_objects(agent_tools()).persist(tmp_path)
    (tmp_path / MANIFEST_FILE).write_text("not json")
    with pytest.raises(KnowledgeBaseError, match=MANIFEST_FILE):
        ToolObjectIndex.from_persist_dir(tmp_path, objects=agent_tools())
    with pytest.raises(KnowledgeBaseError, match="persist"):
        ToolObjectIndex.from_persist_dir(tmp_path / "nowhere", objects=agent_tools())


def test_warmup_loads_the_model_before_the_first_request(tmp_path, embedder):
    """Reopened with nothing to embed, the model is not loaded; warmup() loads it and runs one search."""
    ToolObjectIndex.from_objects(agent_tools(), embedder=embedder).persist(tmp_path / "store")
    cold = type(embedder)(model_dir=embedder.model_dir, name=embedder.name)  # the same default model, not loaded yet
    loaded = ToolObjectIndex.from_persist_dir(tmp_path / "store", objects=agent_tools(), embedder=cold)
    assert cold._session is None and cold.texts_embedded == 0
    seconds = loaded.warmup()
    assert cold._session is not None and cold.texts_embedded >= 1 and seconds > 0
    assert loaded.as_retriever(similarity_top_k=1).retrieve("weather in Paris")[0].metadata.name == "get_weather"
