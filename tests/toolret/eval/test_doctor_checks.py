"""The doctor's checks one by one, over knowledge bases built with the real packaged embedder."""

from __future__ import annotations

from toolret.documents.tool_doc import ToolDoc, ToolParam
from toolret.eval.doctor_checks import (
    descriptions,
    heavy_definitions,
    name_collisions,
    near_duplicates,
    offline_requests,
    reach,
    unreached,
)

WEATHER = "Current weather and the forecast for the next days in a city: temperature, rain, wind and humidity."
DISTINCT = [
    ToolDoc(name="convert_currency", description="Convert an amount of money from one currency to another."),
    ToolDoc(name="send_email", description="Send an e-mail message with a subject and a body to a recipient."),
    ToolDoc(name="book_flight", description="Book a plane ticket between two airports on a given date."),
]


def test_copies_under_other_names_are_one_finding_naming_every_copy(make_kb):
    copies = [ToolDoc(name=n, description=WEATHER) for n in ("get_weather", "weather_now", "fetch_weather_report")]
    kb = make_kb([*copies, *DISTINCT])
    (finding,) = near_duplicates(kb._writer.snapshot)
    assert sorted(finding.tool_ids) == ["fetch_weather_report", "get_weather", "weather_now"]
    assert finding.severity == "high" and finding.detail["same_words"]
    assert "merge them" in finding.message


def test_distinct_tools_are_no_near_duplicates(make_kb):
    assert near_duplicates(make_kb(DISTINCT)._writer.snapshot) == []


def test_empty_and_thin_descriptions_are_told_apart():
    docs = [
        ToolDoc(name="sync_ledger"),
        ToolDoc(name="purge_cache", description="Purge cache."),
        ToolDoc(name="get_record", description="get record"),
        *DISTINCT,
    ]
    assert [(f.kind, f.tool_ids) for f in descriptions(docs)] == [
        ("empty_description", ["sync_ledger"]),
        ("thin_description", ["purge_cache"]),
        ("thin_description", ["get_record"]),
    ]


def test_a_heavy_definition_names_its_tokens_and_parameters():
    params = [ToolParam(name=f"p{i}", type="string", description="a setting") for i in range(3)]
    doc = ToolDoc(name="configure", description="Configure it.", parameters=params)
    (finding,) = heavy_definitions({"configure": 1500, "send_email": 90}, [doc, DISTINCT[1]])
    assert finding.tool_ids == ["configure"] and finding.detail["tokens"] == 1500
    assert finding.detail["parameters"] == 3 and "1,500 tokens" in finding.message


def test_a_name_two_sources_share_is_a_collision_naming_both_ids_and_sources():
    docs = [
        ToolDoc(id="crm/create_lead", name="create_lead", description="Create a lead.", metadata={"mcp_server": "crm"}),
        ToolDoc(id="mkt/create_lead", name="create_lead", description="Create a lead.", metadata={"mcp_server": "mkt"}),
        *DISTINCT,
    ]
    (finding,) = name_collisions(docs)
    assert finding.tool_ids == ["crm/create_lead", "mkt/create_lead"] and finding.detail["sources"] == ["crm", "mkt"]


def test_a_tool_its_own_requests_do_not_reach_is_named_with_the_tool_ranked_instead(make_kb):
    copies = [ToolDoc(name=n, description=WEATHER) for n in ("weather_now", "weather_today", "weather_report")]
    kb = make_kb([*copies, *DISTINCT])
    docs = kb.docs()
    reached = reach(docs, offline_requests, lambda request: kb.search(request, k=1).ids[0])
    assert all(reached[d.id].share == 1.0 for d in DISTINCT)
    assert sum(reached[c.id].first for c in copies) < 6  # one purpose sentence, three tools: two lose it
    flagged = unreached(docs, reached, share=1.0)
    assert len(flagged) == 2 and {f.tool_ids[0] for f in flagged} < {c.id for c in copies}
    for finding in flagged:
        (winner,) = finding.detail["ranked_first_instead"]
        assert winner in {c.id for c in copies} - set(finding.tool_ids) and f"{winner} instead" in finding.message


def test_offline_requests_are_the_purpose_sentence_and_the_name_with_required_arguments():
    doc = ToolDoc(
        name="getCityWeather",
        description="Current weather for a city. Uses METAR.",
        parameters=[ToolParam(name="city_name", type="string", required=True), ToolParam(name="units", type="string")],
    )
    assert offline_requests(doc) == ["Current weather for a city.", "get city weather city name"]
    assert offline_requests(ToolDoc(name="sync_ledger")) == ["sync ledger"]


def test_with_an_llm_its_questions_are_the_requests_each_tool_is_checked_with(make_kb):
    import json

    from toolret.eval.doctor import diagnose
    from toolret.llm.testing import ScriptedLLM

    written = {
        "convert_currency": ["how many yen do I get for 20 euros?", "20 USD in EUR"],
        "send_email": ["book me a flight from Paris to Rome on June 3"],  # a question the tool does not answer
        "book_flight": ["get me a plane ticket to Lisbon on Friday"],
    }

    def answer(messages) -> str:
        text = "\n".join(m.content for m in messages)
        if "unfaithful" in text:  # the faithfulness judge
            return '{"unfaithful": []}'
        name = next(n for n in written if n in text)
        return json.dumps({"function": "", "hypothetical_questions": written[name]})

    llm = ScriptedLLM([answer] * 12, name="scripted-llm")
    report = diagnose(make_kb(DISTINCT), llm=llm)
    assert report.settings["requests_from"] == "llm (scripted-llm)"
    checks = {t.id: t for t in report.tools}
    assert checks["convert_currency"].requests == 2 and checks["convert_currency"].reach == 1.0
    assert checks["send_email"].reach == 0.0 and checks["send_email"].findings == ["unreached"]
    (finding,) = [f for f in report.findings if f.kind == "unreached"]
    assert finding.tool_ids == ["send_email"] and finding.detail["ranked_first_instead"] == {"book_flight": 1}
