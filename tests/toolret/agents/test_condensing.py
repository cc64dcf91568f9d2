"""CondensedCopies: the framework-free part of the adapters' condensed descriptions."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from toolret import ToolDoc, ToolKnowledgeBase
from toolret.agents.condensing import CondensedCopies
from toolret.cards import agent_description

LONG = "Convert money between currencies. Rates are the central bank's daily fixing, published at 16:00."


@dataclass(frozen=True)
class Tool:
    name: str
    description: str


def _copies(kb: ToolKnowledgeBase | None, calls: list[str] | None = None) -> CondensedCopies[Tool]:
    def to_doc(tool: Tool) -> ToolDoc:
        if calls is not None:
            calls.append(tool.name)
        return ToolDoc(name=tool.name, description=tool.description)

    return CondensedCopies(
        kb,
        name=lambda t: t.name,
        description=lambda t: t.description,
        to_doc=to_doc,
        copy=lambda t, text: replace(t, description=text),
    )


def test_offline_card_cached_until_the_tool_changes():
    calls: list[str] = []
    copies = _copies(None, calls)
    tool = Tool("convert_currency", LONG)
    first = copies.get(tool)
    assert first.description == "Convert money between currencies." and tool.description == LONG
    assert copies.get(tool) is first and calls == ["convert_currency"]  # cached: no second document
    changed = Tool("convert_currency", LONG + " Weekends repeat Friday's rate.")
    assert copies.get(changed) is not first and calls == ["convert_currency"] * 2 and len(copies) == 1
    short = Tool("ask_user", "Ask the user a question.")
    assert copies.get(short) is short  # nothing shorter: the original is handed over


def test_the_indexed_document_wins_and_a_failure_keeps_the_raw_tool(embedder, caplog, monkeypatch):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(
        [
            ToolDoc(
                name="convert_currency",
                description="Exchange an amount of money into another currency. Uses daily rates.",
            )
        ]
    )
    copies = _copies(kb)
    tool = Tool("convert_currency", LONG)
    assert copies.get(tool).description == agent_description(kb.get("convert_currency"))

    def broken(tool_id: str) -> ToolDoc:
        raise RuntimeError("store offline")

    monkeypatch.setattr(kb, "get", broken)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        assert copies.get(tool) is tool and copies.get(tool) is tool
    assert caplog.text.count("store offline") == 1  # warned once per tool
