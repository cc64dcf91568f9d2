"""Real LlamaIndex workflow agents with toolret as their tool_retriever.

The model is a stand-in (LlamaIndex's MockFunctionCallingLLM driven by a script): it decides
which tool to call, and by default calls a tool only if the agent offered it, so each step
checks that toolret handed over the right tool. Everything else — the agents, their memory,
their tool-call steps and the retriever — is the real thing.
"""

from __future__ import annotations

import json
import re

from llama_index.core.agent.workflow import (
    AgentWorkflow,
    CodeActAgent,
    FunctionAgent,
    ReActAgent,
    ToolCallResult,
)
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.workflow import Context

Step = tuple[str, dict]


def _turn(messages) -> tuple[str, list]:
    """The latest user request and the messages after it."""
    last = max(
        i
        for i, m in enumerate(messages)
        if m.role == MessageRole.USER and not (m.content or "").startswith("Observation:")
    )
    return messages[last].content or "", messages[last + 1 :]


def tool_model(plans: dict[str, list[Step]], offered: list[list[str]], *, only_offered: bool = True):
    """A function-calling model: for each request, call the planned tools in order, then answer."""

    def respond(messages, **kwargs) -> ChatMessage:
        names = [t.metadata.name for t in kwargs.get("tools") or []]
        offered.append(names)
        request, after = _turn(messages)
        results = [m.content for m in after if m.role == MessageRole.TOOL]
        steps = plans[request]
        if len(results) < len(steps):
            name, args = steps[len(results)]
            if only_offered and name not in names:
                return ChatMessage(role="assistant", content=f"no tool for {name}")
            block = ToolCallBlock(tool_call_id=f"call-{len(offered)}", tool_name=name, tool_kwargs=args)
            return ChatMessage(role="assistant", blocks=[block])
        return ChatMessage(role="assistant", content=" | ".join(results))

    return MockFunctionCallingLLM(response_generator=respond)


async def run_agent(agent, request: str, ctx=None) -> tuple[str, list[ToolCallResult]]:
    handler = agent.run(request, ctx=ctx)
    calls = [ev async for ev in handler.stream_events() if isinstance(ev, ToolCallResult)]
    result = await handler
    return str(result.response.content), calls


def ok(calls: list[ToolCallResult]) -> list[str]:
    assert not [c.tool_output.content for c in calls if c.tool_output.is_error]
    return [c.tool_name for c in calls]


async def test_function_agent_multi_step_request(shared_index):
    request = "How much is 100 USD in EUR? Then e-mail the amount to bob@example.com."
    plans = {
        request: [
            ("convert_currency", {"amount": 100, "source": "USD", "target": "EUR"}),
            ("send_email", {"to": "bob@example.com", "subject": "amount", "body": "90 EUR"}),
        ]
    }
    offered: list[list[str]] = []
    agent = FunctionAgent(tool_retriever=shared_index.as_retriever(similarity_top_k=4), llm=tool_model(plans, offered))
    answer, calls = await run_agent(agent, request)
    assert ok(calls) == ["convert_currency", "send_email"]
    assert answer == "90.00 EUR | e-mail sent to bob@example.com"
    assert all(len(names) <= 4 for names in offered)  # never more than similarity_top_k


async def test_follow_up_turn_still_finds_the_tool_used_before(shared_index):
    """llama_index issue 15515: "and in Rome?" names no tool; the model calls get_weather from history.

    keep_used makes the retriever one conversation; the remembered tool takes a slot within k."""
    first, follow_up = "What's the weather in Paris?", "and there?"
    plans = {first: [("get_weather", {"city": "Paris"})], follow_up: [("get_weather", {"city": "Rome"})]}
    fresh = [t.metadata.name for t in shared_index.as_retriever(similarity_top_k=2).retrieve(follow_up)]
    assert "get_weather" not in fresh, "precondition: the follow-up alone must not retrieve get_weather"
    offered: list[list[str]] = []
    retriever = shared_index.as_retriever(similarity_top_k=2, keep_used=3)
    agent = FunctionAgent(tool_retriever=retriever, llm=tool_model(plans, offered))
    ctx = Context(agent)
    assert ok((await run_agent(agent, first, ctx))[1]) == ["get_weather"]
    turn_start = len(offered)
    answer, calls = await run_agent(agent, follow_up, ctx)
    assert ok(calls) == ["get_weather"] and "Rome" in answer
    assert offered[turn_start] == [fresh[0], "get_weather"]  # offered again, from the conversation's memory, within k


async def test_the_tool_called_last_stays_offered_when_the_next_search_ranks_it_below_the_hits_that_fit(
    shared_index,
):
    """keep_used=3 after three calls: the next request's search finds the tool called last, but at rank 2
    of 3, and the two older remembered tools take two of the k slots; the tool called last must still be
    offered (it was dropped as a hit beyond the one slot left while the older ones kept theirs)."""
    follow_up = "Do I need a jacket in Rome tomorrow?"
    plans = {
        "Stock price of AAPL please": [("get_stock_price", {"ticker": "AAPL"})],
        "Translate 'thank you' into German": [("translate_text", {"text": "thank you", "language": "German"})],
        "What's the weather in Paris?": [("get_weather", {"city": "Paris"})],
        follow_up: [("get_weather", {"city": "Rome"})],
    }
    fresh = [t.metadata.name for t in shared_index.as_retriever(similarity_top_k=3).retrieve(follow_up)]
    assert fresh.index("get_weather") > 0, "precondition: the follow-up's search ranks get_weather below its best hit"
    offered: list[list[str]] = []
    retriever = shared_index.as_retriever(similarity_top_k=3, keep_used=3)
    agent = FunctionAgent(tool_retriever=retriever, llm=tool_model(plans, offered))
    ctx = Context(agent)
    for request in list(plans)[:3]:
        assert ok((await run_agent(agent, request, ctx))[1]) == [plans[request][0][0]]
    assert retriever.used_tools == ["get_weather", "translate_text", "get_stock_price"]
    turn_start = len(offered)
    answer, calls = await run_agent(agent, follow_up, ctx)
    assert offered[turn_start] == [fresh[0], "get_weather", "translate_text"]  # the oldest remembered one gives way
    assert ok(calls) == ["get_weather"] and "Rome" in answer


async def test_one_retriever_serving_unrelated_requests_does_not_leak_tools(shared_index):
    """The default retriever is shared by two unrelated runs: the second never sees the first's tool."""
    first, other = "What's the weather in Paris?", "Translate 'thank you' into German"
    plans = {
        first: [("get_weather", {"city": "Paris"})],
        other: [("translate_text", {"text": "thank you", "language": "German"})],
    }
    offered: list[list[str]] = []
    agent = FunctionAgent(tool_retriever=shared_index.as_retriever(similarity_top_k=2), llm=tool_model(plans, offered))
    assert ok((await run_agent(agent, first))[1]) == ["get_weather"]
    turn_start = len(offered)
    assert ok((await run_agent(agent, other))[1]) == ["translate_text"]
    assert all("get_weather" not in names and len(names) <= 2 for names in offered[turn_start:])


async def test_a_tool_called_from_history_is_found_by_name_even_when_not_offered(shared_index):
    first, follow_up = "Stock price of AAPL please", "ok, thanks; now the same for tomorrow's meeting"
    plans = {first: [("get_stock_price", {"ticker": "AAPL"})], follow_up: [("get_stock_price", {"ticker": "MSFT"})]}
    offered: list[list[str]] = []
    retriever = shared_index.as_retriever(similarity_top_k=1, keep_used=0)
    agent = FunctionAgent(tool_retriever=retriever, llm=tool_model(plans, offered, only_offered=False))
    ctx = Context(agent)
    await run_agent(agent, first, ctx)
    turn_start = len(offered)
    _, calls = await run_agent(agent, follow_up, ctx)
    assert "get_stock_price" not in offered[turn_start]
    assert ok(calls) == ["get_stock_price"]  # the agent's by-name query found it


def react_model(plans: dict[str, list[Step]], offered: list[list[str]]):
    """A ReAct-format text model: Thought/Action/Action Input, then Answer."""

    def respond(messages, **kwargs) -> ChatMessage:
        names = re.findall(r"^> Tool Name: (\S+)", messages[0].content or "", flags=re.MULTILINE)
        offered.append(names)
        request, after = _turn(messages)
        observations = [m.content for m in after if (m.content or "").startswith("Observation:")]
        steps = plans[request]
        if len(observations) < len(steps):
            name, args = steps[len(observations)]
            if name not in names:
                return ChatMessage(role="assistant", content=f"Thought: no tool fits.\nAnswer: no tool for {name}")
            return ChatMessage(
                role="assistant", content=(f"Thought: I need {name}.\nAction: {name}\nAction Input: {json.dumps(args)}")
            )
        last = observations[-1].removeprefix("Observation:").strip() if observations else ""
        return ChatMessage(role="assistant", content=f"Thought: I can answer.\nAnswer: {last}")

    return MockFunctionCallingLLM(response_generator=respond)


async def test_react_agent_with_toolret_retriever(shared_index):
    request = "Find flights from Oslo to Rome on 2025-06-01, then book a hotel in Rome for 3 nights."
    plans = {
        request: [
            ("search_flights", {"origin": "Oslo", "destination": "Rome", "date": "2025-06-01"}),
            ("book_hotel", {"city": "Rome", "nights": 3}),
        ]
    }
    offered: list[list[str]] = []
    agent = ReActAgent(tool_retriever=shared_index.as_retriever(similarity_top_k=4), llm=react_model(plans, offered))
    answer, calls = await run_agent(agent, request)
    assert ok(calls) == ["search_flights", "book_hotel"]
    assert answer == "booked 3 nights in Rome"
    assert offered and all(0 < len(names) <= 7 for names in offered)


async def test_agent_workflow_routes_through_the_retriever(shared_index):
    request = "Translate 'thank you' into German"
    plans = {request: [("translate_text", {"text": "thank you", "language": "German"})]}
    offered: list[list[str]] = []
    agent = FunctionAgent(
        name="assistant",
        description="helps",
        tool_retriever=shared_index.as_retriever(),
        llm=tool_model(plans, offered),
    )
    answer, calls = await run_agent(AgentWorkflow(agents=[agent]), request)
    assert ok(calls) == ["translate_text"] and answer == "[German] thank you"
    assert "translate_text" in offered[0]


async def test_code_act_agent_accepts_the_retriever(shared_index):
    async def execute(code: str) -> dict:
        return {"output": code}

    agent = CodeActAgent(
        code_execute_fn=execute,
        tool_retriever=shared_index.as_retriever(similarity_top_k=2),
        llm=MockFunctionCallingLLM(),
    )
    retrieved = [t.metadata.name for t in await agent.get_tools("forecast for Berlin this week")]
    assert "execute" in retrieved and "get_forecast" in retrieved  # its own code tool plus toolret's
    assert [t.metadata.name for t in await agent.get_tools("get_weather")] == ["execute", "get_weather"]


async def test_a_tool_whose_schema_cannot_be_rendered_is_indexed_and_never_handed_to_the_model(caplog):
    """Issue 25, item 4: indexing raised PydanticInvalidForJsonSchema; binding the tool would end the turn."""
    import logging

    from llamaindex_toolret import ToolObjectIndex
    from tests.llamaindex_toolret.conftest import agent_tools, unbindable_tool

    request = "please check a thing for me, and send an e-mail to bob@example.com saying hi"
    plans = {request: [("send_email", {"to": "bob@example.com", "subject": "hi", "body": "hi"})]}
    offered: list[list[str]] = []
    model = tool_model(plans, offered)
    respond = model.response_generator

    def as_a_provider(messages, **kwargs):  # a real LLM integration renders every tool it is handed
        for tool in kwargs.get("tools") or []:
            tool.metadata.to_openai_tool(skip_length_check=True)
        return respond(messages, **kwargs)

    model.response_generator = as_a_provider
    with caplog.at_level(logging.WARNING, logger="toolret"):
        index = ToolObjectIndex.from_objects([*agent_tools(), unbindable_tool()])
        retriever = index.as_retriever(similarity_top_k=3)
        answer, calls = await run_agent(FunctionAgent(tool_retriever=retriever, llm=model), request)
    assert ok(calls) == ["send_email"] and answer == "e-mail sent to bob@example.com"
    assert "check_thing" not in offered[0] and "send_email" in offered[0]
    assert "'check_thing' cannot be indexed as it is" in caplog.text and "'check_thing' cannot be bound" in caplog.text
    step = retriever.retriever.last_result.trace[-1]
    assert step.stage == "definitions" and "check_thing (PydanticInvalidForJsonSchema" in step.note
