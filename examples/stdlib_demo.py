"""toolret demo: index the Python standard library as a tool registry, then ask for tools.

Runs fully offline: the registry is built from the signatures and docstrings of public
functions in modules that ship with Python (math, statistics, os.path, json, re, ...), and
the embedding model comes from a PyPI package. Run it with `make demo`; `--kb DIR` keeps the
knowledge base in DIR (e.g. for `toolret doctor --kb DIR` or `toolret search --kb DIR`) instead of
a temporary folder.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from toolret import ToolKnowledgeBase
from toolret.sources.stdlib_registry import stdlib_tools

REQUESTS = [
    "what is the factorial of 12?",
    "give me the median of these exam scores",
    "split a file path into its directory and file name",
    "parse this JSON string into a Python object",
    "wrap a long paragraph to 60 characters per line",
    "copy a whole directory tree to a backup folder",
    "pick a random element from a list",
    "how many days are there in February 2028?",
    "compute the SHA-256 digest of some bytes",
    "check whether 'report_*.csv' matches the file name report_2024.csv",
]


def main() -> int:
    parser = argparse.ArgumentParser(description="Index the standard library as a tool registry and search it.")
    parser.add_argument("--kb", help="keep the knowledge base in this folder (default: a temporary one)")
    args = parser.parse_args()
    tools = stdlib_tools()
    modules = sorted({t.metadata.get("module", t.name.rsplit(".", 1)[0]) for t in tools})
    print(f"Registry: {len(tools)} standard-library functions from {len(modules)} modules")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(args.kb) if args.kb else Path(folder) / "stdlib.kb"
        start = time.perf_counter()
        kb = ToolKnowledgeBase(path)
        kb.sync(tools, progress=True)  # a kept folder holds exactly the registry, re-embedding only what changed
        kb.save()
        print(f"Indexed in {time.perf_counter() - start:.1f}s -> {kb!r}\n")

        kb = ToolKnowledgeBase.load(path)  # reopen from disk, as an agent process would
        for request in REQUESTS:
            result = kb.search(request, k=3)
            print(f"> {request}   ({result.total_ms:.0f} ms)")
            for rank, tool in enumerate(result.tools, 1):
                fields = " ".join(f"{k[:4]}={v:.2f}" for k, v in tool.field_scores.items())
                penalty = f" penalty={tool.penalty:.3f}" if tool.penalty else ""
                print(f"   {rank}. {tool.name:<32} score={tool.score:.3f}  [{fields}]{penalty}")
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
