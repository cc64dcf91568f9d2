"""The follow-up rule: what counts as referring back, and what the context query holds."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langchain_toolret.conversation import conversation_query, follow_up_query, refers_back


@pytest.mark.parametrize(
    "text",
    ["and in Rome?", "what about Lyon", "do it again", "book a table there", "same for tomorrow"],
)
def test_continuations_refer_back(text):
    assert refers_back(text)


@pytest.mark.parametrize(
    "text",
    [
        "play some jazz",
        "turn on the kitchen lights",
        "convert 20 euros to yen",
        "is it raining in Oslo? also convert 100 dollars to euros",  # a pronoun alone is not enough
        "send that file to Bob",
    ],
)
def test_new_requests_do_not_refer_back(text):
    assert not refers_back(text)


def test_the_query_is_the_latest_message_whole_and_context_is_separate():
    long = "summarise " + "word " * 3_000
    chat = [HumanMessage("first request"), AIMessage("ok"), HumanMessage(long)]
    assert conversation_query(chat) == " ".join(long.split())  # no adapter cut: the engine's rule applies
    assert follow_up_query(chat).endswith("(context: first request)")
    assert follow_up_query(chat[:1]) is None and conversation_query([AIMessage("hi")]) is None
