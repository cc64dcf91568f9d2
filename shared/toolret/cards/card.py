"""Condensed tool cards: what the agent reads about a tool, in fewer tokens (EasyTool).

Retrieval needs rich documents; the agent that calls the tool needs a short, exact one. A
:class:`CondensedCard` holds a concise description (purpose, built-in functions, when to use),
a usage line and one example call. :class:`LLMCardWriter` asks a model for it (prompt
``CARD_V1``); :func:`offline_card` derives one without a model. Every card is checked by
:func:`card_problems` against the tool's real schema — the example must call this tool, use only
its parameter names, give every required one, with values of the declared JSON types — and an
invalid LLM card is retried once with the problems fed back, then replaced by the offline card.

Adapters hand the agent :func:`agent_description` (opt-in) instead of the raw description.
Token counts here are ``ceil(characters / 4)``: tokenizer-free, good enough to compare.

Example:
    >>> from toolret.cards.card_type import card_problems
    >>> from toolret.cards.offline import offline_card
    >>> from toolret.documents.tool_doc import ToolDoc, ToolParam
    >>> doc = ToolDoc(name="get_weather", description="Weather now for a city. Backed by METAR.",
    ...               parameters=[ToolParam(name="city", type="string", required=True)])
    >>> card = offline_card(doc)
    >>> card.example.arguments, card_problems(card, doc)
    ({'city': '<city>'}, [])
    >>> print(card.text())
    Weather now for a city.
    Usage: call get_weather with city (string).
    Example: get_weather({"city": "<city>"})
    >>> agent_description(doc.model_copy(update={"expansion": doc.expansion.model_copy(
    ...     update={"card": card.model_dump()})}))
    'Weather now for a city.'
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from toolret.cards.card_type import CondensedCard, card_problems
from toolret.cards.offline import offline_card
from toolret.documents.tool_doc import ToolDoc
from toolret.index.expansion import ExpansionCache
from toolret.llm.prompts import CARD_V1, render
from toolret.llm.protocol import LLM, ChatMessage, astructured_call

__all__ = ["LLMCardWriter", "agent_description"]

logger = logging.getLogger("toolret")


def agent_description(doc: ToolDoc, *, condensed: bool = True, example: bool | None = None) -> str:
    """The text an agent gets for ``doc``: its card when ``condensed`` and it has one, else the description.

    An LLM card gives description, usage and example call; an offline card only its description
    (the first sentence): its usage line and example restate the parameter schema the agent
    already gets, so they would cost tokens without adding anything. ``example`` overrides that.
    """
    if condensed and doc.expansion.card:
        try:
            card = CondensedCard.model_validate(doc.expansion.card)
        except ValueError:
            logger.warning("stored card of %r is invalid; using the raw description", doc.name)
            return doc.description
        from_llm = card.source != "offline"
        return card.text(usage=from_llm, example=from_llm if example is None else example)
    return doc.description


class LLMCardWriter:
    """Write condensed cards with an LLM; validated against the schema, cached like expansions."""

    def __init__(
        self,
        llm: LLM,
        *,
        cache: ExpansionCache | None = None,
        concurrency: int = 4,
        timeout: float = 60.0,
        retries: int = 1,
    ) -> None:
        self.llm, self.cache = llm, cache or ExpansionCache()
        self.concurrency, self.timeout, self.retries = max(1, concurrency), timeout, retries
        self.model = str(getattr(llm, "name", type(llm).__name__))
        self.calls = 0

    def write(self, docs: Sequence[ToolDoc]) -> list[ToolDoc]:
        """Copies of ``docs`` with ``expansion.card`` set (an LLM card if valid, else the offline card)."""
        return asyncio.run(self.awrite(docs))

    async def awrite(self, docs: Sequence[ToolDoc]) -> list[ToolDoc]:
        sem = asyncio.Semaphore(self.concurrency)

        async def one(doc: ToolDoc) -> ToolDoc:
            async with sem:
                card = await self._card(doc)
            return doc.model_copy(update={"expansion": doc.expansion.model_copy(update={"card": card.model_dump()})})

        return list(await asyncio.gather(*(one(d) for d in docs)))

    async def _card(self, doc: ToolDoc) -> CondensedCard:
        key = ExpansionCache.key(doc, self.model, CARD_V1.id)
        cached = self.cache.get(key)
        if cached is not None:
            return CondensedCard.model_validate(cached)
        messages = render(CARD_V1, tool=doc.card())
        card: CondensedCard | None = None
        for _attempt in range(2):
            try:
                self.calls += 1
                out = await astructured_call(
                    self.llm, messages, CondensedCard, timeout=self.timeout, retries=self.retries
                )
            except Exception as exc:  # noqa: BLE001 - a failed card falls back to the offline one
                logger.warning("card for %r failed: %s", doc.name, exc)
                break
            problems = card_problems(out, doc)
            if not problems:
                card = out.model_copy(update={"source": f"llm:{self.model}:{CARD_V1.id}"})
                break
            messages = [
                *messages,
                ChatMessage(role="assistant", content=out.model_dump_json()),
                ChatMessage(
                    role="user",
                    content="That card does not fit the tool's schema: "
                    + "; ".join(problems)
                    + ". Answer again with the JSON object only.",
                ),
            ]
        card = card or offline_card(doc)
        self.cache.put(key, card.model_dump())
        return card
