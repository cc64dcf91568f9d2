"""Arguments are not intent: what the intent fields' query leaves out, and the search that uses it."""

from __future__ import annotations

import pytest

from toolret import RetrievalConfig, ToolDoc, ToolKnowledgeBase
from toolret.scoring.candidates import query_fields, word_fields
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
    on = RetrievalConfig.preset("fast").with_(intent_without_arguments="all")
    assert query_fields(on, "list files in /var/log")["description"] == "list files in"
    assert word_fields(on, "list files in /var/log") == {}  # "all" embeds the text: no words-only field


def test_by_default_only_the_words_leave_the_values_out() -> None:
    """The default: BM25 of every field but parameters reads the request without its values; nothing more is
    embedded (the embedder reads the whole request), and a field with its own query keeps it."""
    default = RetrievalConfig.preset("fast")
    assert default.intent_without_arguments == "words"
    assert query_fields(default, "list files in /var/log") == {}
    words = word_fields(default, "list files in /var/log", own={"response"})
    assert set(words) == set(INTENT_FIELDS) - {"response"} and words["description"] == "list files in"
    assert word_fields(default, "list the files") == {}  # no value: the request itself
    assert word_fields(default.with_(intent_without_arguments="off"), "list files in /var/log") == {}


@pytest.mark.parametrize(("given", "mode"), [(True, "all"), (False, "off"), ("words", "words")])
def test_the_earlier_bool_still_reads(given: object, mode: str) -> None:
    assert RetrievalConfig.preset("fast").with_(intent_without_arguments=given).intent_without_arguments == mode


def test_an_unknown_mode_is_a_config_error_naming_the_field() -> None:
    from toolret import ToolRetError

    with pytest.raises(ToolRetError, match="intent_without_arguments"):
        RetrievalConfig.preset("fast").with_(intent_without_arguments="sometimes")


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
    on = RetrievalConfig.preset("fast").with_(intent_without_arguments="all")
    masked = {t.id: t for t in kb.search(request, k=3, config=on).tools}
    whole = {t.id: t for t in kb.search(request, k=3, config=on.with_(intent_without_arguments="off")).tools}
    assert next(iter(masked)) == "archive_folder"
    # "projects" from the path lifted list_projects; without it, it falls behind the archive tool by more
    gap_masked = masked["archive_folder"].score - masked["list_projects"].score
    gap_whole = whole["archive_folder"].score - whole["list_projects"].score
    assert gap_masked > gap_whole


@pytest.mark.slow
def test_by_default_a_file_name_no_longer_matches_a_tool_by_its_words(embedder) -> None:
    """The demo's request: the "csv" of two file names matched the csv module's descriptions word for word
    and put csv.unregister_dialect first; by default those words are not matched, and fnmatch is first."""
    from toolret.sources.stdlib_registry import stdlib_tools

    modules = ("fnmatch", "csv", "glob", "re", "shutil", "filecmp")
    kb = ToolKnowledgeBase(None, embedder=embedder)
    kb.add([t for t in stdlib_tools() if t.name.split(".")[0] in modules])
    request = "check whether 'report_*.csv' matches the file name report_2024.csv"
    whole = kb.search(request, k=3, config=RetrievalConfig.preset("fast").with_(intent_without_arguments="off"))
    default = kb.search(request, k=3)
    assert whole.tools[0].name.startswith("csv.")
    assert default.tools[0].name == "fnmatch.fnmatch"
    # the trace says what the words were matched against, and that the whole request was not
    notes = {step.stage: step.note for step in default.trace}
    assert notes["mftr"] == (
        "2 argument value(s) spotted; words matched without the values: 'check whether matches the file name'"
    )
    assert "without the values" not in {step.stage: step.note for step in whole.trace}["mftr"]
