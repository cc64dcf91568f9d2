"""The ``toolret doctor`` verb: its arguments here; the checks (:mod:`toolret.eval.doctor`) load when it runs.

    toolret doctor --kb tools.kb [--json OUT] [--llm MODEL [--base-url URL]] [--preset P] [--rows N]

Prints the tools with findings and each finding; ``--json OUT`` writes the whole report. The exit
status is 0 whatever it finds (a finding is advice, not a failure); a missing knowledge base is an
error (status 2), as for every verb.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_doctor_parser", "run_doctor"]


def add_doctor_parser(verbs: Any) -> None:
    """Add ``doctor`` to the ``toolret`` command's sub-parsers."""
    doctor = verbs.add_parser(
        "doctor",
        help="is my registry retrievable? near-duplicates, thin descriptions, heavy definitions, "
        "name collisions, tools their own requests do not reach",
    )
    doctor.add_argument("--kb", required=True, help="knowledge base directory built by `toolret index`")
    doctor.add_argument("--json", metavar="OUT", help="write the report (every finding with its tool ids) as JSON")
    doctor.add_argument(
        "--llm",
        metavar="MODEL",
        help="an OpenAI-compatible model writes each tool's requests (default: the questions the knowledge "
        "base holds, else two made offline from each tool's documentation)",
    )
    doctor.add_argument("--base-url", help="the --llm server's URL (default: OpenAI's; $OPENAI_API_KEY)")
    doctor.add_argument("--preset", default=None, help="search preset of the reach check (default: the kb's)")
    doctor.add_argument("--rows", type=int, default=40, help="tools shown in the table (default: 40)")
    doctor.set_defaults(run=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    from toolret import ToolKnowledgeBase
    from toolret.eval.doctor import diagnose

    kb = ToolKnowledgeBase.load(args.kb)  # a missing or empty directory is a KnowledgeBaseError naming it
    llm = None
    if args.llm:
        from toolret.llm import OpenAICompatibleLLM

        llm = OpenAICompatibleLLM(args.llm, base_url=args.base_url)
    bar = _bar(len(kb))
    try:
        report = diagnose(kb, llm=llm, config=args.preset, progress=bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    print(report.table(limit=args.rows))
    if args.json:
        Path(args.json).write_text(json.dumps(report.as_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote the report to {args.json}")
    return 0


def _bar(total: int) -> Any:
    """A progress bar on stderr when it is a terminal (the reach check searches every tool's requests)."""
    if not sys.stderr.isatty():
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="searching each tool's requests", unit="tool", file=sys.stderr)
