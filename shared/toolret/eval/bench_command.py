"""The ``toolret bench`` and ``toolret bench-scale`` verbs: their arguments, and bench-scale's checks.

Kept apart from :mod:`toolret.cli` as :mod:`toolret.training.command` is: the command module
assembles the verbs, each family of verbs declares its own options.
"""

from __future__ import annotations

import argparse
from typing import Any

from toolret.errors import ConfigError
from toolret.eval.methods import DEFAULT_BENCH_LIMIT, dedupe

__all__ = ["add_bench_parsers"]


def add_bench_parsers(verbs: Any) -> None:
    """Register ``bench`` and ``bench-scale`` on the ``toolret`` command's sub-parsers."""
    bench = verbs.add_parser("bench", help="compare bm25 and presets on every dataset under a folder")
    bench.add_argument("--datasets-root", default="../shared/benchmarks", help="folder of dataset folders")
    bench.add_argument("--preset", action="append", help="preset to add to 'fast' (repeatable)")
    bench.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_BENCH_LIMIT,
        help=f"queries per dataset, sampled with seed 0 (default: {DEFAULT_BENCH_LIMIT}; 0 = all)",
    )
    bench.add_argument("--auto-k", action="store_true", help="TRACC of the presets measured with k='auto'")
    bench.add_argument(
        "--no-union",
        action="store_true",
        help="skip the union condition (every dev registry in one knowledge base, each set's queries over it)",
    )
    bench.add_argument(
        "--no-reference-fusions",
        action="store_true",
        help="skip the rows of the two reference fusions (fusion-ec3e34e, fusion-eefafaa) that the two-sided "
        "rule compares each preset with (toolret.eval.reference_fusions)",
    )
    bench.add_argument(
        "--ablation",
        "--ablate",
        action="store_true",
        help="also run the one-out field ablation of the fast preset over the offline fields, and balanced "
        "with each scoring and post-retrieval stage off (verdicts left one registry out)",
    )
    bench.add_argument(
        "--fit", action="store_true", help="also compare the presets and balanced+fit on each dataset's 20%% test split"
    )
    bench.add_argument(
        "--lodo",
        action="store_true",
        help="also choose the fusion's defaults leaving one dataset out in turn (signals cached "
        "under OUT/lodo) and print the left-out table and the worst set",
    )
    bench.add_argument(
        "--compare-embedder",
        action="append",
        metavar="MODEL",
        help="also score cosine and the presets with this embedder, side by side with the default "
        "(e.g. packaged:all-MiniLM-L6-v2-onnx-int8, the stock model); repeatable",
    )
    bench.add_argument("--out", default=".bench", help="folder for bench.json and bench.md (default: .bench)")
    bench.set_defaults(run=_run_bench)

    scale = verbs.add_parser("bench-scale", help="recall, latency and memory vs registry size (1k..100k tools)")
    scale.add_argument("--datasets-root", default="../shared/benchmarks", help="folder of dataset folders")
    scale.add_argument(
        "--sizes", default="1000,10000,30000,100000", help="registry sizes (default: 1000,10000,30000,100000)"
    )
    scale.add_argument("--datasets", default="toole_single,bfcl", help="datasets whose queries are searched")
    scale.add_argument("--queries", type=int, default=200, help="queries sampled per dataset (seed 0; default 200)")
    scale.add_argument("--preset", action="append", help="preset to measure (repeatable; default fast and balanced)")
    scale.add_argument("--out", default=".bench/scale", help="output folder (also holds the embedding cache)")
    scale.set_defaults(run=_cmd_bench_scale)


def _cmd_bench_scale(args: argparse.Namespace) -> int:
    from toolret.eval.scale_bench import run_bench as run_scale_bench

    try:
        sizes = [int(part) for part in args.sizes.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--sizes expects comma-separated integers, got {args.sizes!r}") from None
    if not sizes or min(sizes) < 1:
        raise ConfigError("--sizes needs at least one positive size")
    run_scale_bench(
        args.datasets_root,
        args.out,
        sizes=sizes,
        datasets=args.datasets.split(","),
        per_dataset=args.queries,
        presets=dedupe(args.preset or ["fast", "balanced"]),
    )
    return 0


def _run_bench(args: argparse.Namespace) -> int:
    """``toolret bench``: the runner is imported when the verb runs, not when the parser is built
    (every ``toolret search`` builds it: README's cold start)."""
    from toolret.eval.bench import run_bench

    return run_bench(args)
