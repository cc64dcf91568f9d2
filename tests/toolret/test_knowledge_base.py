"""ToolKnowledgeBase: indexing, search, persistence, sync, thread safety (real model, real ChromaDB)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from toolret import (
    InvalidToolError,
    KnowledgeBaseError,
    ModelMismatchError,
    QueryError,
    RetrievalConfig,
    ToolDoc,
    ToolKnowledgeBase,
    ToolNotAttachedError,
    ToolNotFoundError,
    ToolParam,
)
from toolret.index.embedding import CallableEmbedder


def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather conditions for a city.

    Args:
        city: City name, e.g. "Paris".
        unit: Temperature unit.

    Returns:
        A short text with temperature and sky conditions.
    """
    return f"sunny in {city}"


def convert_currency(amount: float, source: str, target: str) -> float:
    """Convert an amount of money from one currency to another.

    Args:
        amount: The amount to convert.
        source: ISO code of the currency to convert from.
        target: ISO code of the currency to convert to.
    """
    return amount


def send_email(to: str, subject: str, body: str) -> None:
    """Send an e-mail message to a recipient.

    Args:
        to: Recipient e-mail address.
        subject: Subject line.
        body: Message text.
    """


def search_flights(origin: str, destination: str, date: str) -> list:
    """Find flights between two airports on a date."""
    return []


TOOLS = [get_weather, convert_currency, send_email, search_flights]


@pytest.fixture()
def kb(make_kb):
    return make_kb(TOOLS)


def test_search_ranks_the_matching_tool_first(kb):
    assert kb.search("is it going to rain in Berlin today?", k=2).tools[0].name == "get_weather"
    assert kb.search("how many yen is 30 dollars", k=2).tools[0].name == "convert_currency"
    assert kb.search("mail my boss the report", k=2).tools[0].name == "send_email"


def test_result_carries_field_scores_penalty_and_trace(kb):
    result = kb.search("weather in Paris", k=3)
    top = result.tools[0]
    assert set(top.field_scores) >= {"description", "parameters"}
    # Field scores are standard deviations above the candidate pool's mean (zscore fusion):
    # the weather tool stands out on its description.
    assert top.field_scores["description"] > 0.5
    assert top.field_scores["description"] == max(t.field_scores["description"] for t in result.tools)
    assert [s.stage for s in result.trace] == ["embed_query", "candidates", "mftr", "select"]
    assert all(s.path == "offline" and s.ms >= 0 for s in result.trace)
    assert len(result.tools) == 3 and result.tools[0].score >= result.tools[1].score >= result.tools[2].score


def test_live_objects_are_mapped_back_by_id(kb):
    assert kb.tool("get_weather") is get_weather
    assert kb.get("send_email").parameters[0].name == "to"
    with pytest.raises(ToolNotFoundError, match="nope"):
        kb.get("nope")


def test_exact_tool_name_in_query_is_found(kb):
    result = kb.search("search_flights", k=1)
    assert result.ids == ["search_flights"]


def test_bad_queries_raise_query_error(kb):
    for bad in ("", "   "):
        with pytest.raises(QueryError):
            kb.search(bad)
    with pytest.raises(QueryError, match="k must be"):
        kb.search("weather", k=0)
    assert kb.search("weather " * 2_000).trace[0].stage == "query_text"  # long: shortened, not refused


def test_empty_knowledge_base_returns_no_tools(embedder):
    empty = ToolKnowledgeBase(embedder=embedder)
    result = empty.search("anything")
    assert result.tools == [] and result.trace[0].path == "skipped"


def test_persistence_round_trip_gives_identical_results(tmp_path, embedder):
    path = tmp_path / "tools.kb"
    first = ToolKnowledgeBase(path, embedder=embedder)
    first.add(TOOLS)
    first.save()
    queries = [
        "convert 10 EUR to USD",
        "weather in Rome",
        "email alice@example.com",
        "fly from SFO to JFK on 2024-05-01",
    ]
    before = [first.search(q, k=4).tools for q in queries]
    del first
    reopened = ToolKnowledgeBase.load(path, embedder=embedder)
    assert len(reopened) == 4
    after = [reopened.search(q, k=4).tools for q in queries]
    # ChromaDB returns the vectors to within 1e-8, which can flip the 6th decimal of a rounded score
    assert [[t.id for t in r] for r in before] == [[t.id for t in r] for r in after]
    for one, two in zip(before, after):
        for a, b in zip(one, two):
            assert a.score == pytest.approx(b.score, abs=1e-5)
            assert a.field_scores == pytest.approx(b.field_scores, abs=1e-5)
            assert a.penalty == b.penalty and a.similarity == pytest.approx(b.similarity, abs=1e-5)
    with pytest.raises(ToolNotAttachedError):  # live objects are not persisted...
        reopened.tool("get_weather")
    assert reopened.bind(TOOLS) == 4  # ...and can be re-attached
    assert reopened.tool("get_weather") is get_weather


def test_a_reopened_kb_gives_definitions_back_and_says_how_to_reattach_callables(tmp_path, embedder):
    refund = {
        "type": "function",
        "function": {
            "name": "refund_payment",
            "description": "Refund a card payment to a customer.",
            "parameters": {"type": "object", "properties": {"payment_id": {"type": "string"}}, "required": []},
        },
    }
    kb = ToolKnowledgeBase(tmp_path / "kb", embedder=embedder)
    kb.add([get_weather, refund])
    assert kb.tool("refund_payment") == refund  # a definition is data: it is what kb.tool gives
    kb.save()
    reopened = ToolKnowledgeBase.load(tmp_path / "kb", embedder=embedder)
    assert reopened.tool("refund_payment") == refund
    with pytest.raises(ToolNotAttachedError, match=r"'get_weather' was indexed from a Python callable.*kb\.bind"):
        reopened.tool("get_weather")
    assert reopened.bind([get_weather]) == 1 and reopened.tool("get_weather") is get_weather


def test_load_of_a_missing_directory_is_a_clear_error(tmp_path):
    with pytest.raises(KnowledgeBaseError, match="no toolret knowledge base"):
        ToolKnowledgeBase.load(tmp_path / "nothing")


def test_reopening_with_another_embedder_is_an_error(tmp_path, embedder):
    path = tmp_path / "kb"
    kb = ToolKnowledgeBase(path, embedder=embedder)
    kb.add(TOOLS[:1])
    kb.save()
    other = CallableEmbedder(lambda texts: [[1.0, 0.0, float(len(t))] for t in texts], name="toy")
    with pytest.raises(ModelMismatchError, match="toy"):
        ToolKnowledgeBase(path, embedder=other)


def test_sync_reembeds_only_changed_tools(embedder):
    calls: list[int] = []

    def counting(texts):
        calls.append(len(texts))
        return embedder.embed(texts)

    kb = ToolKnowledgeBase(embedder=CallableEmbedder(counting, name="counting-minilm"))
    docs = [
        ToolDoc(
            name=f"tool_{i}",
            description=f"Does thing number {i}.",
            parameters=[ToolParam(name="x", type="integer", required=True)],
        )
        for i in range(20)
    ]
    kb.add(docs)
    # description and (offline) profile of 20 tools, and the one parameters text they share (embedded once)
    assert sum(calls) == 20 + 20 + 1
    calls.clear()

    changed = docs[3].model_copy(update={"description": "Does something entirely different."})
    new = ToolDoc(name="tool_new", description="A brand new tool.")
    report = kb.sync([*docs[:3], changed, *docs[4:19], new])  # drops tool_19
    assert report.added == ["tool_new"]
    assert report.updated == ["tool_3"]
    assert report.removed == ["tool_19"]
    assert report.unchanged == 18
    assert sum(calls) == 3 + 2  # tool_3 (3 fields) and tool_new (description, profile)
    assert len(kb) == 20 and "tool_19" not in kb
    assert kb.get("tool_3").description == "Does something entirely different."

    calls.clear()
    again = kb.sync([*docs[:3], changed, *docs[4:19], new])
    assert again.added == again.updated == again.removed == [] and sum(calls) == 0


def test_remove_unknown_id_changes_nothing(kb):
    with pytest.raises(ToolNotFoundError):
        kb.remove(["get_weather", "missing"])
    assert "get_weather" in kb
    kb.remove(["get_weather"])
    assert "get_weather" not in kb and len(kb) == 3


def test_duplicate_ids_in_one_add_are_rejected(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    from toolret import InvalidToolError

    with pytest.raises(InvalidToolError, match="appears twice"):
        kb.add([ToolDoc(name="a", description="x"), ToolDoc(name="a", description="y")])


def test_concurrent_searches_match_serial_results(kb):
    queries = ["weather in Oslo", "convert 5 GBP", "send a message to bob@example.com", "flights to Tokyo"] * 25
    serial = [kb.search(q, k=3).ids for q in queries]
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(lambda q: kb.search(q, k=3).ids, queries))
    assert threaded == serial


def test_searches_during_sync_see_old_or_new_registry(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add(TOOLS)
    old_ids = {"get_weather", "convert_currency", "send_email", "search_flights"}
    new_ids = {"get_weather", "convert_currency"}
    seen: list[set[str]] = []

    def reader():
        for _ in range(30):
            seen.append(set(kb.search("weather or money or mail or flights", k=10).ids))

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(reader) for _ in range(2)]
        kb.sync(TOOLS[:2])
        for f in futures:
            f.result()
    assert all(s in (old_ids, new_ids) for s in seen)


async def test_asearch_matches_search(kb):
    results = await asyncio.gather(*(kb.asearch("weather in Lisbon", k=2) for _ in range(4)))
    assert all(r.tools == kb.search("weather in Lisbon", k=2).tools for r in results)


def test_balanced_preset_covers_each_part_of_a_multi_part_request(kb):
    query = "What is the weather in Oslo tomorrow? Also convert 200 euros to Norwegian krone."
    fast = kb.search(query, k=2, config="fast")
    balanced = kb.search(query, k=2, config="balanced")
    assert set(balanced.ids) == {"get_weather", "convert_currency"}
    stages = [s.stage for s in balanced.trace]
    assert stages[:6] == ["plan", "embed_query", "candidates", "mftr", "fuse", "rerank"]
    assert balanced.trace[5].path == "skipped"  # no cross-encoder configured
    assert stages[6:] == []  # no offline reflection: it gained nothing in the stage ablation
    assert balanced.plan is not None and len(balanced.plan.subtasks) == 2
    assert {t.subtask for t in balanced.tools} <= {None, *[s.text for s in balanced.plan.subtasks]}
    assert len(fast.tools) == 2


def test_balanced_preset_on_a_single_request_equals_fast(kb):
    assert (
        kb.search("weather in Oslo", k=3, config="balanced").ids == kb.search("weather in Oslo", k=3, config="fast").ids
    )


@pytest.mark.slow
def test_balanced_with_a_configured_cross_encoder_reranks_the_head(kb):
    from toolret.index.embedding import default_model_path

    # The packaged MiniLM as a one-label CrossEncoder has a random head: this checks the wiring
    # (loaded once, reads the head, scores in field_scores), not ranking quality.
    cfg = RetrievalConfig.preset("balanced").model_copy(
        update={"cross_encoder": default_model_path(), "rerank_top_n": 3}
    )
    first = kb.search("weather in Oslo", k=2, config=cfg)
    again = kb.search("weather in Oslo", k=2, config=cfg)
    rerank = next(s for s in first.trace if s.stage == "rerank")
    assert rerank.path == "offline" and "cross-encoder" in rerank.note and "top 3" in rerank.note
    assert len(first.tools) == 2 and set(first.ids) <= set(kb.ids)
    assert all("cross_encoder" in t.field_scores for t in first.tools)
    assert first.ids == again.ids and len(kb._rerankers) == 1  # loaded once, reused


# ------------------------------------------------------------------ issue 16: trustworthy writes
def test_a_path_that_is_a_file_is_a_knowledge_base_error_naming_it(tmp_path, embedder):
    file = tmp_path / "tools.kb"
    file.write_text("not a directory")
    with pytest.raises(KnowledgeBaseError, match="tools.kb.*is a file"):
        ToolKnowledgeBase(file, embedder=embedder)
    with pytest.raises(KnowledgeBaseError, match="tools.kb"):
        ToolKnowledgeBase(file / "inner", embedder=embedder)


def test_adding_a_changed_tool_under_an_existing_id_warns_naming_it(kb, caplog):
    changed = ToolDoc(name="get_weather", description="Weather of a city, now with wind speed.")
    with caplog.at_level("WARNING", logger="toolret"), pytest.warns(UserWarning, match="get_weather"):
        kb.add([changed])
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("get_weather" in m and "upsert=True" in m for m in warned)
    assert kb.get("get_weather").description == changed.description  # replaced, and said so
    caplog.clear()
    with caplog.at_level("WARNING", logger="toolret"):
        kb.add([changed])  # identical: nothing replaced
        kb.add([changed.model_copy(update={"description": "Weather again."})], upsert=True)
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
    assert kb.get("get_weather").description == "Weather again."


def test_the_replaced_warning_is_a_python_warning_too(kb):
    import warnings

    changed = ToolDoc(name="get_weather", description="Weather of a city, with the wind speed.")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kb.add([changed])
    replaced = [w for w in caught if "get_weather" in str(w.message) and "upsert=True" in str(w.message)]
    assert len(replaced) == 1 and issubclass(replaced[0].category, UserWarning)
    assert replaced[0].filename == __file__  # points at the kb.add call, not into toolret
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kb.add([changed.model_copy(update={"description": "Weather again."})], upsert=True)  # meant: silent


def test_add_and_sync_log_counts_and_seconds(embedder, caplog):
    kb = ToolKnowledgeBase(embedder=embedder)
    with caplog.at_level("INFO", logger="toolret"):
        kb.add(TOOLS[:2])
        kb.sync(TOOLS[1:])
    lines = [r.getMessage() for r in caplog.records if r.name == "toolret" and r.levelname == "INFO"]
    assert any(m.startswith("add: 2 tools (2 added, 0 updated, 0 unchanged, 0 removed)") and " s" in m for m in lines)
    assert any(m.startswith("sync: 3 tools (2 added, 0 updated, 1 unchanged, 1 removed)") for m in lines), lines


def test_langchain_and_llamaindex_tools_are_converted_by_their_adapters(embedder):
    from langchain_core.tools import tool as lc_tool
    from llama_index.core.tools import FunctionTool

    @lc_tool
    def refund_payment(payment_id: str) -> str:
        """Refund a card payment to the customer.

        Args:
            payment_id: The payment to refund.
        """
        return "refunded"

    kb = ToolKnowledgeBase(embedder=embedder)
    kb.add([refund_payment, FunctionTool.from_defaults(fn=get_weather)])
    assert sorted(kb.ids) == ["get_weather", "refund_payment"]
    assert kb.get("refund_payment").metadata["framework"] == "langchain"
    assert kb.tool("refund_payment") is refund_payment
    assert kb.search("give the customer their money back", k=1).ids == ["refund_payment"]


def test_a_framework_tool_without_its_adapter_names_the_function_to_use(monkeypatch):
    import sys

    from langchain_core.tools import tool as lc_tool

    from toolret import InvalidToolError
    from toolret.sources.ingest import to_tool_doc

    @lc_tool
    def refund_payment(payment_id: str) -> str:
        """Refund a card payment."""
        return "refunded"

    monkeypatch.setitem(sys.modules, "langchain_toolret.ingest", None)  # as if not installed
    with pytest.raises(InvalidToolError, match=r"langchain_toolret.ingest.tool_to_doc") as raised:
        to_tool_doc(refund_payment)
    assert raised.value.tool == "refund_payment"


def test_one_tool_may_be_added_without_a_list(embedder):
    from langchain_core.tools import tool as lc_tool
    from llama_index.core.tools import FunctionTool

    @lc_tool
    def refund_payment(payment_id: str) -> str:
        """Refund a card payment to the customer."""
        return "refunded"

    kb = ToolKnowledgeBase(embedder=embedder)
    assert kb.add(get_weather) == ["get_weather"]
    assert kb.add(refund_payment) == ["refund_payment"]
    assert kb.add({"name": "send_sms", "description": "Send a text message to a phone number."}) == ["send_sms"]
    assert kb.add(ToolDoc(name="ping", description="Check that a host answers.")) == ["ping"]
    assert kb.add(FunctionTool.from_defaults(fn=convert_currency)) == ["convert_currency"]
    assert kb.tool("refund_payment") is refund_payment
    assert kb.sync(get_weather).removed == ["convert_currency", "ping", "refund_payment", "send_sms"]
    assert kb.bind(get_weather) == 1


def test_a_string_is_not_a_tool_and_the_error_says_to_pass_a_list(embedder):
    kb = ToolKnowledgeBase(embedder=embedder)
    with pytest.raises(InvalidToolError, match="list"):
        kb.add("get_weather")


def test_one_id_may_be_removed_without_a_list(kb):
    kb.remove("get_weather")
    assert "get_weather" not in kb and "convert_currency" in kb
    with pytest.raises(ToolNotFoundError, match="'get_weather'") as raised:
        kb.remove("get_weather")
    assert "'g'" not in str(raised.value)
