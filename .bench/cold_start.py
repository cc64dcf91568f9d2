"""Cold start of `toolret search` against the floor of its own dependencies (README, "Cold start").

Builds a knowledge base of the 199 ToolE tools (``../shared/benchmarks/toole_single/tools.jsonl``)
in a temporary directory with ``toolret index``, then runs RUNS rounds, each of which starts, in
turn, three fresh processes and times their wall clock:

* floor: ``python -c 'import numpy, onnxruntime, pydantic, tokenizers'`` (what any torch-free
  embedding search must import);
* import: ``python -c 'import toolret'``;
* search: ``toolret search --kb KB QUERY -k 5`` (a different ToolE query each round).

The three are interleaved so a busy machine slows all of them alike. Prints each round, the
median of each column (wall clock, and CPU time: user + system, steadier on a shared machine)
and the ratio search / floor of the medians. Usage: ``python .bench/cold_start.py [RUNS] [--json OUT]`` (``make bench-cold``).
Exit status 1 when the median ratio is above ``--max-ratio`` (default: none).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATASET = REPO.parent / "shared" / "benchmarks" / "toole_single"
FLOOR = "import numpy, onnxruntime, pydantic, tokenizers"


def _toolret_cmd() -> list[str]:
    """The installed ``toolret`` script beside this Python, as a user runs it; else ``python -m toolret.cli``."""
    script = Path(sys.executable).parent / "toolret"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "toolret.cli"]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh process: CPU time varies less than wall on a busy machine."""
    cpu, start = _cpu(), time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    if out.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return wall, _cpu() - cpu


def _queries(n: int) -> list[str]:
    lines = (DATASET / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    step = max(1, len(lines) // max(n, 1))
    return [json.loads(lines[i * step % len(lines)])["query"] for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, default=9)
    parser.add_argument("--json", type=Path, help="write the rounds and medians here")
    parser.add_argument("--max-ratio", type=float, help="exit 1 when median(search) / median(floor) exceeds it")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="also time `toolret search` with PYTHONPATH=BASELINE (another checkout's shared/) in each round",
    )
    args = parser.parse_args()
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    toolret = _toolret_cmd()
    import importlib.util

    spec = importlib.util.find_spec("toolret")
    package = Path(spec.origin).parent if spec and spec.origin else None
    cached = package is not None and any(package.glob("__pycache__/cli.*.pyc"))
    print(f"toolret from {package} ({'bytecode cached' if cached else 'no cached bytecode: each process compiles'})")
    tmp = Path(tempfile.mkdtemp(prefix="toolret-cold-"))
    try:
        kb = tmp / "toole.kb"
        start = time.perf_counter()
        subprocess.run(
            [*toolret, "index", str(DATASET / "tools.jsonl"), "--kb", str(kb)], check=True, env=env, capture_output=True
        )
        print(f"indexed {DATASET / 'tools.jsonl'} into {kb} in {time.perf_counter() - start:.1f} s")
        _run([*toolret, "search", "--kb", str(kb), "warm the page cache", "-k", "5"], env)
        rows = []
        for i, query in enumerate(_queries(args.runs)):
            row: dict[str, float] = {}
            search = [*toolret, "search", "--kb", str(kb), query, "-k", "5"]
            for key, cmd in (
                ("floor", [sys.executable, "-c", FLOOR]),
                ("import", [sys.executable, "-c", "import toolret"]),
                ("search", search),
            ):
                row[key], row[f"{key}_cpu"] = _run(cmd, env)
            if args.baseline:
                row["baseline"], row["baseline_cpu"] = _run(search, dict(env, PYTHONPATH=str(args.baseline)))
            row["ratio"] = row["search"] / row["floor"]
            row["ratio_cpu"] = row["search_cpu"] / row["floor_cpu"]
            rows.append(row)
            print(f"round {i + 1}: " + "  ".join(f"{k} {v:.3f}" for k, v in row.items()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    medians = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    ratio = medians["search"] / medians["floor"]
    ratio_cpu = medians["search_cpu"] / medians["floor_cpu"]
    print(
        f"median wall of {len(rows)}: floor {medians['floor']:.3f} s, import toolret {medians['import']:.3f} s, "
        f"toolret search {medians['search']:.3f} s"
    )
    print(
        f"median CPU of {len(rows)}: floor {medians['floor_cpu']:.3f} s, import toolret {medians['import_cpu']:.3f} s, "
        f"toolret search {medians['search_cpu']:.3f} s"
    )
    if args.baseline:
        print(
            f"baseline {args.baseline}: toolret search wall {medians['baseline']:.3f} s "
            f"({medians['baseline'] / medians['floor']:.2f}x), CPU {medians['baseline_cpu']:.3f} s "
            f"({medians['baseline_cpu'] / medians['floor_cpu']:.2f}x)"
        )
    print(
        f"ratio search/floor: wall {ratio:.2f} (per-round median {medians['ratio']:.2f}, "
        f"range {min(r['ratio'] for r in rows):.2f}-{max(r['ratio'] for r in rows):.2f}); CPU {ratio_cpu:.2f}"
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        summary = {"rounds": rows, "medians": medians, "ratio": ratio, "ratio_cpu": ratio_cpu}
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    if args.max_ratio is not None and ratio > args.max_ratio:
        sys.exit(1)


if __name__ == "__main__":
    main()
