"""Cold-start benchmark (docs/storage.md, "Cold start").

Builds the 652-tool standard-library knowledge base once (.bench/cold/stdlib.kb), then runs
RUNS fresh processes that each time `import toolret`, `ToolKnowledgeBase.load`, a first and
a second `search`, and RUNS `toolret search --kb KB QUERY -k 3` CLI calls (process wall).
Prints every run and the median / best of each column. Usage: python .bench/cold.py [RUNS [KB]]
(KB: another saved knowledge base, e.g. a copy for the code before a change, run with its PYTHONPATH).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
KB = ROOT / "cold" / "stdlib.kb"
QUERY = "split a file path into its directory and file name"

CHILD = r"""
import sys, time, json
t0 = time.perf_counter()
import toolret
from toolret import ToolKnowledgeBase
t1 = time.perf_counter()
kb = ToolKnowledgeBase.load(sys.argv[1])
t2 = time.perf_counter()
r1 = kb.search(sys.argv[2], k=3)
t3 = time.perf_counter()
r2 = kb.search("what is the factorial of 12?", k=3)
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "second": t4 - t3,
                  "chromadb": "chromadb" in sys.modules, "torch": "torch" in sys.modules,
                  "top": [t.id for t in r1.tools]}))
"""


def build() -> None:
    if (KB / "toolret.json").exists():
        return
    from toolret import ToolKnowledgeBase
    from toolret.sources.stdlib_registry import stdlib_tools

    kb = ToolKnowledgeBase(KB)
    kb.add(stdlib_tools(), progress=False)
    kb.save()
    print(f"built {KB} ({len(kb)} tools)")


def main() -> None:
    global KB
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    if len(sys.argv) > 2:
        KB = Path(sys.argv[2])
    build()
    env = dict(os.environ)
    rows = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD, str(KB), QUERY], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if out.returncode:
            sys.exit(out.stderr)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        row["wall"] = wall
        rows.append(row)
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items() if k != "top"}))
    cli = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "toolret.cli", "search", "--kb", str(KB), QUERY, "-k", "3"],
            capture_output=True,
            text=True,
            env=env,
        )
        cli.append(time.perf_counter() - start)
        if out.returncode:
            sys.exit(out.stderr)
    print("cli walls:", " ".join(f"{c:.2f}" for c in cli))
    print("top-3:", rows[0]["top"])
    print("load average:", os.getloadavg())
    for key in ("import", "load", "first", "second", "wall"):
        values = [r[key] for r in rows]
        print(f"{key:7s} median {statistics.median(values):.3f} s  best {min(values):.3f} s")
    print(f"cli     median {statistics.median(cli):.3f} s  best {min(cli):.3f} s")
    print("chromadb imported:", rows[0]["chromadb"], " torch imported:", rows[0]["torch"])


if __name__ == "__main__":
    main()
