"""Calibrate and measure k="auto"'s relevance floor (toolret.retrieval.relevance_floor).

For every dev set of ../shared/benchmarks: a 200-query sample (seed 0) searched with k="auto" and the
floor off, recording each request's recall of the chosen set and the best raw cosine in that set; the
same for OFF_TOPIC (greetings, chit-chat, general questions no registry's tool serves) against every
registry. The floor is the highest value (0.005 grid) that keeps >= 99 % of the floor-off recall on
every dev set; the report gives, at that floor, each set's recall kept and the share of off-topic
requests that get no tools.

    python experiments/auto_floor.py --embedder packaged:all-MiniLM-L6-v2-onnx-int8 --out .bench/auto_floor.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from toolret import RetrievalConfig, ToolKnowledgeBase
from toolret.eval.datasets import load_dataset
from toolret.eval.folds import DEV_SETS

BENCH = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"

#: Requests no tool of any dev registry serves: greetings, chit-chat, thanks, opinions, general
#: knowledge an LLM answers itself. Written for this measurement, not taken from a benchmark.
OFF_TOPIC = [
    "hi",
    "hello there!",
    "hey, how are you doing today?",
    "good morning",
    "good night, talk to you tomorrow",
    "thanks a lot, that was helpful",
    "thank you so much!",
    "ok",
    "okay, got it",
    "cool",
    "lol that's funny",
    "bye!",
    "see you later",
    "who are you?",
    "what's your name?",
    "are you a robot?",
    "do you have feelings?",
    "tell me about yourself",
    "what can you do?",
    "I'm bored",
    "I feel a bit sad today",
    "that's not what I meant",
    "never mind",
    "sorry, my mistake",
    "can you say that again?",
    "what is the meaning of life?",
    "why is the sky blue?",
    "who wrote Romeo and Juliet?",
    "what is the capital of France?",
    "how many legs does a spider have?",
    "what is photosynthesis?",
    "explain the theory of relativity in simple terms",
    "who was the first president of the United States?",
    "what's the difference between a virus and a bacterium?",
    "is a tomato a fruit or a vegetable?",
    "what does 'ephemeral' mean?",
    "tell me a joke",
    "write me a short poem about autumn",
    "what's your favourite colour?",
    "do you like music?",
    "which is better, cats or dogs?",
    "what do you think about philosophy?",
    "summarize the plot of Hamlet",
    "how do I become a better person?",
    "give me some advice on being more productive",
    "what is love?",
    "why do we dream?",
    "how old is the universe?",
    "what is the largest ocean on earth?",
    "can you keep a secret?",
]


def _recall(relevant: list[str], chosen: list[str]) -> float:
    return len(set(relevant) & set(chosen)) / len(set(relevant))


def measure(embedder: str, preset: str, limit: int) -> dict[str, object]:
    config = RetrievalConfig.preset(preset).with_(auto_floor=None)
    out: dict[str, object] = {"embedder": embedder, "preset": preset, "limit": limit, "sets": {}}
    for name in DEV_SETS:
        start = time.perf_counter()
        data = load_dataset(BENCH / name).sample(limit, seed=0)
        kb = ToolKnowledgeBase(embedder=embedder, config=config)
        kb.add(data.tool_docs(), progress=False)
        rows = []
        for q in data.queries:
            result = kb.search(q.query, k="auto")
            best = max((t.similarity for t in result.tools), default=0.0)
            rows.append({"recall": _recall(q.relevant, result.ids), "best": best, "n": len(result.ids)})
        off = []
        for text in OFF_TOPIC:
            result = kb.search(text, k="auto")
            off.append({"best": max((t.similarity for t in result.tools), default=0.0), "n": len(result.ids)})
        kb.close()
        out["sets"][name] = {"tools": len(data.tools), "queries": rows, "off_topic": off}  # type: ignore[index]
        print(f"{name}: {len(data.tools)} tools, {len(rows)} queries, {time.perf_counter() - start:.0f}s", flush=True)
    return out


def calibrate(report: dict[str, object], keep: float = 0.99) -> dict[str, object]:
    sets = report["sets"]
    grid = np.round(np.arange(0.0, 0.8, 0.005), 3)
    best_floor = 0.0
    for floor in grid:
        ok = True
        for data in sets.values():  # type: ignore[union-attr]
            base = np.mean([r["recall"] for r in data["queries"]])
            kept = np.mean([r["recall"] if r["best"] >= floor else 0.0 for r in data["queries"]])
            ok &= kept >= keep * base - 1e-12
        if not ok:
            break
        best_floor = float(floor)
    table = {}
    all_off = []
    for name, data in sets.items():  # type: ignore[union-attr]
        base = float(np.mean([r["recall"] for r in data["queries"]]))
        kept = float(np.mean([r["recall"] if r["best"] >= best_floor else 0.0 for r in data["queries"]]))
        empty_dev = float(np.mean([r["best"] < best_floor for r in data["queries"]]))
        empty_off = [o["best"] < best_floor for o in data["off_topic"]]
        all_off += empty_off
        table[name] = {
            "recall_floor_off": round(base, 4),
            "recall_with_floor": round(kept, 4),
            "kept_share": round(kept / base, 4) if base else 1.0,
            "dev_requests_emptied": round(empty_dev, 4),
            "off_topic_empty": round(float(np.mean(empty_off)), 4),
        }
    return {
        "floor": best_floor,
        "keep": keep,
        "sets": table,
        "off_topic_empty_overall": round(float(np.mean(all_off)), 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="packaged:all-MiniLM-L6-v2-onnx-int8")
    parser.add_argument("--preset", default="fast")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--out", default=".bench/auto_floor.json")
    parser.add_argument("--from-json", help="recalibrate from a saved measurement instead of searching again")
    args = parser.parse_args()
    if args.from_json:
        report = json.loads(Path(args.from_json).read_text())
    else:
        report = measure(args.embedder, args.preset, args.limit)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report))
    print(json.dumps(calibrate(report), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
