"""Batches for contrastive training hold no false negatives and one registry each."""

from __future__ import annotations

import pytest

from toolret.training.batches import plan_batches
from toolret.training.pairs import TrainingPair


def _pair(
    registry: str, query: str, tool: str, name: str | None = None, relevant: tuple[str, ...] = ()
) -> TrainingPair:
    return TrainingPair(registry, query, tool, name or tool, f"doc of {tool}", frozenset(relevant or (tool,)))


def test_a_multi_tool_request_never_meets_its_other_tool_as_a_negative() -> None:
    pairs = [_pair("r", "book a flight and a hotel", "flight", relevant=("flight", "hotel"))]
    pairs += [_pair("r", "find me a hotel", "hotel")]
    pairs += [_pair("r", f"query {i}", f"t{i}") for i in range(10)]
    for batch in plan_batches(pairs, batch_size=4, seed=0, min_size=1):
        tools = {p.tool_id for p in batch}
        assert not ({"flight", "hotel"} <= tools), batch


def test_documents_sharing_a_name_are_not_negatives_of_each_other() -> None:
    # bfcl keeps several documents of one function under one name (ids "calc#0", "calc#1").
    pairs = [_pair("bfcl", f"q{i}", f"calc#{i}", name="calc") for i in range(4)]
    pairs += [_pair("bfcl", f"other {i}", f"t{i}") for i in range(8)]
    for batch in plan_batches(pairs, batch_size=4, seed=1, min_size=1):
        names = [p.tool_name for p in batch]
        assert len(names) == len(set(names))


def test_a_batch_holds_one_registry_and_the_plan_is_reproducible() -> None:
    pairs = [_pair(r, f"{r} q{i}", f"{r}{i}") for r in ("a", "b", "c") for i in range(9)]
    plan = plan_batches(pairs, batch_size=4, seed=7)
    assert all(len({p.registry for p in b}) == 1 for b in plan)
    assert plan == plan_batches(pairs, batch_size=4, seed=7)
    assert plan != plan_batches(pairs, batch_size=4, seed=8)


def test_a_batch_size_of_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        plan_batches([_pair("r", "q", "t")], batch_size=1, seed=0)


def _with_negatives(pair: TrainingPair, *tools: tuple[str, str]) -> TrainingPair:
    from dataclasses import replace

    from toolret.training.pairs import HardNegative

    return replace(pair, negatives=tuple(HardNegative(t, n, f"doc of {t}") for t, n in tools))


def test_without_hard_negatives_a_batch_is_scored_against_its_own_documents_only() -> None:
    from toolret.training.batches import batch_columns

    batch = [_with_negatives(_pair("r", "q1", "a"), ("x", "x")), _pair("r", "q2", "b")]
    docs, masked = batch_columns(batch, 0)
    assert docs == ["doc of a", "doc of b"]
    assert masked == [set(), set()]


def test_a_hard_negative_relevant_to_another_request_is_hidden_from_that_request_only() -> None:
    from toolret.training.batches import batch_columns

    first = _with_negatives(_pair("r", "q1", "a"), ("hotel", "hotel"), ("x", "x"))
    second = _pair("r", "book a flight and a hotel", "flight", relevant=("flight", "hotel"))
    docs, masked = batch_columns([first, second], 2)
    assert docs == ["doc of a", "doc of flight", "doc of hotel", "doc of x"]
    assert masked == [set(), {2}]


def test_a_hard_negative_named_like_a_relevant_tool_is_hidden_and_each_tool_is_one_column() -> None:
    from dataclasses import replace

    from toolret.training.batches import batch_columns

    # bfcl: another document of the function the second request needs, under the same name.
    first = _with_negatives(_pair("r", "q1", "a"), ("math.gcd#2", "math.gcd"), ("b", "b"))
    second = replace(_pair("r", "gcd of 12 and 18", "math.gcd#1", "math.gcd"), relevant_names=frozenset({"math.gcd"}))
    docs, masked = batch_columns([first, second], 2)
    assert docs == ["doc of a", "doc of math.gcd#1", "doc of math.gcd#2", "doc of b"]
    assert masked == [set(), {2}]
