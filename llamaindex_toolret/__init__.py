"""LlamaIndex adapter for toolret: a drop-in for ``ObjectIndex`` tool retrieval (docs/llamaindex.md).

``ToolObjectIndex.from_objects(tools).as_retriever(similarity_top_k=5)`` is the ``tool_retriever``
of any workflow agent. Install with ``pip install 'toolret[llamaindex]'``.
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
