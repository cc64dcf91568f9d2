"""Offline query planning: multi-part requests split into sub-tasks, single requests stay whole."""

from __future__ import annotations

from toolret.search.planning import MAX_SUBTASKS, plan_offline


def texts(query: str) -> list[str]:
    return [s.text for s in plan_offline(query).subtasks]


def test_sentences_and_sequencers_split_requests():
    assert texts("Show me the weather forecast for tomorrow and also convert it into a PDF file.") == [
        "Show me the weather forecast for tomorrow",
        "convert it into a PDF file.",
    ]
    assert texts("What is the current temperature in my city? I also want to know recent news about the weather.") == [
        "What is the current temperature in my city?",
        "I also want to know recent news about the weather.",
    ]
    assert len(texts("Book a flight to Rome, then find a hotel near the Colosseum; after that rent a car")) == 3


def test_conjunction_inside_one_request_does_not_split():
    assert texts("Find the area of a triangle with a base of 10 units and height of 5 units.") == [
        "Find the area of a triangle with a base of 10 units and height of 5 units."
    ]
    assert texts("Recommend courses on accounting principles and investment strategies") == [
        "Recommend courses on accounting principles and investment strategies"
    ]


def test_fragments_too_short_to_be_requests_are_merged():
    assert texts("Convert 100 dollars to euros. Thanks!") == ["Convert 100 dollars to euros. Thanks!"]


def test_long_lists_are_not_treated_as_many_requests():
    query = "Check A; check B; check C; check D; check E; check F"
    assert len(texts(query)) <= MAX_SUBTASKS


def test_each_subtask_has_itself_as_its_variant():
    plan = plan_offline("Get the stock price of Apple and any recent news about the company")
    assert [s.variants for s in plan.subtasks] == [[s.text] for s in plan.subtasks]
    assert plan.path == "offline" and plan.original.startswith("Get the stock")


def test_asks_are_questions_requests_or_imperatives_and_statements_are_not():
    from toolret.search.planning import asks_for_something

    for ask in (
        "What's the weather in Oslo?",
        "Can you find me a flight",
        "I'm planning a trip next week, could you give me the forecast",
        '"I need to find a restaurant with vegetarian options',
        "Hello! I want to improve my communication skills.",
        "also book a hotel near the station",
        "Provide guidelines to use PEGASUS for this purpose.",
        "I'm looking for a course on digital marketing.",
    ):
        assert asks_for_something(ask), ask
    for statement in (
        "The company needs to summarize articles for its news application.",
        "A startup is working on a computer vision application supporting autonomous drones.",
        "I'm planning a trip to Japan with my family next month.",
        "historic performance.",
        "Ich brauche einen Flug nach Berlin.",
    ):
        assert not asks_for_something(statement), statement
