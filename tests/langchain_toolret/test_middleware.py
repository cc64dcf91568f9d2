"""ToolSelectionMiddleware inside real create_agent runs (the model is scripted, nothing else is)."""

from __future__ import annotations

import logging

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_toolret import ToolSelectionMiddleware
from langchain_toolret.testing import ModelCall, ScriptedChatModel, tool_call

from . import registry50

THREAD = {"configurable": {"thread_id": "t1"}}


@pytest.fixture
def kb(tool_index):
    """The session's knowledge base over the test tools; most tests skip indexing with it."""
    return tool_index.kb


def _selection_runs(collected):
    """The ``ToolSelectionMiddleware`` child runs among the runs ``collect_runs`` collected."""

    def walk(run):
        yield run
        for child in run.child_runs:
            yield from walk(child)

    return [r for root in collected.traced_runs for r in walk(root) if r.name == "ToolSelectionMiddleware"]


def _agent(tools, replies, **options):
    model = ScriptedChatModel(replies=replies)
    middleware = ToolSelectionMiddleware(**options)
    agent = create_agent(model, tools=tools, middleware=[middleware], checkpointer=InMemorySaver())
    return agent, model, middleware


def test_selects_k_tools_for_the_request(tools):
    agent, model, _ = _agent(tools, [tool_call("get_weather", city="Paris"), "Sunny."], k=3)
    out = agent.invoke({"messages": [HumanMessage("is it going to rain in Paris today?")]}, THREAD)
    first = model.calls[0]
    assert len(first.tools) == 3 and first.tool_names[0] == "get_weather"
    assert out["messages"][-1].content == "Sunny."
    assert isinstance(out["messages"][2], ToolMessage) and "sunny in Paris" in out["messages"][2].content


def test_selection_is_pinned_inside_the_tool_loop_and_redone_on_a_new_turn(kb, tools):
    replies = [
        tool_call("get_weather", city="Paris"),
        tool_call("get_weather", city="Lyon"),
        "Sunny in both.",
        tool_call("convert_currency", amount=20, from_currency="EUR", to_currency="JPY"),
        "3200 yen.",
    ]
    agent, model, _ = _agent(tools, replies, k=2, knowledge_base=kb, cache_stable=False)
    agent.invoke({"messages": [HumanMessage("what's the weather in Paris and in Lyon?")]}, THREAD)
    turn1 = [c.tools for c in model.calls]
    assert len(turn1) == 3 and turn1[0] == turn1[1] == turn1[2]  # same definitions, same order
    pinned = agent.get_state(THREAD).values["toolret_selection"]
    assert pinned["query"] == "what's the weather in Paris and in Lyon?"
    assert pinned["tools"] == model.calls[0].tool_names

    agent.invoke({"messages": [HumanMessage("how many japanese yen do I get for 20 euros?")]}, THREAD)
    turn2 = model.calls[3:]
    assert turn2[0].tool_names[0] == "convert_currency" and turn2[0].tools == turn2[1].tools
    assert "get_weather" not in turn2[0].tool_names
    assert agent.get_state(THREAD).values["toolret_selection"]["query"].startswith("how many japanese yen")


def test_a_follow_up_is_read_with_the_request_it_continues(kb, tools):
    agent, model, _ = _agent(tools, ["18 degrees.", "64 F."], k=1, knowledge_base=kb)
    agent.invoke({"messages": [HumanMessage("what's the temperature forecast in Madrid?")]}, THREAD)
    agent.invoke({"messages": [HumanMessage("and in Rome?")]}, THREAD)
    assert model.calls[1].tool_names == ["get_weather"]


def test_always_include_is_offered_on_every_call_outside_k(kb, tools):
    agent, model, _ = _agent(tools, ["ok"], k=2, always_include=["ask_user", "read_file"], knowledge_base=kb)
    agent.invoke({"messages": [HumanMessage("book a flight from Paris to Rome on June 3")]}, THREAD)
    names = model.calls[0].tool_names
    assert names[:2] == ["ask_user", "read_file"] and len(names) == 4 and "book_flight" in names


def test_escape_hatch_widens_the_set_for_the_rest_of_the_turn(kb, tools):
    def call_found_tool(call: ModelCall) -> AIMessage:
        assert "translate_text" in call.tool_names  # bound after the search
        return tool_call("translate_text", text="hello", target_language="fr")

    replies = [tool_call("search_tools", query="translate text into another language"), call_found_tool, "Bonjour."]
    agent, model, _ = _agent(tools, replies, k=1, search_tool=True, search_k=2, knowledge_base=kb, cache_stable=False)
    out = agent.invoke({"messages": [HumanMessage("what is the weather in Paris?")]}, THREAD)
    assert model.calls[0].tool_names == ["search_tools", "get_weather"]
    found = next(m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "search_tools")
    assert found.artifact[0] == "translate_text"
    assert "- translate_text: Translate text into another language." in found.content
    assert model.calls[1].tool_names[:2] == ["search_tools", "get_weather"]
    assert "[fr] hello" in out["messages"][-2].content
    # Without the cache-stable list, a new turn starts from a fresh selection: the discovered tool is gone.
    agent.invoke({"messages": [HumanMessage("what is the stock price of ACME?")]}, THREAD)
    assert "translate_text" not in model.calls[-1].tool_names


@pytest.mark.parametrize(
    ("fallback", "expected"),
    [
        ("all", None),
        ("always_include", ["ask_user"]),
        (["search_web", "ask_user"], ["search_web", "ask_user"]),
    ],
)
def test_selector_failure_falls_back_and_logs(kb, tools, caplog, fallback, expected):
    def broken(messages):
        raise RuntimeError("query builder exploded")

    agent, model, _ = _agent(
        tools, ["fine"], k=2, always_include=["ask_user"], fallback=fallback, query_builder=broken, knowledge_base=kb
    )
    with caplog.at_level(logging.WARNING, logger="toolret"):
        out = agent.invoke({"messages": [HumanMessage("hello")]}, THREAD)
    assert out["messages"][-1].content == "fine"
    names = model.calls[0].tool_names
    assert sorted(names) == sorted(expected or [t.name for t in tools])
    assert "query builder exploded" in caplog.text
    assert "toolret_selection" not in agent.get_state(THREAD).values  # a failure is not pinned


def test_no_user_message_falls_back_instead_of_crashing(kb, tools):
    agent, model, _ = _agent(
        tools, ["ok"], k=2, fallback="always_include", always_include=["ask_user"], knowledge_base=kb
    )
    agent.invoke({"messages": [AIMessage("How can I help?")]}, THREAD)
    assert model.calls[0].tool_names == ["ask_user"]


def test_indexes_on_first_use_and_reindexes_only_changed_tools(tools, embedder):
    agent, _, middleware = _agent(tools, ["a", "b"], k=2, embedder=embedder)
    before = embedder.texts_embedded
    agent.invoke({"messages": [HumanMessage("send an email to Ann")]}, THREAD)
    first = embedder.texts_embedded - before
    assert len(middleware.index) == len(tools) and first > len(tools)
    before = embedder.texts_embedded
    agent.invoke({"messages": [HumanMessage("send an email to Bob")]}, THREAD)
    assert embedder.texts_embedded - before == 1  # only the query: same tools, no re-indexing
    assert middleware.index.ensure(tools[:-1]) is True  # a changed set is synced...
    assert len(middleware.index) == len(tools) - 1
    assert middleware.index.ensure(list(tools[:-1])) is False  # ...an equal one is not


def test_a_prebuilt_knowledge_base_is_used_without_writing_to_it(tools, tool_index):
    n = len(tool_index.kb)
    agent, model, _ = _agent(tools[:6], ["ok"], k=2, knowledge_base=tool_index.kb)
    agent.invoke({"messages": [HumanMessage("what is the stock price of ACME?")]}, THREAD)
    assert len(tool_index.kb) == n
    # get_stock_price is in the knowledge base but not in this agent: it is never offered.
    assert "get_stock_price" not in model.calls[0].tool_names and len(model.calls[0].tools) <= 2


async def test_async_agent_indexes_selects_and_pins(tools):
    replies = [tool_call("set_reminder", message="call mom", when="17:00"), "Done."]
    agent, model, middleware = _agent(tools, replies, k=2)
    out = await agent.ainvoke({"messages": [HumanMessage("remind me to call mom at 5pm")]}, THREAD)
    assert model.calls[0].tool_names[0] == "set_reminder" and model.calls[0].tools == model.calls[1].tools
    assert "reminder set" in out["messages"][2].content
    assert len(middleware.index) == len(tools)


def test_invalid_options_are_rejected():
    with pytest.raises(ValueError, match="k must be"):
        ToolSelectionMiddleware(k=0)
    with pytest.raises(ValueError, match="fallback"):
        ToolSelectionMiddleware(fallback="none")  # type: ignore[arg-type]


def test_with_an_llm_the_planner_reads_the_earlier_conversation(tools, embedder):
    from toolret.llm import ScriptedLLM

    planner = ScriptedLLM([])  # every LLM step fails over to its offline path; the prompts are recorded
    agent, model, _ = _agent(tools, ["18 degrees.", "64 F."], k=1, llm=planner, embedder=embedder)
    agent.invoke({"messages": [HumanMessage("what's the temperature forecast in Madrid?")]}, THREAD)
    first_turn_calls = len(planner.calls)
    agent.invoke({"messages": [HumanMessage("and in Rome?")]}, THREAD)
    prompts = ["\n".join(m.content for m in call) for call in planner.calls[first_turn_calls:]]
    assert any("user: what's the temperature forecast in Madrid?\nassistant: 18 degrees." in p for p in prompts)
    assert model.calls[1].tool_names == ["get_weather"]  # the offline fallback still selects


# ------------------------------------------------------------------ adapters a user can trust (issue 16)
@pytest.fixture(scope="module")
def registry_kb(embedder):
    """The fifty invented tools, indexed once for the tests that pass knowledge_base=."""
    from langchain_toolret import ToolIndex

    return ToolIndex.from_tools(registry50.registry(), embedder=embedder).kb


def test_one_oversized_tool_does_not_switch_narrowing_off(embedder, caplog):
    from langchain_core.tools import StructuredTool

    def lookup(term: str) -> str:
        return f"entry for {term}"

    huge = StructuredTool.from_function(
        lookup, name="encyclopedia_lookup", description="Look up an encyclopedia entry. " * 3_600
    )
    assert len(huge.description) > 108_000
    tools = [*registry50.registry(), huge]
    replies = ["Booked.", "Looked up."]
    agent, model, _ = _agent(tools, replies, k=3, always_include=["send_sms"], embedder=embedder)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        agent.invoke({"messages": [HumanMessage("book me a flight from Paris to Rome on June 3")]}, THREAD)
    assert "tool selection failed" not in caplog.text
    assert "'encyclopedia_lookup'" in caplog.text and "cut to the first" in caplog.text
    assert len(model.calls[0].tools) == 4 and model.calls[0].tool_names[:2] == ["send_sms", "book_flight"]
    agent.invoke({"messages": [HumanMessage("encyclopedia_lookup the Roman empire")]}, THREAD)
    first, second = model.calls[0].tool_names, model.calls[1].tool_names  # the second list grows the first
    assert second[:4] == first and "encyclopedia_lookup" in second[4:] and len(second) == 7


@pytest.mark.parametrize(("options", "limit"), [({}, 128), ({"tool_limit": 20}, 20)])
def test_fallback_all_never_sends_more_than_the_tool_limit(options, limit, caplog):
    tools = [registry50.make_tool(f"tool_{i}", f"Does thing number {i}.") for i in range(150)]

    def broken(messages):
        raise RuntimeError("query builder exploded")

    agent, model, _ = _agent(tools, ["fine"], k=2, always_include=["tool_149"], query_builder=broken, **options)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        agent.invoke({"messages": [HumanMessage("hello")]}, THREAD)
    assert len(model.calls[0].tools) == limit and model.calls[0].tool_names[0] == "tool_149"
    assert f"tool_limit={limit}" in caplog.text


def test_a_new_request_does_not_inherit_the_previous_turns_tools(registry_kb):
    agent, model, _ = _agent(
        registry50.registry(),
        ["Booked.", "Lights on.", "Playing."],
        k=3,
        knowledge_base=registry_kb,
        cache_stable=False,
    )
    agent.invoke({"messages": [HumanMessage("Book me a flight from Paris to Rome on June 3")]}, THREAD)
    agent.invoke({"messages": [HumanMessage("turn on the kitchen lights")]}, THREAD)
    agent.invoke({"messages": [HumanMessage("play some jazz")]}, THREAD)
    jazz = model.calls[2].tool_names
    assert jazz[0] == "play_music" and len(jazz) == 3
    assert not {"turn_on_lights", "book_flight", "cancel_booking"} & set(jazz)


def test_a_new_request_in_a_thread_keeps_its_own_tools(registry_kb):
    """Issue 25, item 1: the earlier turn's e-mail tools took the second request's places."""
    from langchain_core.tracers.context import collect_runs

    from langchain_toolret import ToolIndex

    second = "is it raining in Oslo? also convert 100 dollars to euros"
    agent, model, _ = _agent(
        registry50.registry(), ["Sent.", "Rain; 92 euros."], k=3, knowledge_base=registry_kb, cache_stable=False
    )
    agent.invoke({"messages": [HumanMessage("send an email to bob@example.com saying hi")]}, THREAD)
    with collect_runs() as collected:
        agent.invoke({"messages": [HumanMessage(second)]}, THREAD)
    own = [t.name for t in ToolIndex(registry_kb).search(second, 3).tools]
    assert model.calls[1].tool_names == own and "convert_currency" in own
    assert not {"send_email", "send_sms", "call_contact"} & set(model.calls[1].tool_names)
    (run,) = _selection_runs(collected)
    step = run.outputs["trace"][-1]
    assert step["stage"] == "follow_up" and step["path"] == "skipped" and "a new request" in step["note"]


def test_a_follow_up_keeps_its_own_tools_first_and_the_trace_names_the_added_ones(registry_kb):
    agent, model, middleware = _agent(
        registry50.registry(), ["18 degrees.", "21 degrees."], k=3, knowledge_base=registry_kb, cache_stable=False
    )
    agent.invoke({"messages": [HumanMessage("what's the weather in Madrid?")]}, THREAD)
    agent.invoke({"messages": [HumanMessage("and in Rome?")]}, THREAD)
    from langchain_toolret import ToolIndex

    own = [t.name for t in ToolIndex(registry_kb).search("and in Rome?", 3).tools]
    names = model.calls[1].tool_names
    assert names[0] == own[0] and "get_weather" in names  # its own best first, the weather tool carried over
    messages = [HumanMessage("what's the weather in Madrid?"), AIMessage("18 degrees."), HumanMessage("and in Rome?")]
    note = middleware.index.search_turn(messages, 3).trace[-1].note
    assert note.startswith("follow-up (opens with 'and')") and "from earlier turns" in note and "get_weather" in note


def test_a_follow_up_that_refers_back_keeps_its_own_best_tool(registry_kb):
    agent, model, _ = _agent(
        registry50.registry(), ["Booked.", "Reserved."], k=3, knowledge_base=registry_kb, cache_stable=False
    )
    agent.invoke({"messages": [HumanMessage("Book me a flight from Paris to Rome on June 3")]}, THREAD)
    agent.invoke({"messages": [HumanMessage("reserve a hotel room there")]}, THREAD)
    names = model.calls[1].tool_names
    assert names[0] == "book_hotel" and len(names) == 3
    assert agent.get_state(THREAD).values["toolret_selection"]["query"] == "reserve a hotel room there"


def test_a_knowledge_base_lacking_agent_tools_is_an_error_naming_them(tools, tool_index):
    from langchain_core.tools import tool

    from toolret import KnowledgeBaseError

    @tool
    def water_plants(zone: str) -> str:
        """Water the garden."""
        return "watered"

    agent, _, _ = _agent([*tools, water_plants], ["ok"], k=2, knowledge_base=tool_index.kb)
    with pytest.raises(KnowledgeBaseError, match=r"lacks 1 of the agent's 13 tools \(water_plants\)"):
        agent.invoke({"messages": [HumanMessage("water the garden")]}, THREAD)


def test_a_knowledge_base_with_extra_tools_still_binds_k_of_the_agents(registry_kb, caplog):
    mine = [
        t
        for t in registry50.registry()
        if t.name in {"get_weather", "send_email", "translate_text", "set_alarm", "read_file"}
    ]
    agent, model, _ = _agent(mine, ["ok"], k=3, knowledge_base=registry_kb)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        agent.invoke({"messages": [HumanMessage("book a hotel room and a flight to Rome")]}, THREAD)
    assert len(model.calls[0].tools) == 3 and set(model.calls[0].tool_names) <= {t.name for t in mine}
    assert "holds 45 tools the agent does not have" in caplog.text and "book_flight" in caplog.text


def test_with_a_shared_knowledge_base_k_auto_is_cut_among_the_agents_own_tools(registry_kb):
    # The request matches tools the agent lacks best (book_hotel, book_flight). Searched with the
    # engine's allowed_ids, the precise set is cut among the agent's five, never left empty.
    mine = [
        t
        for t in registry50.registry()
        if t.name in {"get_weather", "send_email", "translate_text", "set_alarm", "read_file"}
    ]
    agent, model, middleware = _agent(mine, ["ok"], k="auto", knowledge_base=registry_kb)
    agent.invoke({"messages": [HumanMessage("book a hotel room in Rome and email me the confirmation")]}, THREAD)
    assert "send_email" in model.calls[0].tool_names
    assert set(model.calls[0].tool_names) <= {t.name for t in mine}
    assert middleware.index.allowed is not None and len(middleware.index.allowed) == 5


def test_the_selection_is_a_traced_child_run_with_query_tools_scores_and_trace(kb, tools):
    from langchain_core.tracers.base import BaseTracer

    class Recorder(BaseTracer):
        def __init__(self):
            super().__init__()
            self.runs = []

        def _persist_run(self, run):
            pass

        def _end_trace(self, run):
            self.runs.append(run)
            super()._end_trace(run)

        def on_chain_end(self, outputs, *, run_id, **kwargs):
            run = super().on_chain_end(outputs, run_id=run_id, **kwargs)
            self.runs.append(run)
            return run

    recorder = Recorder()
    agent, model, _ = _agent(tools, ["Sunny."], k=2, knowledge_base=kb)
    agent.invoke(
        {"messages": [HumanMessage("is it going to rain in Paris today?")]}, {**THREAD, "callbacks": [recorder]}
    )
    runs = [r for r in recorder.runs if r.name == "ToolSelectionMiddleware"]
    assert runs, sorted({r.name for r in recorder.runs})
    out = runs[0].outputs
    assert out["query"] == "is it going to rain in Paris today?"
    assert out["tools"] == model.calls[0].tool_names and out["tools"][0] == "get_weather"
    assert set(out["scores"]) == set(out["tools"]) and out["trace"][0]["stage"]
    assert runs[0].parent_run_id is not None  # a child of the agent's run, not a stray root


def test_max_tools_is_k_under_langchains_name_and_config_is_the_only_preset_keyword():
    assert ToolSelectionMiddleware(max_tools=3).k == 3
    with pytest.raises(ValueError, match="not both"):
        ToolSelectionMiddleware(k=2, max_tools=3)
    with pytest.raises(TypeError, match="preset"):  # the pre-release name is gone, not silently ignored
        ToolSelectionMiddleware(preset="balanced")  # type: ignore[call-arg]
    assert ToolSelectionMiddleware(config="balanced").index.config.name == "balanced"


def test_k_is_checked_by_the_engine_rule():
    from toolret import QueryError

    with pytest.raises(QueryError, match="exceeds max_k"):
        ToolSelectionMiddleware(k=10_000)


def test_warmup_indexes_and_loads_the_model_before_the_first_call(tools, embedder):
    agent, model, middleware = _agent(tools, ["ok"], k=2, embedder=embedder)
    seconds = middleware.warmup(tools)
    assert seconds > 0 and len(middleware.index) == len(tools)
    before = embedder.texts_embedded
    agent.invoke({"messages": [HumanMessage("send an email to Ann")]}, THREAD)
    assert embedder.texts_embedded - before == 1  # only the query: nothing left to index


async def test_the_async_selection_is_traced_too(kb, tools):
    from langchain_core.tracers.context import collect_runs

    agent, model, _ = _agent(tools, ["Sunny."], k=2, knowledge_base=kb)
    with collect_runs() as collected:
        await agent.ainvoke({"messages": [HumanMessage("is it going to rain in Paris today?")]}, THREAD)
    runs = _selection_runs(collected)
    assert len(runs) == 1 and runs[0].outputs["tools"] == model.calls[0].tool_names


def test_a_selected_tool_that_cannot_be_bound_is_left_out_and_the_turn_goes_on(tools, unbindable, caplog):
    """Issue 25, item 4: binding the selected check_thing raised KeyError and ended the turn."""
    from langchain_core.tracers.context import collect_runs

    agent, model, _ = _agent([*tools, unbindable], ["Checked."], k=3)
    with caplog.at_level(logging.WARNING, logger="toolret"), collect_runs() as collected:
        out = agent.invoke({"messages": [HumanMessage("please check a thing for me")]}, THREAD)
    assert out["messages"][-1].content == "Checked."
    assert "check_thing" not in model.calls[0].tool_names and len(model.calls[0].tools) == 2
    assert "'check_thing' cannot be bound (KeyError: Reference '#/$defs/Thing' not found.)" in caplog.text
    assert "tool selection failed" not in caplog.text
    step = _selection_runs(collected)[0].outputs["trace"][-1]
    assert step["stage"] == "definitions" and "cannot be bound: check_thing (KeyError" in step["note"]


async def test_async_a_selected_tool_that_cannot_be_bound_is_left_out(tools, unbindable):
    agent, model, _ = _agent([*tools, unbindable], ["Checked."], k=3)
    out = await agent.ainvoke({"messages": [HumanMessage("please check a thing for me")]}, THREAD)
    assert out["messages"][-1].content == "Checked." and "check_thing" not in model.calls[0].tool_names


def test_an_always_included_or_fallback_tool_that_cannot_be_bound_is_left_out_of_the_call(
    tools, unbindable, unbindable_index, caplog
):
    options = {"knowledge_base": unbindable_index.kb}
    agent, model, _ = _agent([*tools, unbindable], ["Sunny."], k=2, always_include=["check_thing"], **options)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        agent.invoke({"messages": [HumanMessage("is it going to rain in Paris today?")]}, THREAD)
    assert model.calls[0].tool_names[0] == "get_weather" and "check_thing" not in model.calls[0].tool_names
    assert "ToolSelectionMiddleware: tool 'check_thing' cannot be bound" in caplog.text

    def broken(messages):
        raise RuntimeError("query builder exploded")

    agent, model, _ = _agent([*tools, unbindable], ["fine"], k=2, query_builder=broken, **options)
    agent.invoke({"messages": [HumanMessage("hello")]}, THREAD)
    assert model.calls[0].tool_names == [t.name for t in tools]  # the fallback: every tool that can be bound


@pytest.mark.parametrize("k", [5, "auto"])
def test_a_token_budget_keeps_the_turns_definitions_as_bound_within_it(kb, tools, k):
    """Issue 25, item 8: the always_include tool and the condensed copies, as sent, fit the budget."""
    from langchain_core.tracers.context import collect_runs

    from toolret import QueryError
    from toolret.documents.tokens import token_counter
    from toolret.search.token_budget import definition_text

    count = token_counter().count
    query = "is it going to rain in Paris today? and how much is 100 dollars in euros?"
    options = {"knowledge_base": kb, "always_include": ["ask_user"], "condensed_descriptions": True}
    agent, free, _ = _agent(tools, ["ok"], k=k, **options)
    agent.invoke({"messages": [HumanMessage(query)]}, THREAD)
    sent = free.calls[0].tools
    assert len(sent) >= 3 and free.calls[0].tool_names[0] == "ask_user"
    budget = sum(count(definition_text(d)) for d in sent[:3])
    agent, model, _ = _agent(tools, ["ok"], k=k, token_budget=budget, **options)
    with collect_runs() as collected:
        agent.invoke({"messages": [HumanMessage(query)]}, THREAD)
    assert model.calls[0].tools == sent[:3]
    assert sum(count(definition_text(d)) for d in model.calls[0].tools) <= budget
    step = _selection_runs(collected)[0].outputs["trace"][-1]
    assert step["stage"] == "definitions" and step["note"].startswith(f"{budget} of {budget} tokens (1 always sent)")
    with pytest.raises(QueryError, match="token_budget must be a positive integer"):
        ToolSelectionMiddleware(token_budget=0)


def test_a_misspelt_always_include_name_stops_the_call_naming_it(kb, tools):
    from toolret import ConfigError

    agent, model, _ = _agent(tools, ["ok"], k=2, always_include=["ask_usr"], knowledge_base=kb)
    with pytest.raises(ConfigError, match=r"\['ask_usr'\].*ask_user") as raised:
        agent.invoke({"messages": [HumanMessage("book a flight from Paris to Rome on June 3")]}, THREAD)
    assert isinstance(raised.value, ValueError)  # what LLMToolSelectorMiddleware raises, so handlers carry over
    assert model.calls == []  # the model never saw a tool list without the tool it was promised


def test_a_budget_no_tool_fits_still_offers_the_best_tool_with_a_warning(tools, caplog):
    import logging

    agent, model, _ = _agent(tools, ["ok"], k=3, token_budget=20)
    with caplog.at_level(logging.WARNING, logger="toolret"):
        agent.invoke({"messages": [HumanMessage("is it going to rain in Paris today?")]}, THREAD)
    assert model.calls[0].tool_names == ["get_weather"]  # not a model call with no tools at all
    assert "token_budget=20 fits none of the 3 selected tools" in caplog.text
    assert "'get_weather'" in caplog.text


def test_the_docs_say_what_an_unknown_always_include_name_does(tools):
    from pathlib import Path

    from toolret import ConfigError

    text = " ".join((Path(__file__).parents[2] / "docs" / "langchain.md").read_text().split())
    assert "name warns" not in text and "always_include` is the same (an unknown name raises `ConfigError`" in text
    with pytest.raises(ConfigError, match="ask_usr"):
        agent, _, _ = _agent(tools, ["ok"], always_include=["ask_usr"])
        agent.invoke({"messages": [HumanMessage("hello")]}, THREAD)
