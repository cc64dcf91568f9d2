"""``toolret doctor`` through the real CLI, on a knowledge base ``toolret index`` built with the packaged embedder:
every planted problem (a near-copy, an empty description, a 400-parameter schema, a name two sources share, a
thin description) is named, with its tool ids, in the table and the JSON, and the exit status is 0."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolret.cli import main


def _function(name: str, description: str, params: dict[str, str], required: list[str] | None = None) -> dict:
    properties = {p: {"type": "string", "description": d} for p, d in params.items()}
    schema = {"type": "object", "properties": properties, "required": list(params) if required is None else required}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


SOUND = [
    _function(
        "get_weather",
        "Current weather and the forecast for the next days in a city: temperature, rain, wind and humidity.",
        {"city": "City name, e.g. Paris"},
    ),
    _function(
        "convert_currency",
        "Convert an amount of money from one currency to another at today's exchange rate.",
        {"amount": "How much money", "from_currency": "ISO code, e.g. EUR", "to_currency": "ISO code, e.g. JPY"},
    ),
    _function(
        "send_email",
        "Send an e-mail message with a subject and a body to a recipient's address.",
        {"to": "Recipient address", "subject": "Subject line", "body": "Message text"},
    ),
    _function(
        "book_flight",
        "Book a plane ticket between two airports on a given date and return the booking reference.",
        {"origin": "Airport code", "destination": "Airport code", "date": "Departure date"},
    ),
    _function(
        "create_calendar_event",
        "Create a meeting or an appointment in the user's calendar at a date and time.",
        {"title": "Event title", "date": "Day", "time": "Start time"},
    ),
    _function(
        "translate_text",
        "Translate a text into another language and return the translation.",
        {"text": "Text to translate", "target_language": "Language name"},
    ),
    _function(
        "get_stock_price",
        "Latest stock market price of a listed company, by its ticker symbol.",
        {"ticker": "Ticker symbol, e.g. ACME"},
    ),
    _function(
        "calculate_mortgage",
        "Monthly repayment of a home loan from the principal, the yearly interest rate and the term in years.",
        {"principal": "Loan amount", "annual_rate": "Interest rate", "years": "Term"},
    ),
    _function(
        "set_reminder",
        "Set a reminder that notifies the user with a message at a given time.",
        {"message": "What to remind", "when": "Time"},
    ),
    _function(
        "read_file",
        "Read a text file from the local disk and return its whole content.",
        {"path": "File path"},
    ),
]
#: The planted problems.
NEAR_COPY = _function(
    "fetch_weather_report",
    "Current weather and the forecast for the next days in a city: temperature, rain, wind and humidity.",
    {"city": "City name, e.g. Paris"},
)
EMPTY = _function("sync_ledger", "", {"ledger_id": "Ledger"})
HUGE = _function(
    "configure_cluster",
    "Configure every setting of a compute cluster in one call.",
    {f"setting_{i:03d}": f"Value of cluster setting number {i}, as documented in the admin guide" for i in range(400)},
    required=[],
)
THIN = _function("purge_cache", "Purge cache.", {})
#: A second source with its own send_email (same name, another id once indexed with --on-conflict rename).
CRM = [_function("send_email", "Send a marketing e-mail campaign to a CRM contact list.", {"list_id": "List"})]


@pytest.fixture(scope="module")
def planted_kb(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("doctor")
    tools, crm = folder / "tools.json", folder / "crm.json"
    tools.write_text(json.dumps([*SOUND, NEAR_COPY, EMPTY, HUGE, THIN]))
    crm.write_text(json.dumps(CRM))
    kb = folder / "planted.kb"
    assert main(["index", str(tools), "--kb", str(kb)]) == 0
    assert main(["index", str(crm), "--kb", str(kb), "--on-conflict", "rename"]) == 0
    return kb


@pytest.mark.slow
def test_doctor_names_every_planted_problem_with_its_tool_ids(planted_kb, tmp_path):
    out = tmp_path / "doctor.json"
    done = subprocess.run(
        [sys.executable, "-m", "toolret.cli", "doctor", "--kb", str(planted_kb), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    found = {(f["kind"], tuple(sorted(f["tool_ids"]))) for f in report["findings"]}
    assert ("near_duplicate", ("fetch_weather_report", "get_weather")) in found
    assert ("empty_description", ("sync_ledger",)) in found
    assert ("heavy_definition", ("configure_cluster",)) in found
    assert ("name_collision", ("crm/send_email", "send_email")) in found
    assert ("thin_description", ("purge_cache",)) in found
    heavy = next(f for f in report["findings"] if f["kind"] == "heavy_definition")
    assert heavy["detail"]["parameters"] == 400 and heavy["detail"]["tokens"] > 5000
    collision = next(f for f in report["findings"] if f["kind"] == "name_collision")
    assert sorted(Path(source).name for source in collision["detail"]["sources"]) == ["crm.json", "tools.json"]
    # Only the planted tools are flagged: the ten sound ones are described, distinct, light and reached.
    flagged = {t["id"] for t in report["tools"] if t["findings"]}
    assert flagged <= {"fetch_weather_report", "get_weather", "sync_ledger", "configure_cluster", "purge_cache"} | {
        "send_email",
        "crm/send_email",
    }
    sound = [t for t in report["tools"] if t["id"] in {f["function"]["name"] for f in SOUND[1:]} - {"send_email"}]
    assert len(sound) == 8 and all(t["reach"] == 1.0 for t in sound)
    assert report["settings"]["tools"] == 15 and report["settings"]["embedder"].startswith("packaged:")
    # The table names them too, with what to do.
    for name in ("fetch_weather_report", "sync_ledger", "configure_cluster", "crm/send_email", "purge_cache"):
        assert name in done.stdout
    assert "near duplicate (1, high): say in each what sets it apart" in done.stdout
    assert f"wrote the report to {out}" in done.stdout


def test_the_near_copy_and_the_original_cannot_both_rank_first_for_their_requests(planted_kb):
    from toolret import ToolKnowledgeBase
    from toolret.eval.doctor import diagnose

    report = diagnose(ToolKnowledgeBase.load(planted_kb))
    reach = {t.id: t for t in report.tools}
    pair = reach["get_weather"].ranked_first + reach["fetch_weather_report"].ranked_first
    assert pair < reach["get_weather"].requests + reach["fetch_weather_report"].requests
    assert reach["sync_ledger"].requests == 1  # no description: its name is its only request
    assert report.settings["requests_from"].startswith("offline")


def test_doctor_on_a_missing_knowledge_base_is_an_error_not_a_traceback(tmp_path, capsys):
    assert main(["doctor", "--kb", str(tmp_path / "nowhere.kb")]) == 2
    assert "nowhere.kb" in capsys.readouterr().err
