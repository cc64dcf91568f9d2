"""Arguments are not intent: what the intent fields' query leaves out, and the search that uses it."""

from __future__ import annotations

import pytest

from toolret import RetrievalConfig, ToolDoc, ToolKnowledgeBase
from toolret.scoring.candidates import query_fields
from toolret.scoring.intent import INTENT_FIELDS, intent_field_texts, intent_text


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("list files in /var/log", "list files in"),
        ("back up ~/projects/site tonight", "back up tonight"),
        ("star acme/web-app for me", "star for me"),  # a slug with a hyphen
        ("fork acme/widgets on GitHub", "fork on GitHub"),  # a slug where the request speaks of repositories
        ("ping @jane.doe about it", "ping about it"),
        ("mail the report to bob@example.com", "mail the report to"),
        ("open https://example.com/a?b=1 in a tab", "open in a tab"),
        ('search for "machine learning" papers', "search for papers"),
        ("convert 100 dollars to euros", "convert dollars to euros"),
    ],
)
def test_argument_values_leave_the_intent_text(query: str, intent: str) -> None:
    assert intent_text(query) == intent


@pytest.mark.parametrize(
    "query",
    [
        "compute the SHA-256 digest",  # a number inside a name is the name
        "read and/or write the settings",  # two words with a slash, no repository in sight
        "what is the weather in Oslo tomorrow?",  # dates and proper nouns are often the intent
        "42",  # nothing but a value: the request itself is searched
    ],
)
def test_nothing_is_taken_where_nothing_is_a_value(query: str) -> None:
    assert intent_text(query) is None


def test_explicit_field_texts_win_and_parameters_keep_the_whole_request() -> None:
    fields = intent_field_texts("list files in /var/log", {"response": "the file names"})
    assert fields["response"] == "the file names" and fields["description"] == "list files in"
    assert "parameters" not in fields and set(fields) == set(INTENT_FIELDS)
    off = RetrievalConfig.preset("fast")
    assert not off.intent_without_arguments and query_fields(off, "list files in /var/log") == {}
    on = off.with_(intent_without_arguments=True)
    assert query_fields(on, "list files in /var/log")["description"] == "list files in"


@pytest.mark.slow
def test_a_path_no_longer_pulls_the_tool_named_by_its_words(embedder) -> None:
    kb = ToolKnowledgeBase(None, embedder=embedder)
    kb.add(
        [
            ToolDoc(name="archive_folder", description="Compress a local folder into a zip archive."),
            ToolDoc(name="list_projects", description="List the projects of a GitHub organisation."),
            ToolDoc(name="send_email", description="Send an e-mail message to a recipient."),
        ]
    )
    request = "zip up ~/projects/site"
    on = RetrievalConfig.preset("fast").with_(intent_without_arguments=True)
    masked = {t.id: t for t in kb.search(request, k=3, config=on).tools}
    whole = {t.id: t for t in kb.search(request, k=3).tools}
    assert next(iter(masked)) == "archive_folder"
    # "projects" from the path lifted list_projects; without it, it falls behind the archive tool by more
    gap_masked = masked["archive_folder"].score - masked["list_projects"].score
    gap_whole = whole["archive_folder"].score - whole["list_projects"].score
    assert gap_masked > gap_whole
