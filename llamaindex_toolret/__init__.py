"""LlamaIndex adapter for toolret (a drop-in for ObjectIndex tool retrieval).

Install with ``pip install 'toolret[llamaindex]'``. The adapter arrives with the LlamaIndex
issue; this package exists so the distribution's layout is stable.
"""

from __future__ import annotations

__all__: list[str] = []
