"""LlamaIndex adapter for toolret: a drop-in for ``ObjectIndex`` tool retrieval.

Change one import and a LlamaIndex agent retrieves its tools with toolret::

    from llamaindex_toolret import ToolObjectIndex

    obj_index = ToolObjectIndex.from_objects(tools)          # FunctionTools, QueryEngineTools...
    agent = FunctionAgent(tool_retriever=obj_index.as_retriever(similarity_top_k=5), llm=llm)

``as_retriever`` returns an ``ObjectRetriever`` (what the workflow agents require) that finds a
tool when the agent asks for it by exact name and keeps recently called tools on offer for
follow-up turns. ``as_node_retriever`` gives a plain ``BaseRetriever`` of ``NodeWithScore``;
``LlamaIndexLLM`` lets toolret's LLM steps use a LlamaIndex ``LLM``.
Install with ``pip install 'toolret[llamaindex]'``.
"""

from __future__ import annotations

from llamaindex_toolret.embedding import ToolretEmbedding, embedder_from_llamaindex
from llamaindex_toolret.ingest import as_tool, doc_to_tool, tool_to_doc
from llamaindex_toolret.llm import LlamaIndexLLM
from llamaindex_toolret.mapping import ToolNodeMapping
from llamaindex_toolret.object_index import ToolObjectIndex
from llamaindex_toolret.retrievers import ToolObjectRetriever, ToolRetriever

__all__ = [
    "LlamaIndexLLM",
    "ToolNodeMapping",
    "ToolObjectIndex",
    "ToolObjectRetriever",
    "ToolRetriever",
    "ToolretEmbedding",
    "as_tool",
    "doc_to_tool",
    "embedder_from_llamaindex",
    "tool_to_doc",
]
