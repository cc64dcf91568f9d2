"""The ``toolret`` command: eval with the BM25 baseline, JSON output, plots and error exits.

Tests marked ``slow`` build the real knowledge base (embedding model load, several seconds).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolret.cli import format_table, main

TOOLS = [
    {
        "id": "get_weather",
        "name": "get_weather",
        "description": "Current weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
        "response": None,
        "examples": [],
        "category": None,
        "source": "test",
    },
    {
        "id": "send_email",
        "name": "send_email",
        "description": "Send an email message to a recipient.",
        "parameters": None,
        "response": None,
        "examples": [],
        "category": None,
        "source": "test",
    },
    {
        "id": "convert_currency",
        "name": "convert_currency",
        "description": "Convert an amount of money between currencies.",
        "parameters": None,
        "response": None,
        "examples": [],
        "category": None,
        "source": "test",
    },
    {
        "id": "search_flights",
        "name": "search_flights",
        "description": "Search flights between two airports.",
        "parameters": None,
        "response": None,
        "examples": [],
        "category": None,
        "source": "test",
    },
]
QUERIES = [
    {"id": "q1", "query": "what is the weather forecast in Paris", "relevant": ["get_weather"]},
    {"id": "q2", "query": "send an email to Bob", "relevant": ["send_email"]},
    {
        "id": "q3",
        "query": "convert 100 dollars to euros and send an email with the amount",
        "relevant": ["convert_currency", "send_email"],
    },
]


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "tools.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOOLS), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES), encoding="utf-8")
    return folder


def test_eval_bm25_writes_the_documented_json(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    assert main(["eval", "--dataset", str(dataset), "--method", "bm25", "--k", "1,5", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert set(data) == {"dataset", "preset", "n_queries", "metrics", "latency_ms"}
    assert data["dataset"] == "tiny"
    assert data["preset"] == "bm25"
    assert data["n_queries"] == 3
    assert set(data["metrics"]) == {
        "recall@1",
        "recall@5",
        "ndcg@1",
        "ndcg@5",
        "completeness@1",
        "completeness@5",
        "tracc",
    }
    assert set(data["latency_ms"]) == {"p50", "p95"}
    # every needed tool is among the 4 returned; TRACC on those 4: (0.25 + 0.25 + 0.5) / 3
    assert data["metrics"]["recall@5"] == pytest.approx(1.0)
    assert data["metrics"]["completeness@5"] == pytest.approx(1.0)
    assert data["metrics"]["tracc"] == pytest.approx(1 / 3)
    printed = capsys.readouterr().out
    assert "R@1" in printed and "TRACC" in printed and "bm25" in printed


def test_eval_limit_and_plot(dataset: Path, tmp_path: Path) -> None:
    out, png = tmp_path / "r.json", tmp_path / "curves.png"
    code = main(
        ["eval", "--dataset", str(dataset), "--method", "bm25", "--limit", "2", "--json", str(out), "--plot", str(png)]
    )
    assert code == 0
    assert json.loads(out.read_text())["n_queries"] == 2
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_missing_dataset_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope"
    assert main(["eval", "--dataset", str(missing), "--method", "bm25"]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_bad_cutoffs_exit_2(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--dataset", str(dataset), "--method", "bm25", "--k", "1,x"]) == 2
    assert "--k" in capsys.readouterr().err


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval"]) == 2
    assert "--dataset" in capsys.readouterr().err


def test_format_table_aligns_numbers_right() -> None:
    table = format_table(["method", "R@5"], [["bm25", 0.5], ["fast", 0.75]])
    assert table.splitlines()[2] == "bm25    0.500"


# ------------------------------------------------------------ need the real knowledge base
@pytest.mark.slow
def test_eval_compares_bm25_and_mftr_and_writes_the_last(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    code = main(["eval", "--dataset", str(dataset), "--method", "bm25", "--method", "mftr", "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["preset"] == "fast"
    assert data["metrics"]["recall@5"] == pytest.approx(1.0)
    printed = capsys.readouterr().out
    assert "mftr (fast)" in printed and "bm25" in printed


@pytest.mark.slow
def test_index_then_search_prints_a_table(dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = tmp_path / "tools.kb"
    assert main(["index", str(dataset / "tools.jsonl"), "--kb", str(kb)]) == 0
    assert "indexed 4 tools" in capsys.readouterr().out
    assert main(["search", "--kb", str(kb), "weather in Paris", "-k", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:3] == ["rank", "tool", "score"]
    assert "penalty" in lines[1]
    assert lines[3].split()[:2] == ["1", "get_weather"]


@pytest.mark.slow
def test_search_shows_what_was_searched_of_a_pasted_log_not_the_20k_characters(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = tmp_path / "tools.kb"
    assert main(["index", str(dataset / "tools.jsonl"), "--kb", str(kb)]) == 0
    log = "\n".join(
        f"2024-11-24T10:00:{i % 60:02d}Z WARN edge-{i} upstream latency={i}ms status=504" for i in range(400)
    )
    query = f"{log}\nwhat is the weather forecast in Paris"
    capsys.readouterr()
    assert main(["search", "--kb", str(kb), query, "-k", "2"]) == 0
    out = capsys.readouterr().out
    assert len(query) > 20_000 and len(out) < 2_000 and "status=504" not in out
    first = out.splitlines()[0]
    assert first == f"query: what is the weather forecast in Paris  [searched 37 of {len(query):,} characters]"
    assert out.splitlines()[3].split()[:2] == ["1", "get_weather"]
    assert "query_text: query shortened from" in out and "dropped 400 log-like line(s)" in out


def test_search_on_a_missing_kb_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--kb", str(tmp_path / "none.kb"), "weather"]) == 2
    assert "no toolret knowledge base" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_writes_json_and_markdown(dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    argv = ["bench", "--datasets-root", str(dataset.parent), "--limit", "0", "--out", str(out), "--no-union"]
    argv.append("--no-reference-fusions")  # their rows: test_bench_compares_a_second_embedder_side_by_side
    assert main(argv) == 0
    summary = json.loads((out / "bench.json").read_text())
    assert [(r["dataset"], r["preset"], r["level"]) for r in summary["results"]] == [
        ("tiny", "bm25", "id"),
        ("tiny", "cosine", "id"),
        ("tiny", "fast", "id"),
    ]
    assert set(summary["embedding_floor_ms"]) == {"tiny"} and summary["embedding_floor_ms"]["tiny"] > 0
    fast = next(r for r in summary["results"] if r["preset"] == "fast")
    assert "x floor" in (out / "bench.md").read_text()
    assert fast["latency_ms"]["p50"] > 0
    assert "query-embedding floor" in capsys.readouterr().out


def test_bench_compares_a_second_embedder_side_by_side(dataset: Path, tmp_path: Path) -> None:
    from toolret.index.embedding import DEFAULT_EMBEDDER_NAME, STOCK_EMBEDDER_NAME

    out = tmp_path / "bench"
    argv = ["bench", "--datasets-root", str(dataset.parent), "--limit", "0", "--out", str(out), "--no-union"]
    assert main([*argv, "--compare-embedder", STOCK_EMBEDDER_NAME]) == 0
    results = json.loads((out / "bench.json").read_text())["results"]
    assert [(r["preset"], r["embedder"]) for r in results] == [
        ("bm25", None),
        ("cosine", DEFAULT_EMBEDDER_NAME),
        ("fast", DEFAULT_EMBEDDER_NAME),
        ("fusion-ec3e34e", DEFAULT_EMBEDDER_NAME),  # the two-sided rule's reference fusions, default embedder only
        ("fusion-eefafaa", DEFAULT_EMBEDDER_NAME),
        ("cosine", STOCK_EMBEDDER_NAME),
        ("fast", STOCK_EMBEDDER_NAME),
    ]
    assert "R@5 - (best fusion - .01)" in (out / "bench.md").read_text()
    assert all(len(r["per_query"]["recall@5"]) == r["n_queries"] for r in results)  # the model rule pairs them
    markdown = (out / "bench.md").read_text()
    assert f"{STOCK_EMBEDDER_NAME} / {DEFAULT_EMBEDDER_NAME}, side by side" in markdown
    assert "| tiny | – / unseen |" in markdown  # the stock model has no card; the default never trained on it
    assert "cosine mean over 1 sets in the registry's own words: R@1" in markdown


def test_bench_without_datasets_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--datasets-root", str(tmp_path), "--out", str(tmp_path / "b")]) == 2
    assert "no dataset folder" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_fit_compares_presets_and_balanced_fit_on_the_test_split(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 12 queries: q9, q10 and q12 fall in the test split (sha1(id) % 5 == 0), the rest are fitted on.
    asks = ["weather forecast in {}", "send an email to {}", "convert dollars to euros for {}", "flights to {}"]
    relevant = ["get_weather", "send_email", "convert_currency", "search_flights"]
    cities = ["Paris", "Oslo", "Rome", "Lima", "Kyiv", "Accra", "Quito", "Hanoi", "Dakar", "Perth", "Cork", "Bern"]
    queries = [
        {"id": f"q{i + 1}", "query": asks[i % 4].format(c), "relevant": [relevant[i % 4]]} for i, c in enumerate(cities)
    ]
    (dataset / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    out = tmp_path / "bench"
    argv = [
        "bench",
        "--datasets-root",
        str(dataset.parent),
        "--limit",
        "0",
        "--out",
        str(out),
        "--preset",
        "balanced",
        "--fit",
        "--no-union",
        "--no-reference-fusions",
    ]
    assert main(argv) == 0
    rows = [(r["split"], r["preset"], r["n_queries"]) for r in json.loads((out / "bench.json").read_text())["results"]]
    assert rows == [
        ("all", "bm25", 12),
        ("all", "cosine", 12),
        ("all", "fast", 12),
        ("all", "balanced", 12),
        ("test", "fast", 3),
        ("test", "balanced", 3),
        ("test", "balanced+fit", 3),
    ]
    printed = capsys.readouterr().out
    assert "fit on 9 queries, report on the other 3" in printed and "balanced+fit" in printed


# ------------------------------------------------------------ issue 16: CLI additions
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather forecast for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "refund_payment",
            "description": "Refund a card payment to a customer.",
            "parameters": {"type": "object", "properties": {"payment_id": {"type": "string"}}},
        },
    },
]


def test_index_refuses_a_tool_file_with_a_duplicate_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([OPENAI_TOOLS[0], OPENAI_TOOLS[0]]), encoding="utf-8")
    assert main(["index", str(path), "--kb", str(tmp_path / "kb")]) == 2
    assert "duplicate" in capsys.readouterr().err


def test_search_k_accepts_auto_and_refuses_words(capsys: pytest.CaptureFixture[str]) -> None:
    from toolret.cli import build_parser

    assert build_parser().parse_args(["search", "--kb", "x", "q", "-k", "auto"]).k == "auto"
    assert build_parser().parse_args(["search", "--kb", "x", "q", "-k", "3"]).k == 3
    assert main(["search", "--kb", "x", "q", "-k", "many"]) == 2
    assert "'auto'" in capsys.readouterr().err


@pytest.mark.slow
def test_index_an_openai_list_then_search_auto_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools, kb = tmp_path / "tools.json", tmp_path / "tools.kb"
    tools.write_text(json.dumps(OPENAI_TOOLS), encoding="utf-8")
    assert main(["index", str(tools), "--kb", str(kb)]) == 0
    assert "indexed 2 tools (OpenAI tool list)" in capsys.readouterr().out
    assert main(["search", "--kb", str(kb), "give the customer their money back", "-k", "auto", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["query"] == "give the customer their money back"
    assert [t["id"] for t in data["tools"]][0] == "refund_payment"
    assert {"id", "name", "score", "field_scores", "penalty"} <= set(data["tools"][0])
    assert data["trace"] and {"stage", "path", "ms"} <= set(data["trace"][0])


@pytest.mark.slow
def test_eval_json_with_several_methods_keeps_the_last_on_top_and_adds_every_method(
    dataset: Path, tmp_path: Path
) -> None:
    single, several = tmp_path / "one.json", tmp_path / "many.json"
    assert main(["eval", "--dataset", str(dataset), "--method", "mftr", "--json", str(single)]) == 0
    assert (
        main(["eval", "--dataset", str(dataset), "--method", "bm25", "--method", "mftr", "--json", str(several)]) == 0
    )
    one, many = json.loads(single.read_text()), json.loads(several.read_text())
    assert set(one) == {"dataset", "preset", "n_queries", "metrics", "latency_ms"}  # unchanged for the scorer
    assert set(many) == set(one) | {"methods"}
    assert {k: v for k, v in many.items() if k not in ("methods", "latency_ms")} == {
        k: v for k, v in one.items() if k != "latency_ms"
    }
    assert list(many["methods"]) == ["bm25", "fast"]
    assert many["methods"]["fast"]["metrics"] == one["metrics"] and many["methods"]["bm25"]["preset"] == "bm25"
    assert set(many["methods"]["bm25"]) == set(one)


def test_eval_cosine_writes_the_documented_json(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "cosine.json"
    assert main(["eval", "--dataset", str(dataset), "--method", "cosine", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert set(data) == {"dataset", "preset", "n_queries", "metrics", "latency_ms"}
    assert data["preset"] == "cosine"
    assert data["metrics"]["recall@1"] >= 2 / 3  # weather and e-mail queries find their tool first


@pytest.mark.slow
def test_bench_lodo_prints_the_left_out_table_and_the_worst_set(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    second = dataset.parent / "tiny2"
    second.mkdir()
    (second / "tools.jsonl").write_text((dataset / "tools.jsonl").read_text(), encoding="utf-8")
    queries = [
        {"id": "p1", "query": "flights from Oslo to Rome", "relevant": ["search_flights"]},
        {"id": "p2", "query": "how much is 20 pounds in yen", "relevant": ["convert_currency"]},
    ]
    (second / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    out = tmp_path / "bench"
    assert main(["bench", "--datasets-root", str(dataset.parent), "--limit", "0", "--out", str(out), "--lodo"]) == 0
    printed = capsys.readouterr().out
    assert "Leave one dataset out" in printed and "worst left-out set:" in printed
    folds = json.loads((out / "bench.json").read_text())["lodo"]["folds"]
    assert [f["left_out"] for f in folds] == ["tiny", "tiny2"]
    assert all(0.0 <= f["metrics"]["recall@5"] <= 1.0 for f in folds)
    assert len(list((out / "lodo").glob("tiny*-*.npz"))) == 2  # the signals are cached for the next run


def test_index_names_an_unknown_embedder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(OPENAI_TOOLS), encoding="utf-8")
    assert main(["index", str(path), "--kb", str(tmp_path / "kb"), "--embedder", "packaged:no-such-model"]) == 2
    assert "unknown packaged embedder" in capsys.readouterr().err


@pytest.mark.slow
def test_index_reports_counts_and_refuses_a_clash_between_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = str(tmp_path / "tools.kb")
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(OPENAI_TOOLS[:1]), encoding="utf-8")
    clash = {"type": "function", "function": {"name": OPENAI_TOOLS[0]["function"]["name"], "description": "Other."}}
    second.write_text(json.dumps([clash, OPENAI_TOOLS[1]]), encoding="utf-8")
    assert main(["index", str(first), "--kb", kb]) == 0
    out = capsys.readouterr().out
    assert "indexed 1 tool (OpenAI tool list)" in out and "1 added, 0 updated, 0 unchanged (1 tool in total)" in out
    assert main(["index", str(second), "--kb", kb]) == 2
    err = capsys.readouterr().err
    assert "'get_weather'" in err and "a.json" in err and "b.json" in err and "--on-conflict" in err
    assert main(["index", str(second), "--kb", kb, "--on-conflict", "keep"]) == 0
    out = capsys.readouterr().out
    assert "1 added, 0 updated, 0 unchanged (2 tools in total)" in out and "kept 'get_weather' indexed from" in out


@pytest.mark.slow
def test_index_adopts_the_tools_of_a_knowledge_base_saved_before_sources_were_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolret import ToolKnowledgeBase
    from toolret.sources.tool_files import load_tool_file

    path = tmp_path / "tools.json"
    path.write_text(json.dumps(OPENAI_TOOLS), encoding="utf-8")
    old = ToolKnowledgeBase(tmp_path / "tools.kb")
    old.add(load_tool_file(path)[0])  # what an older `toolret index` saved: no source per tool
    old.save()
    old.close()
    assert main(["index", str(path), "--kb", str(tmp_path / "tools.kb")]) == 0
    out = capsys.readouterr().out
    assert f"adopted {len(OPENAI_TOOLS)} tools indexed before sources were recorded" in out


@pytest.mark.slow
def test_index_says_which_tools_left_with_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, kb = tmp_path / "tools.json", str(tmp_path / "tools.kb")
    path.write_text(json.dumps(OPENAI_TOOLS), encoding="utf-8")
    assert main(["index", str(path), "--kb", kb]) == 0
    path.write_text(json.dumps(OPENAI_TOOLS[1:]), encoding="utf-8")
    capsys.readouterr()
    assert main(["index", str(path), "--kb", kb]) == 0
    gone = OPENAI_TOOLS[0]["function"]["name"]
    assert f"removed 1 tool no longer in {path}: {gone}" in capsys.readouterr().out


def test_the_verbose_flag_is_accepted_after_the_verb_too() -> None:
    from toolret.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["index", "t.json", "--kb", "x", "-v"]).verbose is True
    assert parser.parse_args(["search", "--verbose", "--kb", "x", "q"]).verbose is True
    assert parser.parse_args(["-v", "index", "t.json", "--kb", "x"]).verbose is True  # before it, as before
    assert parser.parse_args(["index", "t.json", "--kb", "x"]).verbose is False


CJK_TOOLS = [
    {"type": "function", "function": {"name": "天気予報を取得", "description": "Weather forecast for a city."}},
    {"type": "function", "function": {"name": "get_weather_now", "description": "Current weather in a city."}},
    {"type": "function", "function": {"name": "為替レート", "description": "Exchange rate between currencies."}},
]


@pytest.mark.slow
def test_search_table_lines_up_cjk_tool_names_by_display_width(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import unicodedata

    def display_width(text: str) -> int:  # terminal columns: CJK characters take two
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)

    tools, kb = tmp_path / "tools.json", str(tmp_path / "tools.kb")
    tools.write_text(json.dumps(CJK_TOOLS, ensure_ascii=False), encoding="utf-8")
    assert main(["index", str(tools), "--kb", kb, "-v"]) == 0  # -v after the verb
    capsys.readouterr()
    assert main(["search", "--kb", kb, "weather forecast", "-k", "3"]) == 0
    table = capsys.readouterr().out.splitlines()[1:6]
    rows = table[2:]
    assert {r.split()[1] for r in rows} == {t["function"]["name"] for t in CJK_TOOLS}
    # the score column ends in the same terminal column on every line, whatever script the name is in
    ends = {display_width(line[: line.index(line.split()[2]) + len(line.split()[2])]) for line in [table[0], *rows]}
    assert len(ends) == 1, table


def _openapi_with_a_huge_operation(size: int) -> dict:
    op = {"responses": {"200": {"description": "ok"}}}
    return {
        "openapi": "3.0.0",
        "info": {"title": "Docs", "version": "1"},
        "paths": {
            "/manual": {"get": {**op, "operationId": "getManual", "description": "The manual. " * (size // 12)}},
            "/pets": {"get": {**op, "operationId": "listPets", "summary": "List the pets in the store."}},
        },
    }


@pytest.mark.slow
def test_index_cuts_a_216kb_description_with_a_warning_and_indexes_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    from toolret import ToolKnowledgeBase

    spec, kb = tmp_path / "api.json", tmp_path / "tools.kb"
    spec.write_text(json.dumps(_openapi_with_a_huge_operation(216_000)), encoding="utf-8")
    with caplog.at_level("WARNING", logger="toolret"):
        assert main(["index", str(spec), "--kb", str(kb)]) == 0
    assert "indexed 2 tools (OpenAPI 3 spec)" in capsys.readouterr().out
    assert "tool 'getManual' cannot be indexed as it is" in caplog.text and "cut to the first 10000" in caplog.text
    opened = ToolKnowledgeBase.load(kb)
    assert len(opened.get("getManual").description) <= 10_000 and "listPets" in opened
    strict = tmp_path / "strict.kb"
    assert main(["index", str(spec), "--kb", str(strict), "--strict"]) == 2  # --strict: stop, naming the tool
    assert "'getManual'" in capsys.readouterr().err and not ToolKnowledgeBase(strict).ids


def test_the_search_verb_alone_parses_a_search_as_the_whole_parser_does():
    from toolret.cli import build_parser

    argv = ["-v", "search", "weather in Paris", "--kb", "kb", "-k", "auto", "--json", "--preset", "balanced"]
    alone, whole = build_parser(only="search"), build_parser()
    assert vars(alone.parse_args(argv)) == vars(whole.parse_args(argv))
    assert set(alone._subparsers._group_actions[0].choices) == {"search"}  # type: ignore[union-attr]
    assert {"search", "index", "eval", "bench", "doctor"} <= set(whole._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
