"""``toolret train --kb``: a user fine-tunes on what the knowledge base logged, then indexes with the result."""

from __future__ import annotations

import json

import pytest

from toolret import ToolKnowledgeBase
from toolret.cli import main
from toolret.documents.tool_doc import ToolDoc

pytestmark = pytest.mark.slow

TOOLS = [
    ToolDoc(id="weather", name="get_weather", description="Current weather for a city."),
    ToolDoc(id="fx", name="convert_currency", description="Convert an amount between currencies."),
    ToolDoc(id="mail", name="send_email", description="Send an e-mail to a recipient."),
    ToolDoc(id="deploy", name="deploy_service", description="Deploy a service to an environment."),
    ToolDoc(id="ticket", name="create_ticket", description="Open a ticket in the issue tracker."),
    ToolDoc(id="flight", name="search_flights", description="Search flights between two cities."),
]
LOGGED = [
    ("is it raining in Oslo", ["weather"]),
    ("how cold is it in Berlin today", ["weather"]),
    ("100 dollars in euros", ["fx"]),
    ("what is 50 GBP in yen", ["fx"]),
    ("mail bob that the build is green", ["mail"]),
    ("write to alice about lunch", ["mail"]),
    ("ship checkout to prod", ["deploy"]),
    ("roll out the api to staging", ["deploy"]),
    ("file a bug about the login page", ["ticket"]),
    ("report that search is broken", ["ticket"]),
    ("how much are tickets from Berlin to Madrid", ["flight"]),
    ("cheapest way to fly to Rome on Friday", ["flight"]),
]


def test_train_on_logged_pairs_writes_a_model_directory_a_new_knowledge_base_uses(tmp_path, capsys) -> None:
    kb = ToolKnowledgeBase(tmp_path / "kb")
    kb.add(TOOLS)
    kb.record_many(LOGGED)
    kb.save()
    kb.close()
    out = tmp_path / "my-model"
    args = ["train", "--kb", str(tmp_path / "kb"), "--out", str(out), "--epochs", "1", "--hard-negatives", "1"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    # The knowledge base's own tools were searched for each logged request to find its near misses.
    mined = json.loads((out / "training" / "negatives.json").read_text())["kb"]
    assert set(mined) == {q for q, _ in LOGGED}
    assert f"--embedder {out}" in printed
    assert main(["index", _tools_file(tmp_path), "--kb", str(tmp_path / "new.kb"), "--embedder", str(out)]) == 0
    reopened = ToolKnowledgeBase.load(tmp_path / "new.kb")
    assert reopened.embedder.name == str(out.resolve())
    assert reopened.search("is it raining in Oslo", k=1).tools[0].name == "get_weather"
    reopened.close()


def test_train_without_logged_pairs_says_how_to_get_them(tmp_path, capsys) -> None:
    kb = ToolKnowledgeBase(tmp_path / "kb")
    kb.add(TOOLS)
    kb.save()
    kb.close()
    assert main(["train", "--kb", str(tmp_path / "kb"), "--out", str(tmp_path / "m")]) == 2
    assert "kb.record" in capsys.readouterr().err


def _tools_file(tmp_path) -> str:
    path = tmp_path / "tools.jsonl"
    path.write_text("".join(json.dumps(t.model_dump(include={"id", "name", "description"})) + "\n" for t in TOOLS))
    return str(path)


def test_a_bad_labelled_pairs_line_is_named_before_anything_trains(tmp_path, capsys) -> None:
    kb = ToolKnowledgeBase(tmp_path / "kb")
    kb.add(TOOLS)
    kb.save()
    kb.close()
    pairs = tmp_path / "labelled.jsonl"
    pairs.write_text('{"query": "rain in Oslo?", "tools": ["weather"]}\n{"query": "no tools"}\n')
    assert main(["train", "--kb", str(tmp_path / "kb"), "--out", str(tmp_path / "m"), "--pairs", str(pairs)]) == 2
    assert f"{pairs}:2" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
