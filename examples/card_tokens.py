"""Tokens (characters / 4) an agent reads per tool: raw tool definition vs condensed offline card.

Run: ``.venv/bin/python examples/card_tokens.py ../shared/benchmarks``. The raw definition is
what an OpenAI-style tool list carries (name, description, JSON parameters); the condensed one
swaps the description for :func:`toolret.cards.card.agent_description` and keeps the same parameters.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from toolret.cards import agent_description, offline_card, tokens
from toolret.eval.datasets import load_dataset
from toolret.sources.stdlib_registry import stdlib_tools


def definition(doc, description: str) -> str:
    schema = doc.input_schema or {"type": "object", "properties": {p.name: {"type": p.type} for p in doc.parameters}}
    return json.dumps({"name": doc.name, "description": description, "parameters": schema}, ensure_ascii=False)


def main(root: str) -> None:
    print(f"{'registry':20} {'tools':>6} {'desc raw':>9} {'desc card':>9} {'def raw':>8} {'def card':>8} {'saved':>6}")
    registries = [
        (f.name, load_dataset(f).tool_docs())
        for f in sorted(p for p in Path(root).iterdir() if (p / "tools.jsonl").is_file())
    ]
    registries.append(("python stdlib", stdlib_tools()))
    for name, docs in registries:
        cards = [
            d.model_copy(update={"expansion": d.expansion.model_copy(update={"card": offline_card(d).model_dump()})})
            for d in docs
        ]
        raw_desc = [tokens(d.description) for d in docs]
        card_desc = [tokens(agent_description(c)) for c in cards]
        raw_def = sum(tokens(definition(d, d.description)) for d in docs)
        card_def = sum(tokens(definition(c, agent_description(c))) for c in cards)
        print(
            f"{name:20} {len(docs):6} {statistics.mean(raw_desc):9.1f} {statistics.mean(card_desc):9.1f} "
            f"{raw_def / len(docs):8.1f} {card_def / len(docs):8.1f} {1 - card_def / raw_def:6.1%}"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/benchmarks")
