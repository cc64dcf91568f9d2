"""Training pairs for the tool embedder: (request, the tool's document as the index renders it).

A pair's document is the text the model sees at search time: the tool's ``description`` field
(its name split into words, then its description; :meth:`toolret.documents.tool_doc.ToolDoc.field_text`)
after the offline expansion the knowledge base applies when it indexes. Training on that exact
text is what makes a fine-tuned model help the engine rather than a different rendering of it.

Every pair keeps what batching needs to avoid false negatives (:mod:`toolret.training.batches`):
its registry (batches are drawn from one registry, so in-batch negatives are same-registry
negatives), the ids of *all* tools relevant to its request (another relevant tool is never used
as a negative) and the tool's name (bfcl holds several documents of one function under one name;
they are not negatives of each other).

Example:
    >>> from toolret.documents.tool_doc import ToolDoc
    >>> tools = {"w": ToolDoc(id="w", name="get_weather", description="Current weather.")}
    >>> [p.document for p in pairs_from_bundles("demo", tools, [("rain in Oslo?", ["w"])])]
    ['get weather: Current weather.']
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from toolret.documents.tool_doc import ToolDoc
from toolret.errors import DatasetError

__all__ = ["HardNegative", "TrainingPair", "balance", "document_text", "pairs_from_bundles"]

#: Documents longer than this many characters are cut: the model reads at most
#: :data:`toolret.training.trainer.MAX_DOC_TOKENS` tokens, and a 9,000-token MCP description
#: would otherwise cost a whole batch its memory for text the model never sees.
MAX_DOC_CHARS = 1_000


@dataclass(frozen=True)
class HardNegative:
    """A tool of the request's registry that the engine ranks high but that does not serve it
    (:mod:`toolret.training.negatives`); its name lets a batch tell it from a relevant variant."""

    tool_id: str
    tool_name: str
    document: str


@dataclass(frozen=True)
class TrainingPair:
    """One (request, relevant tool) pair with what is needed to keep its batch free of false negatives.

    ``negatives`` are the request's mined hard negatives, best-ranked first (empty until
    :func:`toolret.training.negatives.mine_hard_negatives` fills them).
    """

    registry: str
    query: str
    tool_id: str
    tool_name: str
    document: str
    relevant: frozenset[str]
    negatives: tuple[HardNegative, ...] = ()
    #: The names of all tools relevant to the request: a hard negative sharing one is a variant
    #: of a right answer (bfcl), not a negative.
    relevant_names: frozenset[str] = frozenset()


def document_text(doc: ToolDoc, field: str = "description") -> str:
    """One field of the tool as the knowledge base indexes it (offline profile applied)."""
    from toolret.index.expansion import expand_offline

    return expand_offline(doc).field_text(field)[:MAX_DOC_CHARS]  # type: ignore[arg-type]


def pairs_from_bundles(
    registry: str,
    tools: Mapping[str, ToolDoc],
    bundles: Iterable[tuple[str, Sequence[str]]],
    *,
    field_weights: Mapping[str, float] | None = None,
    seed: int = 0,
) -> list[TrainingPair]:
    """One pair per (request, relevant tool) of each bundle; a tool id not in ``tools`` is an error naming it.

    The document is the ``description`` field, or with ``field_weights`` one of the tool's
    non-empty index fields drawn with those weights (seeded per pair): the engine embeds every
    field with the same model, so a model trained on descriptions alone is a stranger to the
    parameter and profile texts it also has to embed.
    """
    texts: dict[tuple[str, str], str] = {}
    pairs: list[TrainingPair] = []
    for query, ids in bundles:
        relevant = frozenset(ids)
        names = frozenset(tools[t].name for t in ids if t in tools)
        for tool_id in ids:
            doc = tools.get(tool_id)
            if doc is None:
                raise DatasetError(f"registry {registry!r}: request {query[:60]!r} names unknown tool {tool_id!r}")
            field = "description"
            if field_weights:
                for name in field_weights:
                    if (tool_id, name) not in texts:
                        texts[tool_id, name] = document_text(doc, name)
                present = [(n, w) for n, w in field_weights.items() if w > 0 and texts[tool_id, n].strip()]
                if present:
                    rng = random.Random(f"{seed}:{registry}:{query}:{tool_id}")
                    field = rng.choices([n for n, _ in present], weights=[w for _, w in present])[0]
            if (tool_id, field) not in texts:
                texts[tool_id, field] = document_text(doc, field)
            pairs.append(
                TrainingPair(registry, query, tool_id, doc.name, texts[tool_id, field], relevant, relevant_names=names)
            )
    return pairs


def balance(pairs: Sequence[TrainingPair], cap: int, seed: int) -> list[TrainingPair]:
    """At most ``cap`` pairs per registry, drawn reproducibly, so one large set cannot dominate.

    ToolE holds 20,550 single-tool requests over 199 tools; uncapped it would be two thirds of
    the data and the model would learn that registry rather than what a tool request looks like.
    """
    by_registry: dict[str, list[TrainingPair]] = {}
    for pair in pairs:
        by_registry.setdefault(pair.registry, []).append(pair)
    out: list[TrainingPair] = []
    for registry in sorted(by_registry):
        group = by_registry[registry]
        if len(group) > cap:
            group = random.Random(f"{seed}:{registry}").sample(group, cap)
        out.extend(group)
    return out
