"""Batches for contrastive training: one registry per batch, no false negatives inside a batch.

With in-batch negatives (:mod:`toolret.training.trainer`) every other document of a batch is a
negative for every request in it. Two rules make those negatives true and useful:

* **one registry per batch** — the negatives are tools the request's own registry also offers,
  the choice the engine really faces (weather vs. another weather API, not weather vs. a
  HuggingFace model card), at no extra cost per step;
* **no conflicts** — a batch never holds two pairs whose tools are the same, share a name (bfcl's
  several documents of one function), or are relevant to each other's request (a multi-tool
  request's second tool is not a negative of its first), nor the same request twice.

Pairs that fit no open batch start a new one; the last, short batches of a registry are dropped
when they fall below ``min_size`` (a batch of one teaches nothing). The plan is a pure function
of the pairs and the seed, so a resumed run replays the same batches.

Example:
    >>> from toolret.training.pairs import TrainingPair
    >>> p = [TrainingPair("r", f"q{i}", f"t{i}", f"t{i}", f"doc {i}", frozenset({f"t{i}"})) for i in range(6)]
    >>> [len(b) for b in plan_batches(p, batch_size=4, seed=0, min_size=2)]
    [4, 2]
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolret.training.pairs import TrainingPair

__all__ = ["batch_columns", "plan_batches"]

#: How many open batches a pair is tried against before it starts a new one.
_OPEN_LIMIT = 64


@dataclass
class _Open:
    pairs: list[TrainingPair] = field(default_factory=list)
    tools: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    relevant: set[str] = field(default_factory=set)
    queries: set[str] = field(default_factory=set)

    def accepts(self, pair: TrainingPair) -> bool:
        return not (
            pair.tool_id in self.tools
            or pair.tool_name in self.names
            or pair.tool_id in self.relevant
            or not self.tools.isdisjoint(pair.relevant)
            or pair.query in self.queries
        )

    def add(self, pair: TrainingPair) -> None:
        self.pairs.append(pair)
        self.tools.add(pair.tool_id)
        self.names.add(pair.tool_name)
        self.relevant |= pair.relevant
        self.queries.add(pair.query)


def _registry_batches(pairs: list[TrainingPair], batch_size: int) -> list[list[TrainingPair]]:
    done: list[list[TrainingPair]] = []
    open_: list[_Open] = []
    for pair in pairs:
        target = next((b for b in open_[:_OPEN_LIMIT] if b.accepts(pair)), None)
        if target is None:
            target = _Open()
            open_.append(target)
        target.add(pair)
        if len(target.pairs) == batch_size:
            done.append(target.pairs)
            open_.remove(target)
    return done + [b.pairs for b in open_]


def plan_batches(
    pairs: Sequence[TrainingPair], *, batch_size: int, seed: int, min_size: int | None = None
) -> list[list[TrainingPair]]:
    """Conflict-free batches of at most ``batch_size`` pairs, one registry each, in a seeded order."""
    if batch_size < 2:
        raise ValueError("batch_size must be at least 2: in-batch negatives need a second pair")
    floor = max(2, batch_size // 4) if min_size is None else min_size
    rng = random.Random(seed)
    by_registry: dict[str, list[TrainingPair]] = {}
    for pair in pairs:
        by_registry.setdefault(pair.registry, []).append(pair)
    batches: list[list[TrainingPair]] = []
    for registry in sorted(by_registry):
        group = list(by_registry[registry])
        rng.shuffle(group)
        # A registry of five tools can never fill a batch past five: its floor is what it can reach.
        reachable = min(floor, len({p.tool_name for p in group}))
        batches.extend(b for b in _registry_batches(group, batch_size) if len(b) >= max(2, reachable))
    rng.shuffle(batches)
    return batches


def batch_columns(batch: Sequence[TrainingPair], hard_negatives: int) -> tuple[list[str], list[set[int]]]:
    """The documents a batch is scored against, and for each request the columns it must not see.

    The first ``len(batch)`` columns are the pairs' own documents (request ``i``'s positive is
    column ``i``); then each pair's first ``hard_negatives`` mined negatives, each tool once. A
    negative mined for one request can be relevant to another of the batch, or share a name with
    one of its relevant tools: that column is masked in that request's row, so no request is
    pushed away from a tool that serves it. The rule covers the other pairs' own documents too:
    the batch plan keeps them apart by tool and name, but a multi-tool request's other tools are
    known to it only by name (``relevant_names``).

    Example:
        >>> from toolret.training.pairs import HardNegative, TrainingPair
        >>> a = TrainingPair("r", "qa", "a", "a", "doc a", frozenset({"a"}), (HardNegative("b", "b", "doc b"),))
        >>> b = TrainingPair("r", "qb", "c", "c", "doc c", frozenset({"c", "b"}))
        >>> batch_columns([a, b], 1)
        (['doc a', 'doc c', 'doc b'], [set(), {2}])
    """
    docs = [p.document for p in batch]
    ids = [p.tool_id for p in batch]
    names = [p.tool_name for p in batch]
    if hard_negatives > 0:
        for p in batch:
            for n in p.negatives[:hard_negatives]:
                if n.tool_id not in ids:
                    docs.append(n.document)
                    ids.append(n.tool_id)
                    names.append(n.tool_name)
    masked: list[set[int]] = []
    for i, p in enumerate(batch):
        own_names = p.relevant_names | {p.tool_name}
        masked.append({c for c in range(len(ids)) if c != i and (ids[c] in p.relevant or names[c] in own_names)})
    return docs, masked
