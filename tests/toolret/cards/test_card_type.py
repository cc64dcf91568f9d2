"""The condensed card type and its schema check (toolret.cards.card_type)."""

from __future__ import annotations

from tests.toolret.cards.test_card import DOC, VALID
from toolret.cards import CondensedCard, ExampleCall, card_problems, tokens


def test_card_problems_catch_every_schema_mismatch():
    card = CondensedCard(description="x", example=ExampleCall(name="convert", arguments={"amount": "20", "frm": 1}))
    problems = card_problems(card, DOC)
    assert any("calls 'convert'" in p for p in problems)
    assert any("unknown argument 'frm'" in p for p in problems)
    assert any("'amount' should be number" in p for p in problems)
    assert any("lacks required argument(s) to" in p for p in problems)
    assert card_problems(CondensedCard.model_validate(VALID), DOC) == []


def test_tokens_are_characters_over_four():
    assert tokens("") == 0 and tokens("abcd") == 1 and tokens("abcde") == 2
