"""Rename-only migration from LangChain's LLMToolSelectorMiddleware (issue 25, item 2).

Every keyword of the installed ``LLMToolSelectorMiddleware.__init__`` must be accepted by
``ToolSelectionMiddleware`` with a meaning that fits; the set is read from the installed
signature, so a keyword LangChain adds fails here before it fails a user's code.
"""

from __future__ import annotations

import inspect
import logging

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import LLMToolSelectorMiddleware
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_toolret import ChatModelLLM, ToolSelectionMiddleware
from langchain_toolret.testing import ScriptedChatModel
from toolret import ConfigError
from toolret.llm import MalformedOutputError

THREAD = {"configurable": {"thread_id": "t1"}}
LANGCHAIN = inspect.signature(LLMToolSelectorMiddleware.__init__).parameters
KEYWORDS = {
    name for name, p in LANGCHAIN.items() if name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
}


def _selector() -> ScriptedChatModel:
    """A selection model whose every answer is malformed (text, not the schema's structured output)."""
    return ScriptedChatModel(default="I would pick get_weather.")


def _schema_calls(model: ScriptedChatModel, schema: str) -> list:
    return [c for c in model.calls if c.tool_names == [schema]]


def _check_model(kb):
    chat = ScriptedChatModel()
    middleware = ToolSelectionMiddleware(model=chat, knowledge_base=kb)
    assert isinstance(middleware.index.llm, ChatModelLLM) and middleware.index.llm.chat_model is chat
    assert middleware.index.config.name == "full"  # a model turns on the preset that uses it


def _check_system_prompt(kb):
    selector = _selector()
    _run(kb, model=selector, system_prompt="Prefer tools that work offline.")
    (rerank, *_) = _schema_calls(selector, "ListwiseRanking")
    assert rerank.messages[0].type == "system" and "Prefer tools that work offline." in rerank.messages[0].content
    assert all("Prefer tools" not in c.messages[0].content for c in _schema_calls(selector, "LLMPlan"))


def _check_max_tools(kb):
    assert ToolSelectionMiddleware(max_tools=3).k == 3
    assert ToolSelectionMiddleware(max_tools=None).k == "auto"  # LangChain: no fixed cap
    assert ToolSelectionMiddleware().k == 5  # not passed: toolret's default


def _check_always_include(kb):
    model, _ = _run(kb, always_include=["ask_user"])
    assert model.calls[0].tool_names[0] == "ask_user"


def _check_max_retries(kb):
    selector = _selector()
    _run(kb, model=selector, max_retries=3)
    assert len(_schema_calls(selector, "ListwiseRanking")) == 4  # the first answer and 3 retries


def _check_on_parsing_failure(kb):
    model, _ = _run(kb, model=_selector(), on_parsing_failure=["search_web"], always_include=["ask_user"])
    assert sorted(model.calls[0].tool_names) == ["ask_user", "search_web"]


MEANINGS = {
    "model": _check_model,
    "system_prompt": _check_system_prompt,
    "max_tools": _check_max_tools,
    "always_include": _check_always_include,
    "max_retries": _check_max_retries,
    "on_parsing_failure": _check_on_parsing_failure,
}


def _run(kb, **options):
    """One turn of a real create_agent with the middleware; returns (agent model, middleware)."""
    model = ScriptedChatModel(replies=["ok"])
    middleware = ToolSelectionMiddleware(k=2, knowledge_base=kb, **options)
    agent = create_agent(model, tools=kb_tools(), middleware=[middleware], checkpointer=InMemorySaver())
    agent.invoke({"messages": [HumanMessage("is it going to rain in Paris today?")]}, THREAD)
    return model, middleware


def kb_tools():
    from .conftest import TOOLS

    return list(TOOLS)


@pytest.fixture
def kb(tool_index):
    return tool_index.kb


def test_every_keyword_of_langchains_selector_is_accepted():
    ours = inspect.signature(ToolSelectionMiddleware.__init__).parameters
    assert KEYWORDS <= set(ours), f"not accepted: {sorted(KEYWORDS - set(ours))}"
    assert set(MEANINGS) == KEYWORDS, f"keywords without a checked meaning: {sorted(KEYWORDS - set(MEANINGS))}"


def test_langchains_defaults_passed_explicitly_construct(kb):
    with pytest.warns(UserWarning, match="without model="):  # LLM-only keywords with no LLM say so
        middleware = ToolSelectionMiddleware(knowledge_base=kb, **{n: LANGCHAIN[n].default for n in KEYWORDS})
    assert middleware.k == "auto" and middleware.index.llm is None


@pytest.mark.parametrize("keyword", sorted(KEYWORDS))
def test_each_keyword_has_its_langchain_meaning(keyword, kb):
    MEANINGS[keyword](kb)


def test_a_model_string_is_resolved_as_langchain_resolves_it(monkeypatch, kb):
    import langchain.chat_models

    chat = ScriptedChatModel()
    seen: list[str] = []
    monkeypatch.setattr(langchain.chat_models, "init_chat_model", lambda name: seen.append(name) or chat)
    middleware = ToolSelectionMiddleware(model="openai:gpt-4o-mini", knowledge_base=kb)
    assert seen == ["openai:gpt-4o-mini"] and middleware.index.llm.chat_model is chat


def test_an_unresolvable_model_string_fails_as_in_langchain():
    def outcome(make):
        try:
            make()
        except Exception as exc:  # noqa: BLE001 - the outcome is what is compared
            return type(exc)
        return None

    name = "ollama:llama3"
    assert outcome(lambda: ToolSelectionMiddleware(model=name)) == outcome(
        lambda: LLMToolSelectorMiddleware(model=name)
    )


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("none", ["ask_user"]),
        ("all", None),
        (lambda raw: ["get_weather"] if "get_weather" in (raw or "") else [], ["ask_user", "get_weather"]),
    ],
)
def test_on_parsing_failure_chooses_the_tools_of_a_malformed_turn(kb, caplog, policy, expected):
    with caplog.at_level(logging.WARNING, logger="toolret"):
        model, _ = _run(kb, model=_selector(), on_parsing_failure=policy, always_include=["ask_user"])
    names = model.calls[0].tool_names
    assert sorted(names) == (expected or sorted(t.name for t in kb_tools()))
    assert "MalformedOutputError" in caplog.text  # never silent


def test_on_parsing_failure_error_raises_as_in_langchain(kb):
    with pytest.raises(MalformedOutputError, match="did not match LLMPlan after 2 attempt"):
        _run(kb, model=_selector(), max_retries=1, on_parsing_failure="error")


def test_without_on_parsing_failure_a_malformed_answer_takes_the_offline_path(kb):
    model, _ = _run(kb, model=_selector())
    assert model.calls[0].tool_names[0] == "get_weather" and len(model.calls[0].tools) == 2


def test_bad_migration_values_are_errors_naming_the_keyword():
    with pytest.raises(ConfigError, match="max_retries must be an integer >= 0"):
        ToolSelectionMiddleware(model=ScriptedChatModel(), max_retries=-1)
    with pytest.raises(ConfigError, match="on_parsing_failure must be"):
        ToolSelectionMiddleware(model=ScriptedChatModel(), on_parsing_failure="ignore")
    with pytest.raises(ConfigError, match="pass model= or llm="):
        ToolSelectionMiddleware(model=ScriptedChatModel(), llm=ScriptedChatModel())
    with pytest.raises(ValueError, match="not both"):
        ToolSelectionMiddleware(k=3, max_tools=None)
