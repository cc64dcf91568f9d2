"""LangChain and LangGraph adapters for toolret (retriever, tool selector, graph nodes).

Install with ``pip install 'toolret[langchain]'``. The adapters arrive with the LangChain
issue; this package exists so the distribution's layout is stable.
"""

from __future__ import annotations

__all__: list[str] = []
