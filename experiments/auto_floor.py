"""Calibrate and measure k="auto"'s relevance floor (toolret.search.relevance_floor).

Every dev set of ../shared/benchmarks (each folder with a tools.jsonl) gets one knowledge base
(tool texts embedded once, cached under --out). Against it, with k="auto" and the floor off, the
script records each request's floor signals (as ``floor_signals`` computes them: the chosen set's
best similarity, the cosine with every chit-chat prototype, the share of unknown words) and its
TRACC. The requests:

* in scope: a sample of the set's own requests; where the set has a training split
  (train_queries.jsonl), a sample of it too: settings are chosen on the training split and
  reported on the test split (queries.jsonl);
* out of scope: the other intent sets' requests (banking77, hwu64 and snips: each is in scope of
  its own registry and out of scope of the others'; the labels are the datasets', so a weather
  request of snips asked of hwu64, which has a weather tool, still counts as out of scope), and
  every folder's out_of_scope.jsonl where there is one;
* chit-chat: OFF_TOPIC (greetings, thanks, general questions) against every registry, and
  OFF_TOPIC_HELDOUT, written after the first calibration and never used to choose.

The calibration (:func:`calibrate`) picks, on a grid, the setting that empties the most
out-of-scope and chit-chat requests while emptying at most ``--target`` of the in-scope requests of
*every* dev set (training splits where they exist), and checks the choice leaving one registry out
(DESIGN §2b): chosen on the other registries, does the left-out one keep its in-scope requests? It
prints the per-set table (before -> after) and writes it as JSON beside the measurement.
``--from-json`` re-scores a saved measurement without searching again
(docs/decisions/2026-11-27-auto-floor-natural-requests.md: --target 0.005, 300 requests a set).

    python experiments/auto_floor.py --embedder packaged:toolret-embed-mini --out .bench/auto_floor
    python experiments/auto_floor.py --from-json .bench/auto_floor/toolret-embed-mini.json --out .bench/auto_floor
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from toolret import RetrievalConfig, ToolKnowledgeBase
from toolret.eval.bench import CachedIndexing
from toolret.eval.datasets import EvalQuery, load_dataset, sample_queries
from toolret.eval.folds import registry_folds
from toolret.eval.metrics import tracc
from toolret.index.framework_embedding import embed_queries
from toolret.index.lexical import analyze_query
from toolret.scoring.evidence import query_evidence, registry_df
from toolret.search.relevance_floor import NULL_PROTOTYPES, FloorSettings

BENCH = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
#: Registries whose requests are out of scope of each other's (the intent sets, FORMAT.md).
INTENT_SETS = ("banking77", "hwu64", "snips")
TRAIN_FILE = "train_queries.jsonl"
OUT_OF_SCOPE_FILE = "out_of_scope.jsonl"

#: Requests no tool of a task registry serves: greetings, chit-chat, thanks, opinions, general
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

#: A second chit-chat set, written after the first settings were chosen and never used to choose them.
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


def _read_queries(path: Path) -> list[EvalQuery]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [EvalQuery(id=r["id"], query=r["query"], relevant=r["relevant"] or ["-"]) for r in rows]


def _folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if (p / "tools.jsonl").is_file())


def _requests(root: Path, name: str, limit: int) -> list[dict[str, Any]]:
    """Every request asked of registry ``name``: (kind, split, source set, query)."""
    out: list[dict[str, Any]] = []
    folder = root / name
    test = load_dataset(folder).queries
    out += [{"kind": "in", "split": "test", "src": name, "q": q} for q in sample_queries(test, limit)]
    if (folder / TRAIN_FILE).is_file():
        train = sample_queries(_read_queries(folder / TRAIN_FILE), limit)
        out += [{"kind": "in", "split": "train", "src": name, "q": q} for q in train]
    if (folder / OUT_OF_SCOPE_FILE).is_file():
        oos = _read_queries(folder / OUT_OF_SCOPE_FILE)
        out += [{"kind": "oos", "split": "test", "src": name, "q": q} for q in sample_queries(oos, limit)]
    if name in INTENT_SETS:
        for other in INTENT_SETS:
            if other == name or not (root / other).is_dir():
                continue
            half = limit // 2  # two other registries: as many out-of-scope requests as in-scope ones
            test_other = sample_queries(load_dataset(root / other).queries, half, seed=1)
            out += [{"kind": "oos", "split": "test", "src": other, "q": q} for q in test_other]
            train_other = sample_queries(_read_queries(root / other / TRAIN_FILE), half, seed=1)
            out += [{"kind": "oos", "split": "train", "src": other, "q": q} for q in train_other]
    for kind, texts in (("chat", OFF_TOPIC), ("chat_heldout", OFF_TOPIC_HELDOUT)):
        out += [
            {
                "kind": kind,
                "split": "all",
                "src": "off_topic",
                "q": EvalQuery(id=f"{kind}-{i}", query=t, relevant=["-"]),
            }
            for i, t in enumerate(texts)
        ]
    return out


def measure(root: Path, embedder: str, preset: str, limit: int, out_dir: Path, only: list[str] | None) -> dict:
    """Search every request of every set with k="auto", floor off; record the floor's signals."""
    config = RetrievalConfig.preset(preset).with_(auto_floor=None)
    cached = CachedIndexing(out_dir / f"embeddings-{_slug(embedder)}.npz", embedder)
    report: dict[str, Any] = {"embedder": cached.name, "preset": preset, "limit": limit, "sets": {}}
    report["prototypes"] = list(NULL_PROTOTYPES)
    protos = embed_queries(cached, list(NULL_PROTOTYPES))
    for folder in _folders(root):
        if only and folder.name not in only:
            continue
        start = time.perf_counter()
        data = load_dataset(folder)
        cached.indexing = True
        kb = ToolKnowledgeBase(None, config=config, embedder=cached)
        kb.add(data.tool_docs(), progress=False)
        cached.indexing = False
        cached.cache.save()
        df, n_docs = registry_df(kb._writer.snapshot)
        rows = []
        for item in _requests(root, folder.name, limit):
            q: EvalQuery = item["q"]
            result = kb.search(q.query, k="auto")
            qvec = embed_queries(cached, [result.query])[0]  # the text searched
            tokens = analyze_query(result.query)
            oov = query_evidence(result.query, tokens, df, n_docs).oov_share if tokens else 1.0
            rows.append(
                {
                    "kind": item["kind"],
                    "split": item["split"],
                    "src": item["src"],
                    "query": q.query,
                    "best": round(max((t.similarity for t in result.tools), default=0.0), 4),
                    "cos": [round(float(c), 4) for c in protos @ qvec],
                    "oov": round(oov, 4),
                    "n": len(result.ids),
                    "tracc": round(tracc(q.relevant, result.ids), 4) if item["kind"] == "in" else None,
                }
            )
        kb.close()
        report["sets"][folder.name] = {"tools": len(data.tools), "rows": rows}
        print(
            f"{folder.name}: {len(data.tools)} tools, {len(rows)} requests, {time.perf_counter() - start:.0f}s",
            flush=True,
        )
    return report


#: The settings before this calibration, over the prototypes they were chosen with (the first forty).
PREVIOUS = {
    "packaged:toolret-embed-mini": FloorSettings(margin=0.10, oov_share=0.7, weak_similarity=0.30),
    "packaged:all-MiniLM-L6-v2-onnx-int8": FloorSettings(margin=0.22, oov_share=0.9, weak_similarity=0.30),
}
PREVIOUS_PROTOTYPES = 40

#: The grid the calibration searches, FloorSettings' fields (None: that rule or guard is off).
GRID: dict[str, list[Any]] = {
    "margin": [round(float(m), 2) for m in np.arange(0.0, 0.62, 0.02)] + [None],
    "oov_share": [0.5, 0.7, 0.8, 0.9, 1.0],
    "weak_similarity": [round(float(w), 3) for w in np.arange(0.0, 0.45, 0.025)],
}


class Table:
    """Every row of a measurement as arrays, and which rows each figure is a share of."""

    def __init__(self, report: dict) -> None:
        self.sets = list(report["sets"])
        rows = [(i, r) for i, s in enumerate(self.sets) for r in report["sets"][s]["rows"]]
        self.set_of = np.array([i for i, _ in rows])
        kind = np.array([r["kind"] for _, r in rows])
        split = np.array([r["split"] for _, r in rows])
        self.best = np.array([r["best"] for _, r in rows])
        self.oov = np.array([r["oov"] for _, r in rows])
        self.cos = np.array([r["cos"] for _, r in rows])
        self.tracc = np.array([np.nan if r["tracc"] is None else r["tracc"] for _, r in rows])
        trained = {i for i, r in rows if r["split"] == "train" and r["kind"] == "in"}
        choose_split = np.array(
            [(sp == "train") if i in trained else sp != "train" for i, sp in zip(self.set_of, split)]
        )
        #: The rows each figure is a share of: in scope for choosing (a set's training split where it
        #: has one) and for reporting (its test split), out of scope likewise, and chit-chat.
        self.groups = {
            "in_choose": (kind == "in") & choose_split,
            "in_test": (kind == "in") & (split == "test"),
            "oos_choose": (kind == "oos") & choose_split,
            "oos_test": (kind == "oos") & (split == "test"),
            "chat": kind == "chat",
            "chat_heldout": kind == "chat_heldout",
        }

    def null(self, prototypes: int | None = None) -> np.ndarray:
        """Each row's chit-chat likeness over the first ``prototypes`` prototypes (None: all)."""
        return self.cos[:, :prototypes].max(axis=1)

    def emptied(self, floor: FloorSettings, prototypes: int | None = None) -> np.ndarray:
        null = self.null(prototypes)
        return np.array([floor.empties(best=b, null=n, oov=o) for b, n, o in zip(self.best, null, self.oov)])

    def share(self, emptied: np.ndarray, group: str) -> np.ndarray:
        """Per set, the share of the group's rows emptied (nan where a set has none)."""
        rows = self.groups[group]
        n = np.bincount(self.set_of[rows], minlength=len(self.sets)).astype(float)
        k = np.bincount(self.set_of[rows & emptied], minlength=len(self.sets)).astype(float)
        return np.where(n > 0, k / np.maximum(n, 1), np.nan)

    def figures(self, floor: FloorSettings, prototypes: int | None = None) -> dict[str, np.ndarray]:
        emptied = self.emptied(floor, prototypes)
        out = {group: self.share(emptied, group) for group in self.groups}
        rows = self.groups["in_test"]
        n = np.bincount(self.set_of[rows], minlength=len(self.sets)).astype(float)
        for label, values in (("tracc_off", self.tracc), ("tracc_on", np.where(emptied, 0.0, self.tracc))):
            total = np.bincount(self.set_of[rows], weights=values[rows], minlength=len(self.sets))
            out[label] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
        return out


class Grid:
    """Every grid setting's share emptied per set and group, computed at once: a setting empties a
    request by the chit-chat rule or the unknown-words rule, so its count is the two rules' counts
    less the requests both empty (a product of two boolean matrices per set)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        null = table.null()
        self.chat_rules = GRID["margin"]
        self.word_rules = list(itertools.product(GRID["oov_share"], GRID["weak_similarity"]))
        chat = np.array([null - table.best > (9.0 if m is None else m) for m in self.chat_rules])
        words = np.array([(table.oov >= o) & (table.best < w) for o, w in self.word_rules])
        self.shares: dict[str, np.ndarray] = {}
        for group, rows in table.groups.items():
            out = np.full((len(table.sets), len(self.chat_rules), len(self.word_rules)), np.nan, dtype=np.float32)
            for i in range(len(table.sets)):
                mine = rows & (table.set_of == i)
                if mine.any():
                    c, w = chat[:, mine].astype(np.float32), words[:, mine].astype(np.float32)
                    out[i] = (c.sum(1)[:, None] + w.sum(1)[None, :] - c @ w.T) / mine.sum()
            self.shares[group] = out

    def setting(self, a: int, b: int) -> FloorSettings:
        oov_share, weak = self.word_rules[b]
        return FloorSettings(margin=self.chat_rules[a], oov_share=oov_share, weak_similarity=weak)

    def choose(self, sets: np.ndarray, target: float) -> FloorSettings | None:
        """The setting emptying the most chit-chat and out-of-scope requests of the registries ``sets``
        (their mean shares, the two counted alike) while emptying at most ``target`` of each one's
        in-scope requests (None: no setting does)."""
        worst = np.nanmax(self.shares["in_choose"][sets], axis=0)
        chat = np.nanmean(self.shares["chat"][sets], axis=0)
        oos = self.shares["oos_choose"][sets]
        off = (chat + np.nanmean(oos, axis=0)) / 2 if np.isfinite(oos).any() else chat
        score = np.where(worst <= target, off, -1.0)
        a, b = np.unravel_index(int(np.argmax(score)), score.shape)
        return None if score[a, b] < 0 else self.setting(int(a), int(b))


def calibrate(report: dict, target: float) -> dict[str, Any]:
    """The setting chosen on every set, its figures per set against the previous one's, and the
    leave-one-registry-out check: chosen without a registry, what happens to that registry."""
    table = Table(report)
    grid = Grid(table)
    chosen = grid.choose(np.ones(len(table.sets), dtype=bool), target)
    if chosen is None:
        raise SystemExit(f"no setting empties at most {target:.1%} of every set's in-scope requests")
    lodo: dict[str, Any] = {}
    for members in registry_folds(table.sets).values():
        floor = grid.choose(np.array([s not in members for s in table.sets]), target)
        fig = table.figures(floor) if floor is not None else None
        for s in members:
            lodo[s] = {"settings": floor and floor.__dict__, **(_row(fig, table.sets.index(s)) if fig else {})}
    previous = PREVIOUS.get(report["embedder"])
    before = table.figures(previous, PREVIOUS_PROTOTYPES) if previous else None
    after = table.figures(chosen)
    return {
        "embedder": report["embedder"],
        "target": target,
        "before": previous
        and {"settings": previous.__dict__, "sets": {s: _row(before, i) for i, s in enumerate(table.sets)}},
        "after": {"settings": chosen.__dict__, "sets": {s: _row(after, i) for i, s in enumerate(table.sets)}},
        "lodo": lodo,
    }


def _row(fig: dict[str, np.ndarray] | None, i: int) -> dict[str, float | None]:
    if fig is None:
        return {}
    return {k: (None if not np.isfinite(v[i]) else round(float(v[i]), 4)) for k, v in fig.items()}


def markdown(result: dict[str, Any]) -> str:
    """The per-set table docs/method.md and the decision record quote (before -> after)."""

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}"

    def pair(key: str, s: str) -> str:
        before = result["before"]["sets"][s][key] if result["before"] else None
        return f"{pct(before)} -> {pct(result['after']['sets'][s][key])}"

    lines = [
        f"{result['embedder']}: before {result['before'] and result['before']['settings']}, "
        f"after {result['after']['settings']} (chosen with at most {result['target']:.1%} of every set's "
        "in-scope requests emptied)",
        "",
        "| set | in scope emptied % (test) | (choose) | out of scope emptied % | chit-chat % | held-out chit-chat % "
        "| TRACC off | TRACC on | left out: in scope emptied % |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    after = result["after"]["sets"]
    for s, row in after.items():
        before = result["before"]["sets"][s]["tracc_on"] if result["before"] else None
        lines.append(
            f"| {s} | {pair('in_test', s)} | {pair('in_choose', s)} | {pair('oos_test', s)} | {pair('chat', s)} | "
            f"{pair('chat_heldout', s)} | {row['tracc_off']:.3f} | {'-' if before is None else f'{before:.3f}'} -> "
            f"{row['tracc_on']:.3f} | {pct(result['lodo'][s].get('in_test'))} |"
        )
    means = {
        k: np.nanmean([v[k] for v in after.values() if v[k] is not None]) for k in ("chat", "chat_heldout", "oos_test")
    }
    lines.append(
        f"\nmean after: chit-chat emptied {100 * means['chat']:.1f} %, held-out {100 * means['chat_heldout']:.1f} %, "
        f"out of scope {100 * means['oos_test']:.1f} %; worst left-out in-scope emptied "
        f"{100 * max(v.get('in_test') or 0.0 for v in result['lodo'].values()):.1f} %"
    )
    return "\n".join(lines)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name.removeprefix("packaged:"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="packaged:toolret-embed-mini")
    parser.add_argument("--preset", default="fast")
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--out", default=".bench/auto_floor")
    parser.add_argument("--only", action="append", help="measure only this set (repeatable)")
    parser.add_argument("--target", type=float, default=0.005, help="most in-scope requests emptied on any set")
    parser.add_argument("--from-json", help="calibrate from a saved measurement instead of searching again")
    args = parser.parse_args()
    if args.from_json:
        rep = json.loads(Path(args.from_json).read_text())
    else:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        rep = measure(BENCH, args.embedder, args.preset, args.limit, out, args.only)
        (out / f"{_slug(rep['embedder'])}.json").write_text(json.dumps(rep))
    result = calibrate(rep, args.target)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / f"calibration-{_slug(rep['embedder'])}.json").write_text(json.dumps(result, indent=1))
    print(markdown(result))
