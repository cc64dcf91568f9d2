"""Calibrate and measure k="auto"'s relevance floor (toolret.retrieval.relevance_floor).

For every dev set of ../shared/benchmarks: a 200-query sample (seed 0) searched with k="auto" and the
floor off, recording each request's recall of the chosen set and the floor's signals
(``floor_signals``: best chosen tool's similarity, chit-chat likeness, unknown-word share); the same
for OFF_TOPIC (greetings, chit-chat, general questions no registry's tool serves; other sentences
than the floor's NULL_PROTOTYPES) against every registry. The settings chosen are those, on a grid,
that empty the most off-topic requests (mean over registries) while keeping >= 99 % of the
floor-off recall on every dev set; the report gives each set's recall kept and off-topic share
emptied at those settings.

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
from toolret.retrieval.relevance_floor import CALIBRATED, FloorSettings, floor_signals

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


#: A second off-topic set, written after the settings were chosen and never used to choose them:
#: the figure it gives is the held-out one.
OFF_TOPIC_HELDOUT = [
    "yo!",
    "morning! how was your weekend?",
    "cheers mate",
    "appreciate the help",
    "fine, whatever",
    "wow",
    "talk soon",
    "are you there?",
    "what model are you?",
    "can you think?",
    "I had a long day at work",
    "you misunderstood me",
    "hmm, let me think about it",
    "which planet is closest to the sun?",
    "who discovered penicillin?",
    "what is the boiling point of water?",
    "why do cats purr?",
    "how many continents are there?",
    "what language do people speak in Brazil?",
    "when was the printing press invented?",
    "what is an atom made of?",
    "explain what inflation is",
    "tell me a fun fact",
    "make up a riddle for me",
    "write a limerick about a frog",
    "what's better, tea or coffee?",
    "do you believe in luck?",
    "what would you do with a million dollars?",
    "how do I stop procrastinating?",
    "what makes a good friend?",
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
        snap = kb._writer.snapshot
        rows = []
        for q in data.queries:
            result = kb.search(q.query, k="auto")
            best, null, oov = floor_signals(result.query, result.tools, snap, kb.embedder)  # the text searched
            rows.append({"recall": _recall(q.relevant, result.ids), "best": best, "null": null, "oov": oov})
        off, heldout = [], []
        for texts, rows_out in ((OFF_TOPIC, off), (OFF_TOPIC_HELDOUT, heldout)):
            for text in texts:
                result = kb.search(text, k="auto")
                best, null, oov = floor_signals(result.query, result.tools, snap, kb.embedder)
                rows_out.append({"best": best, "null": null, "oov": oov, "n": len(result.ids)})
        kb.close()
        out["sets"][name] = {"tools": len(data.tools), "queries": rows, "off_topic": off, "heldout": heldout}  # type: ignore[index]
        print(f"{name}: {len(data.tools)} tools, {len(rows)} queries, {time.perf_counter() - start:.0f}s", flush=True)
    return out


def _table(sets: dict, floor: FloorSettings) -> dict[str, dict[str, float]]:
    table = {}
    for name, data in sets.items():
        base = float(np.mean([r["recall"] for r in data["queries"]]))
        kept = [
            0.0 if floor.empties(best=r["best"], null=r["null"], oov=r["oov"]) else r["recall"] for r in data["queries"]
        ]
        emptied = [floor.empties(best=o["best"], null=o["null"], oov=o["oov"]) for o in data["off_topic"]]
        held = [floor.empties(best=o["best"], null=o["null"], oov=o["oov"]) for o in data.get("heldout", [])]
        table[name] = {
            "recall_floor_off": round(base, 4),
            "recall_with_floor": round(float(np.mean(kept)), 4),
            "kept_share": round(float(np.mean(kept)) / base, 4) if base else 1.0,
            "dev_requests_emptied": round(
                float(np.mean([floor.empties(best=r["best"], null=r["null"], oov=r["oov"]) for r in data["queries"]])),
                4,
            ),
            "off_topic_empty": round(float(np.mean(emptied)), 4),
            "heldout_off_topic_empty": round(float(np.mean(held)), 4) if held else None,
        }
    return table


def calibrate(report: dict, keep: float = 0.99) -> dict[str, object]:
    """The grid setting emptying the most off-topic requests with >= ``keep`` of the recall on every set."""
    sets = report["sets"]
    best: tuple[float, FloorSettings] | None = None
    for margin in np.round(np.arange(-0.1, 0.41, 0.02), 2):
        for oov_share in (0.5, 0.7, 0.8, 0.9, 1.0, 1.01):
            for weak in (0.2, 0.25, 0.3, 0.35, 0.4):
                floor = FloorSettings(float(margin), oov_share, weak)
                table = _table(sets, floor)
                if min(t["kept_share"] for t in table.values()) < keep:
                    continue
                score = float(np.mean([t["off_topic_empty"] for t in table.values()]))
                if best is None or score > best[0]:
                    best = (score, floor)
    assert best is not None
    floor = best[1]
    table = _table(sets, floor)
    return {
        "settings": floor.__dict__,
        "keep": keep,
        "sets": table,
        "off_topic_empty_mean": round(best[0], 4),
        "off_topic_empty_min": min(t["off_topic_empty"] for t in table.values()),
        "kept_share_min": min(t["kept_share"] for t in table.values()),
        "heldout_off_topic_empty_mean": round(
            float(np.mean([t["heldout_off_topic_empty"] or 0.0 for t in table.values()])), 4
        ),
        "shipped": _table(sets, CALIBRATED[report["embedder"]]) if report["embedder"] in CALIBRATED else None,
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
