"""Hard negatives mined by the engine itself: the tools it ranks high for a request that do not serve it.

In-batch negatives are random tools of the same registry; most are easy (a weather request
against a payments tool). The confusions that cost recall are the near misses the engine
actually ranks above the right tool: ``reserve_table`` for "I no longer need reservation
BK-2291", Jira tickets for "how much are tickets from Berlin to Madrid". Those are found by
searching each training request with the engine (``fast``, the stock model) over its own
registry and keeping the top-ranked tools that are not relevant.

A mined negative must be a true one (issue 26's pilot found 6.9 % of naively mined negatives
false). Dropped: every tool relevant to the request, any tool that shares a name with a relevant
tool (bfcl holds up to dozens of documents of one function under one name) and any tool whose
document or description is the same text as a relevant tool's (a copy under another name).

Example:
    >>> from toolret.documents.tool_doc import ToolDoc
    >>> from toolret.training.pairs import pairs_from_bundles
    >>> tools = {t.id: t for t in [
    ...     ToolDoc(id="w", name="get_weather", description="Current weather for a city."),
    ...     ToolDoc(id="f", name="get_forecast", description="Weather forecast for the next days."),
    ...     ToolDoc(id="m", name="send_mail", description="Send an e-mail.")]}
    >>> pairs = pairs_from_bundles("demo", tools, [("is it raining in Oslo now?", ["w"])])
    >>> mined = mine_hard_negatives(pairs, {"demo": tools}, per_pair=1)
    >>> [n.tool_id for n in mined[0].negatives]
    ['f']
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolret.documents.tool_doc import ToolDoc
from toolret.training.pairs import HardNegative, TrainingPair, document_text

__all__ = ["MINE_DEPTH", "mine_hard_negatives"]

logger = logging.getLogger("toolret")

#: How deep in the engine's ranking negatives are looked for.
MINE_DEPTH = 30


def mine_hard_negatives(
    pairs: Sequence[TrainingPair],
    tools: Mapping[str, Mapping[str, ToolDoc]],
    *,
    per_pair: int = 8,
    embedder: Any = None,
    preset: str = "fast",
    cache: str | Path | None = None,
) -> list[TrainingPair]:
    """``pairs`` with up to ``per_pair`` hard negatives each, from ``tools[pair.registry]``.

    Each registry is indexed once with ``embedder`` (default: the stock MiniLM that training starts
    from, not the shipped default, whose training data would shape the negatives) and each
    distinct request searched once with ``preset``. ``cache`` (a JSON file) keeps the mined ids
    per registry and request, so leave-one-registry-out folds and a resumed run mine only once.
    """
    from toolret import ToolKnowledgeBase
    from toolret.index.embedding import STOCK_EMBEDDER_NAME

    stored: dict[str, dict[str, list[str]]] = {}
    cache_path = Path(cache) if cache is not None else None
    if cache_path is not None and cache_path.is_file():
        stored = json.loads(cache_path.read_text())
    relevant_of: dict[str, dict[str, frozenset[str]]] = {}
    for p in pairs:
        relevant_of.setdefault(p.registry, {})[p.query] = p.relevant
    texts: dict[tuple[str, str], str] = {}

    def text(registry: str, tool_id: str) -> str:
        if (registry, tool_id) not in texts:
            texts[registry, tool_id] = document_text(tools[registry][tool_id])
        return texts[registry, tool_id]

    for registry, queries in relevant_of.items():
        known = stored.setdefault(registry, {})
        todo = [q for q in queries if q not in known]
        if not todo:
            continue
        kb = ToolKnowledgeBase(None, embedder=embedder if embedder is not None else STOCK_EMBEDDER_NAME)
        try:
            kb.add(list(tools[registry].values()))
            for query in todo:
                known[query] = kb.search(query, k=MINE_DEPTH, config=preset).ids
        finally:
            kb.close()
        logger.info("mined hard negatives for %d requests of registry %s", len(todo), registry)
        if cache_path is not None:
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            cache_path.write_text(json.dumps(stored))

    out: list[TrainingPair] = []
    for p in pairs:
        offered = tools[p.registry]
        names = {offered[t].name for t in p.relevant if t in offered}
        own = {text(p.registry, t) for t in p.relevant if t in offered}
        own_descriptions = {offered[t].description.strip() for t in p.relevant if t in offered} - {""}
        chosen: list[HardNegative] = []
        for tool_id in stored[p.registry][p.query]:
            if len(chosen) == per_pair:
                break
            doc = offered[tool_id]
            if (
                tool_id in p.relevant
                or doc.name in names
                or text(p.registry, tool_id) in own
                or doc.description.strip() in own_descriptions
            ):
                continue
            chosen.append(HardNegative(tool_id, doc.name, text(p.registry, tool_id)))
        out.append(dataclasses.replace(p, negatives=tuple(chosen)))
    return out
